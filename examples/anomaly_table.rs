//! The anomaly table (`isopredict::history::anomalies`) as Markdown: every name isopredict
//! gives a violation, with its Adya, Plume and Elle names and the weakest level forbidding it.
//!
//! `cargo run --release --example anomaly_table [-- --write-docs]`
//!
//! Prints the table; with `--write-docs` also replaces the part of docs/checking.md between its
//! `<!-- begin: written by `cargo run --release --example anomaly_table …` and
//! `<!-- end: written by anomaly_table -->` markers (the file is replaced atomically).
//! `tests/checking/anomaly_table.rs` fails when the docs and the table differ.

#[path = "common/docs.rs"]
mod docs;

fn main() {
    let text = isopredict::history::anomalies::render_markdown();
    print!("{text}");
    if std::env::args().any(|a| a == "--write-docs") {
        docs::write_docs_section("checking.md", "anomaly_table", &text);
    }
}
