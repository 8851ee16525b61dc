//! The prediction table of docs/prediction.md: every shipped IsoPredict trace × strategy ×
//! level, with the encoding size (assertions, literals — the paper's "# Literals"), constraint
//! generation time, solving time and the answer.
//!
//! `cargo run --release --example prediction_table [-- [--write-docs] TIMEOUT_SECS [TRACE…]]`
//! (default timeout 60 s; default traces: all 16 in tests/data/isopredict-traces).
//! Prints a summary of the large traces and the Markdown table; with `--write-docs` also
//! replaces the part of docs/prediction.md between its `<!-- begin: written by
//! … prediction_table … -->` and `<!-- end: written by prediction_table -->` lines with them
//! (the file is replaced atomically), so the docs' numbers always come from this example.
//! The table measures the paper-form encodings (`Engine::Paper`), whose sizes it reports.

use std::time::Duration;

use isopredict::check::Level;
use isopredict::formats::{read_file, Format};

#[path = "common/docs.rs"]
mod docs;
#[path = "common/traces.rs"]
mod traces;
use isopredict::predict::{predict, Engine, PredictOptions, Strategy};

struct Row {
    trace: String,
    level: Level,
    strategy: Strategy,
    result: String,
    generation_ms: f64,
    solving_ms: f64,
    line: String,
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let write_docs = args.iter().any(|a| a == "--write-docs");
    args.retain(|a| a != "--write-docs");
    let mut args = args.into_iter();
    let timeout: u64 = args.next().map_or(60, |t| t.parse().expect("seconds"));
    let traces = traces::traces(args);
    let mut rows: Vec<Row> = Vec::new();
    for path in &traces {
        let h = read_file(path, Some(Format::IsoPredict)).expect("a trace");
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
            for strategy in Strategy::ALL {
                let mut options = PredictOptions::new(level, strategy)
                    .with_timeout(Some(Duration::from_secs(timeout)));
                options.engine = Engine::Paper;
                let out = predict(&h, &options).expect("prediction runs");
                let s = &out.stats;
                let result = traces::answer(&out);
                let line = format!(
                    "| {name} | {level} | {strategy} | {result} | {} | {}/{} | {} | {} | {:.0} | {:.0} | {} |",
                    s.nodes - 1,
                    s.open_choices,
                    s.choices,
                    s.encoding.assertions,
                    s.encoding.literals,
                    s.generation_ms,
                    s.solving_ms,
                    s.solver_calls
                );
                eprintln!("{line}");
                rows.push(Row {
                    trace: name.clone(),
                    level,
                    strategy,
                    result,
                    generation_ms: s.generation_ms,
                    solving_ms: s.solving_ms,
                    line,
                });
            }
        }
    }
    let text = markdown(&rows, timeout);
    print!("{text}");
    if write_docs {
        docs::write_docs_section("prediction.md", "prediction_table", &text);
    }
}

/// The summary of the large traces and the table, as Markdown.
fn markdown(rows: &[Row], timeout: u64) -> String {
    let mut out = String::new();
    let large: Vec<&Row> = rows.iter().filter(|r| r.trace.contains("large")).collect();
    let slowest = |pick: &dyn Fn(&Row) -> bool, time: &dyn Fn(&Row) -> f64| {
        large
            .iter()
            .filter(|r| pick(r))
            .max_by(|a, b| time(a).total_cmp(&time(b)))
            .map(|r| {
                (
                    time(r) / 1000.0,
                    format!("{} {} {}", r.trace, r.level, r.strategy),
                )
            })
    };
    let total = |r: &Row| r.generation_ms + r.solving_ms;
    let approx = |r: &Row| r.strategy != Strategy::ExactStrict;
    let exact = |r: &Row| r.strategy == Strategy::ExactStrict;
    if let (Some((a, a_at)), Some((g, g_at)), Some((e, e_at))) = (
        slowest(&approx, &total),
        slowest(&approx, &|r: &Row| r.generation_ms),
        slowest(&exact, &total),
    ) {
        out.push_str(&format!(
            "Summary on the large traces (3 sessions × 8 transactions), timeout {timeout} s: the \
             approximate strategies answer in ≤ {a:.1} s (slowest: {a_at}) and generate their \
             constraints in ≤ {g:.2} s (slowest: {g_at}); exact-strict answers in ≤ {e:.1} s \
             (slowest: {e_at}).\n"
        ));
    }
    let unknown = rows
        .iter()
        .filter(|r| r.result.starts_with("unknown"))
        .count();
    // Exact-strict and approx-strict decide the same question when pco explains it.
    let mut agree = 0;
    let mut pairs = 0;
    for r in rows.iter().filter(|r| r.strategy == Strategy::ExactStrict) {
        if let Some(a) = rows.iter().find(|a| {
            a.strategy == Strategy::ApproxStrict && a.trace == r.trace && a.level == r.level
        }) {
            pairs += 1;
            agree += usize::from(a.result == r.result);
        }
    }
    out.push_str(&format!(
        "Exact-strict and approx-strict give the same answer on {agree} of {pairs} (trace, level) \
         pairs; {unknown} of {} runs ended unknown.\n\n",
        rows.len()
    ));
    out.push_str("| trace | level | strategy | result | txns | choices | assertions | literals | generation ms | solving ms | calls |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        out.push_str(&r.line);
        out.push('\n');
    }
    out
}
