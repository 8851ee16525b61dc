//! docs/architecture.md names only what exists: every file it cites in backticks (`cli/check.rs`,
//! `tests/layout.rs`) is in the repository, and every Rust name it cites (`verdict::decide`,
//! `scalable::predict`, `keep_findings`, `TimestampedHistory`) is defined somewhere in src/
//! (a `fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `mod` or module file). A
//! cheap, textual check: it catches a renamed or removed function that the page still names,
//! not a name that moved to another module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The names src/ defines: items after a defining keyword, and module files and folders.
fn defined_names() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("src"), &mut files);
    let mut names = BTreeSet::new();
    const KEYWORDS: [&str; 9] = [
        "fn",
        "struct",
        "enum",
        "trait",
        "type",
        "const",
        "static",
        "mod",
        "macro_rules!",
    ];
    for f in &files {
        if let Some(stem) = f.file_stem() {
            names.insert(stem.to_string_lossy().into_owned());
        }
        if let Some(parent) = f.parent().and_then(|p| p.file_name()) {
            names.insert(parent.to_string_lossy().into_owned());
        }
        let text = std::fs::read_to_string(f).unwrap();
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if KEYWORDS.contains(&pair[0]) {
                names.insert(pair[1].to_string());
            }
        }
    }
    names
}

/// The backticked spans of `text` outside fenced code blocks.
fn backticked(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            spans.push(inside.to_string());
        }
    }
    spans
}

fn is_rust_path(span: &str) -> bool {
    let span = span.strip_suffix("()").unwrap_or(span);
    !span.is_empty()
        && span.split("::").all(|seg| {
            seg.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The Rust names a span claims exist, or none if the span is a plain word (a command, a
/// level, an edge kind: `check`, `rc`, `wr`) rather than a name.
fn claimed_names(span: &str) -> Vec<String> {
    if !is_rust_path(span) {
        return Vec::new();
    }
    let span = span.strip_suffix("()").unwrap_or(span);
    let span = span.strip_prefix("isopredict::").unwrap_or(span);
    let span = span.strip_prefix("crate::").unwrap_or(span);
    let segments: Vec<&str> = span.split("::").collect();
    let is_name = |s: &str| s.contains('_') || s.chars().next().is_some_and(char::is_uppercase);
    if segments.len() == 1 && !is_name(segments[0]) {
        return Vec::new();
    }
    segments.into_iter().map(String::from).collect()
}

/// A cited file: `tests/…`, `benches/…`, `examples/…`, `scripts/…`, `docs/…`, `src/…` from
/// the repository root, any other `….rs` from src/.
fn cited_file(span: &str) -> Option<PathBuf> {
    if span.contains(' ') || !(span.ends_with(".rs") || span.starts_with("scripts/")) {
        return None;
    }
    let root = Path::new(ROOT);
    let rooted = [
        "tests/",
        "benches/",
        "examples/",
        "scripts/",
        "docs/",
        "src/",
    ];
    Some(if rooted.iter().any(|r| span.starts_with(r)) {
        root.join(span)
    } else {
        root.join("src").join(span)
    })
}

#[test]
fn every_name_the_architecture_page_cites_exists() {
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/architecture.md")).unwrap();
    let names = defined_names();
    let mut missing = Vec::new();
    let mut checked = 0;
    for span in backticked(&page) {
        if let Some(file) = cited_file(&span) {
            checked += 1;
            if !file.exists() {
                missing.push(format!("`{span}`: no file {}", file.display()));
            }
            continue;
        }
        for name in claimed_names(&span) {
            checked += 1;
            if !names.contains(&name) {
                missing.push(format!("`{span}`: nothing in src/ defines `{name}`"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} names checked: is the page there?"
    );
    assert!(
        missing.is_empty(),
        "docs/architecture.md names what does not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_check_sees_a_stale_name() {
    let names = defined_names();
    assert!(names.contains("decide") && names.contains("verdict"));
    assert!(!names.contains("predict_scalable"));
    assert_eq!(claimed_names("predict_scalable"), ["predict_scalable"]);
    assert_eq!(claimed_names("scalable::predict"), ["scalable", "predict"]);
    assert!(claimed_names("check").is_empty());
    assert!(claimed_names("--level").is_empty());
    assert_eq!(
        cited_file("cli/check.rs"),
        Some(Path::new(ROOT).join("src/cli/check.rs"))
    );
    assert!(cited_file("tests/layout.rs").unwrap().exists());
}
