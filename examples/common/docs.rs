//! Shared by the examples that write their tables into the docs (`prediction_table`,
//! `reader_speed`, `scale_table`), so that the docs' numbers always come from an example.

use std::path::PathBuf;

/// Replaces the lines of `docs/<page>` between the marker line that starts with ``<!-- begin:
/// written by `cargo run --release --example <example>`` and the line that starts with
/// `<!-- end: written by <example> -->` by `text`. The page is replaced atomically (a
/// temporary file beside it, then a rename); a missing marker panics, naming it.
pub fn write_docs_section(page: &str, example: &str, text: &str) {
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(page);
    let old = std::fs::read_to_string(&docs).unwrap_or_else(|e| panic!("docs/{page}: {e}"));
    let begin_marker = format!("<!-- begin: written by `cargo run --release --example {example}");
    let end_marker = format!("<!-- end: written by {example} -->");
    let begin = old
        .find(&begin_marker)
        .unwrap_or_else(|| panic!("no `{begin_marker}` in docs/{page}"));
    let body = begin + old[begin..].find('\n').expect("a line") + 1;
    let end = old
        .find(&end_marker)
        .unwrap_or_else(|| panic!("no `{end_marker}` in docs/{page}"));
    let new = format!("{}{text}{}", &old[..body], &old[end..]);
    let tmp = docs.with_extension("md.tmp");
    std::fs::write(&tmp, new).expect("writing the docs");
    std::fs::rename(&tmp, &docs).expect("replacing the docs");
    eprintln!("wrote {}", docs.display());
}
