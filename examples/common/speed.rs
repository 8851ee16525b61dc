//! Shared by the speed examples (`reader_speed`, `timestamp_speed`): the process's CPU time
//! (printed beside wall-clock times because the machine may be shared) and the generated
//! TimeKiller history both read.

use isopredict::formats::timekiller;
use isopredict::generate::timestamped::{generate_timestamped, TsGenParams};

/// CPU time used so far by the whole process (all threads), in seconds.
pub fn process_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A history of `txns` transactions from the simulated timestamp SI store with the TimeKiller
/// paper's defaults (50 sessions, 1,000 keys, 15 operations a transaction, half reads; seed
/// 1), written as TimeKiller JSON.
pub fn timekiller_json(txns: u32) -> Vec<u8> {
    let generated = generate_timestamped(&TsGenParams {
        sessions: 50,
        txns,
        ops_per_txn: 15,
        keys: 1000,
        read_fraction: 0.5,
        seed: 1,
        ..Default::default()
    });
    let mut json = Vec::new();
    timekiller::write_timestamped(&generated, &mut json).expect("writing to memory");
    json
}
