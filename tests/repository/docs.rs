//! The reference docs stay reference: docs/performance.md's tables come from commands (see
//! `every_performance_table_is_written_by_a_command`), and docs/architecture.md names only
//! what exists: every file it cites in backticks (`cli/check.rs`,
//! `tests/repository/layout.rs`) is in the repository, and every Rust name it cites (`verdict::decide`,
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
    assert!(cited_file("tests/repository/layout.rs").unwrap().exists());
}

/// The marker pairs of docs/performance.md's generated tables: (command named in the begin
/// marker, the name its end marker must carry).
fn generated_blocks(page: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    for line in page.lines() {
        if let Some(rest) =
            line.strip_prefix("<!-- begin: written by `cargo run --release --example ")
        {
            let example = rest.split([' ', '`']).next().unwrap_or("").to_string();
            blocks.push((
                format!("examples/{example}.rs"),
                format!("<!-- end: written by {example} -->"),
            ));
        } else if let Some(rest) = line.strip_prefix("<!-- bench-") {
            if let Some(name) = rest.strip_suffix(":begin -->") {
                blocks.push((
                    format!("scripts/bench-{name}.sh"),
                    format!("<!-- bench-{name}:end -->"),
                ));
            }
        }
    }
    blocks
}

/// The problems that keep `page` from being a reference page of generated tables: a table
/// outside a generated block (the "Targets" section's table of goals excepted), a marker
/// without its end or naming no command in the repository, a date, a branch name.
fn performance_page_problems(page: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open_end: Option<String> = None;
    let mut section = String::new();
    for (i, line) in page.lines().enumerate() {
        let n = i + 1;
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.to_string();
        }
        if let Some(end) = &open_end {
            if line.starts_with(end.as_str()) {
                open_end = None;
            }
        } else if let Some((command, end)) = generated_blocks(line).into_iter().next() {
            if !Path::new(ROOT).join(&command).exists() {
                problems.push(format!(
                    "line {n}: the marker names {command}, which does not exist"
                ));
            }
            open_end = Some(end);
        } else if line.starts_with('|') && section != "Targets" {
            problems.push(format!(
                "line {n}: a table outside a generated block: {line}"
            ));
        }
        let bytes = line.as_bytes();
        let digit = |k: usize| bytes.get(k).is_some_and(u8::is_ascii_digit);
        let dated = (0..bytes.len()).any(|k| {
            bytes[k..].starts_with(b"20")
                && (k + 2..k + 4).all(digit)
                && bytes.get(k + 4) == Some(&b'-')
                && (k + 5..k + 7).all(digit)
                && bytes.get(k + 7) == Some(&b'-')
                && (k + 8..k + 10).all(digit)
        });
        if dated {
            problems.push(format!(
                "line {n}: a date (the git history keeps when): {line}"
            ));
        }
        if line.contains("branch `") {
            problems.push(format!("line {n}: a branch name: {line}"));
        }
    }
    if let Some(end) = open_end {
        problems.push(format!("a generated block never ends (no `{end}`)"));
    }
    problems
}

#[test]
fn every_performance_table_is_written_by_a_command() {
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/performance.md")).unwrap();
    let problems = performance_page_problems(&page);
    assert!(
        problems.is_empty(),
        "docs/performance.md:\n{}",
        problems.join("\n")
    );
    // Every example that writes into the page has its block there.
    for entry in std::fs::read_dir(Path::new(ROOT).join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        if source.contains("write_docs_section(\"performance.md\"") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            assert!(
                page.contains(&format!("<!-- end: written by {name} -->")),
                "{} writes into docs/performance.md, which has no block for it",
                path.display()
            );
        }
    }
}

#[test]
fn the_performance_check_sees_hand_tables_dates_and_stray_markers() {
    let good = "## Targets\n| a | b |\n## X\n<!-- begin: written by `cargo run --release --example check_speed -- --write-docs` -->\n| 1 | 2 |\n<!-- end: written by check_speed -->\n";
    assert!(performance_page_problems(good).is_empty());
    let hand = "## X\n| 1 | 2 |\n";
    assert_eq!(performance_page_problems(hand).len(), 1);
    let dated = "## X\nMeasured 2026-11-27 on the machine.\n";
    assert_eq!(performance_page_problems(dated).len(), 1);
    let branch = "## X\nOn branch `wide` it was faster.\n";
    assert_eq!(performance_page_problems(branch).len(), 1);
    let unknown = "<!-- begin: written by `cargo run --release --example no_such_example` -->\n| 1 |\n<!-- end: written by no_such_example -->\n";
    assert_eq!(performance_page_problems(unknown).len(), 1);
    let open = "<!-- bench-adya:begin -->\n| 1 |\n";
    assert_eq!(performance_page_problems(open).len(), 1);
}
