use isopredict::check::Level;
use isopredict::ser::{check_serializable, SerVerdict};
use isopredict::store::ReadPolicy;
use isopredict::workloads::{by_name, run, RunConfig, Size};
fn main() {
    let w = by_name("voter").unwrap();
    for trial in 0..30u64 {
        let s = 1u64.wrapping_mul(1_000_003).wrapping_add(trial);
        let cfg = RunConfig {
            policy: ReadPolicy::Random {
                level: Level::Causal,
                seed: s,
            },
            schedule_seed: s,
            ..RunConfig::paper(1, Size::Small)
        };
        let r = run(w, &cfg).unwrap();
        let ser = matches!(
            check_serializable(&r.history, None),
            Ok(SerVerdict::Serializable { .. })
        );
        if !r.invariants_hold() && ser {
            println!("trial {trial}: {:?}", r.invariants);
            let mut out = Vec::new();
            r.store.write_trace(&mut out).unwrap();
            let t = String::from_utf8(out).unwrap();
            for l in t.lines().filter(|l| {
                !l.contains("Txn(0, 0)") && (l.contains("INSERT") || l.contains("Set("))
            }) {
                println!("{l}");
            }
            break;
        }
    }
}
