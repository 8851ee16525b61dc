//! The crate's layers (docs/architecture.md, "Layers"): no top-level module of the library uses
//! one that uses it back, directly or through others, and every module uses only modules listed
//! before it in [`LAYERS`].
//!
//! The test reads the source itself: it follows the `mod` declarations from src/lib.rs (and
//! src/main.rs for the command line) to every file of the crate, removes comments and string
//! literals, and collects every path that leaves the module through the crate root —
//! `crate::name…`, `use crate::{a, b::…}`, `$crate::name`, and `super::…` chains that climb to
//! the root. Code under `#[cfg(test)]` counts like any other: a test may use the modules below
//! its own, and a test that needs one above it lives in that higher module. Comments, doc
//! links included, do not count: they may point anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The library's top-level modules, lowest first. A module may use only modules before it.
/// Keep in step with docs/architecture.md.
const LAYERS: &[&str] = &[
    // Leaves: no module of the crate below them.
    "error",
    "interrupt",
    "output",
    "dot",
    "stable_hash",
    "printable",
    // The data model.
    "history",
    // Random histories, from the data model alone.
    "generate",
    // Reading and writing history files.
    "formats",
    // The weak levels' checkers.
    "check",
    // The strong levels and the timestamp checkers.
    "ser",
    // The one decision core (being built; listed so that its place is fixed).
    "verdict",
    // Prediction.
    "predict",
    // The recording store and the workloads written against it.
    "store",
    "workloads",
    // Views of plain data: drawings, tables, the run report.
    "report",
    // run and rank: record → check → predict → verify → validate → report.
    "pipeline",
    // Reproducing a prediction on a database: schedule, execution, reproducer files.
    "reproduce",
];

/// Where the source is.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// One file of the crate and its module path (`["ser", "aion", "aion_tests"]`).
#[derive(Debug)]
struct ModuleFile {
    path: PathBuf,
    module: Vec<String>,
}

/// A use of a top-level module from another one: the file and line where it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    file: String,
    line: usize,
}

/// What a scan of one file finds.
#[derive(Debug, Default, PartialEq)]
struct Found {
    /// Root items named (`crate::x`, a `super` chain climbing to the root), with their line.
    root_items: Vec<(String, usize)>,
    /// `mod name;` declarations: the name, the `#[path]` if any, and whether the declaration
    /// sits inside an inline module.
    modules: Vec<(String, Option<String>, bool)>,
}

// ---------------------------------------------------------------------------------------------
// Removing comments and literals (byte for byte, so offsets and lines stay the same).

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Length in bytes of the UTF-8 character starting with byte `b`.
fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The text with every comment, string, raw string and character literal replaced by spaces
/// (newlines kept; a string keeps its quotes).
fn strip(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(n)] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < n {
        let word_start = i == 0 || !is_ident(b[i - 1]);
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(n, |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < n {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if word_start && (b[i] == b'r' || b[i..].starts_with(b"br")) && {
            let r = if b[i] == b'b' { i + 2 } else { i + 1 };
            let hashes = b[r..].iter().take_while(|&&c| c == b'#').count();
            r + hashes < n && b[r + hashes] == b'"'
        } {
            let r = if b[i] == b'b' { i + 2 } else { i + 1 };
            let hashes = b[r..].iter().take_while(|&&c| c == b'#').count();
            let body = r + hashes + 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat(b'#').take(hashes));
            let end = (body..n)
                .find(|&j| b[j..].starts_with(&close))
                .map_or(n, |j| j + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < n && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if b[i] == b'\'' && i + 1 < n {
            if b[i + 1] == b'\\' {
                // '\n', '\'', '\u{..}'
                let end = (i + 3..n).find(|&j| b[j] == b'\'').map_or(n, |j| j + 1);
                blank(&mut out, i, end);
                i = end;
            } else {
                let len = utf8_len(b[i + 1]);
                if i + 1 + len < n && b[i + 1 + len] == b'\'' {
                    blank(&mut out, i, i + len + 2);
                    i += len + 2;
                } else {
                    i += 1; // a lifetime
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Scanning a file.

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The identifier at `i`, if any.
fn ident_at(b: &[u8], i: usize) -> Option<&str> {
    let len = b[i.min(b.len())..]
        .iter()
        .take_while(|&&c| is_ident(c))
        .count();
    (len > 0 && !b[i].is_ascii_digit()).then(|| std::str::from_utf8(&b[i..i + len]).unwrap())
}

/// The keyword `word` at `i`, standing alone.
fn keyword_at(b: &[u8], i: usize, word: &str) -> bool {
    b[i..].starts_with(word.as_bytes())
        && (i == 0 || !is_ident(b[i - 1]))
        && !b.get(i + word.len()).is_some_and(|&c| is_ident(c))
}

/// `::` (spaces allowed) at `i`: the offset after it.
fn path_sep(b: &[u8], i: usize) -> Option<usize> {
    let i = skip_space(b, i);
    b[i..].starts_with(b"::").then(|| skip_space(b, i + 2))
}

/// The names a path continuing at `i` starts with: one identifier, or the first identifier of
/// each entry of a `{…}` group. Returns (name, offset) pairs.
fn first_segments(b: &[u8], i: usize) -> Vec<(String, usize)> {
    if b.get(i) != Some(&b'{') {
        return ident_at(b, i)
            .map(|w| vec![(w.to_string(), i)])
            .unwrap_or_else(|| vec![("<glob or nothing>".to_string(), i)]);
    }
    let mut names = Vec::new();
    let (mut depth, mut entry_start, mut j) = (0usize, true, i + 1);
    while j < b.len() {
        match b[j] {
            b'{' => depth += 1,
            b'}' if depth == 0 => break,
            b'}' => depth -= 1,
            b',' if depth == 0 => entry_start = true,
            c if entry_start && (c.is_ascii_alphabetic() || c == b'_' || c == b'*') => {
                let name = ident_at(b, j).unwrap_or("<glob or nothing>");
                names.push((name.to_string(), j));
                entry_start = false;
                j += name.len().max(1);
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    names
}

/// Every root item a file names and every `mod x;` it declares. `depth` is the file's module
/// depth (0 for the crate root).
fn scan(text: &str, depth: usize) -> Found {
    let b = strip(text);
    let line_of = |offset: usize| 1 + b[..offset].iter().filter(|&&c| c == b'\n').count();
    let mut found = Found::default();
    let mut braces = 0usize;
    // Brace depths at which inline `mod x { … }` blocks opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => braces += 1,
            b'}' => {
                braces -= 1;
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
            }
            _ => {}
        }
        if keyword_at(&b, i, "crate") {
            if let Some(next) = path_sep(&b, i + 5) {
                for (name, at) in first_segments(&b, next) {
                    found.root_items.push((name, line_of(at)));
                }
            }
        } else if keyword_at(&b, i, "super") && !b[..i].trim_ascii_end().ends_with(b"::") {
            let mut climbs = 0;
            let mut j = i;
            let mut after = None;
            while keyword_at(&b, j, "super") {
                let Some(next) = path_sep(&b, j + 5) else {
                    break;
                };
                climbs += 1;
                after = Some(next);
                j = next;
            }
            if let Some(next) = after {
                if climbs == depth + inline.len() {
                    for (name, at) in first_segments(&b, next) {
                        found.root_items.push((name, line_of(at)));
                    }
                }
            }
            i = j.max(i + 1);
            continue;
        } else if keyword_at(&b, i, "mod") {
            let j = skip_space(&b, i + 3);
            if let Some(name) = ident_at(&b, j) {
                let k = skip_space(&b, j + name.len());
                if b.get(k) == Some(&b';') {
                    // A #[path = "…"] between the previous item and this declaration.
                    let item_start = b[..i]
                        .iter()
                        .rposition(|&c| c == b';' || c == b'}' || c == b'{')
                        .map_or(0, |p| p + 1);
                    let attrs = &text[item_start..i];
                    let path = attrs.find("#[path").and_then(|p| {
                        let rest = &attrs[p..];
                        let open = rest.find('"')? + 1;
                        let close = open + rest[open..].find('"')?;
                        Some(rest[open..close].to_string())
                    });
                    found
                        .modules
                        .push((name.to_string(), path, !inline.is_empty()));
                } else if b.get(k) == Some(&b'{') {
                    inline.push(braces);
                }
                i = j + name.len();
                continue;
            }
        }
        i += 1;
    }
    found
}

// ---------------------------------------------------------------------------------------------
// The module tree.

/// Every file reached from `root` by `mod` declarations, with its module path.
fn module_files(root: &Path, problems: &mut Vec<String>) -> Vec<ModuleFile> {
    let mut files = Vec::new();
    let mut todo = vec![ModuleFile {
        path: root.to_path_buf(),
        module: Vec::new(),
    }];
    while let Some(file) = todo.pop() {
        let text = std::fs::read_to_string(&file.path).unwrap();
        let found = scan(&text, file.module.len());
        let dir = file.path.parent().unwrap().to_path_buf();
        let stem = file.path.file_stem().unwrap().to_str().unwrap().to_string();
        let children_dir = if file.module.is_empty() || stem == "mod" {
            dir.clone()
        } else {
            dir.join(&stem)
        };
        for (name, path, in_inline) in found.modules {
            if in_inline {
                problems.push(format!(
                    "{}: `mod {name};` inside an inline module: this test cannot place it",
                    file.path.display()
                ));
                continue;
            }
            let candidates = match path {
                Some(p) => vec![dir.join(p)],
                None => vec![
                    children_dir.join(format!("{name}.rs")),
                    children_dir.join(&name).join("mod.rs"),
                ],
            };
            match candidates.into_iter().find(|c| c.is_file()) {
                Some(path) => {
                    let mut module = file.module.clone();
                    module.push(name);
                    todo.push(ModuleFile { path, module });
                }
                None => problems.push(format!(
                    "{}: no file for `mod {name};`",
                    file.path.display()
                )),
            }
        }
        files.push(file);
    }
    files
}

fn all_rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Root names `lib.rs` re-exports (`pub use history::{History, …}`), mapped to their module.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let b = strip(lib);
    let text = String::from_utf8(b).unwrap();
    let mut map = BTreeMap::new();
    for statement in text.split(';') {
        let s = statement.trim();
        let Some(rest) = s.strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        for item in items.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !item.is_empty() && item != "self" {
                map.insert(item.to_string(), module.trim().to_string());
            }
        }
    }
    map
}

// ---------------------------------------------------------------------------------------------
// The graph.

type Edges = BTreeMap<(String, String), Vec<Place>>;

/// A cycle of the graph, if there is one, as the list of its modules (first = last).
fn find_cycle(edges: &Edges) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    // 0 = unseen, 1 = on the current path, 2 = done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        node: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        path.push(node);
        for &to in next.get(node).map(Vec::as_slice).unwrap_or_default() {
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|&m| m == to).unwrap();
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|m| m.to_string()).collect();
                    cycle.push(to.to_string());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(to, next, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node, 2);
        None
    }
    let nodes: Vec<&str> = next.keys().copied().collect();
    for node in nodes {
        if state.get(node).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(node, &next, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn places(edges: &Edges, from: &str, to: &str) -> String {
    let places = &edges[&(from.to_string(), to.to_string())];
    let mut s = String::new();
    for p in places.iter().take(5) {
        let _ = write!(s, " {}:{}", p.file, p.line);
    }
    if places.len() > 5 {
        let _ = write!(s, " (and {} more)", places.len() - 5);
    }
    s
}

/// The library's module graph: edges between top-level modules with where each use is, the
/// top-level modules, and any problem found on the way.
fn library_graph() -> (Edges, BTreeSet<String>, Vec<String>) {
    let src = src();
    let mut problems = Vec::new();
    let lib_files = module_files(&src.join("lib.rs"), &mut problems);
    let bin_files = module_files(&src.join("main.rs"), &mut problems);
    // Every source file belongs to the library or the command line.
    let reached: BTreeSet<PathBuf> = lib_files
        .iter()
        .chain(&bin_files)
        .map(|f| f.path.canonicalize().unwrap())
        .collect();
    let mut all = Vec::new();
    all_rs_files(&src, &mut all);
    for path in all {
        if !reached.contains(&path.canonicalize().unwrap()) {
            problems.push(format!(
                "{}: not reached from src/lib.rs or src/main.rs by `mod` declarations",
                path.display()
            ));
        }
    }
    let tops: BTreeSet<String> = lib_files
        .iter()
        .filter_map(|f| f.module.first().cloned())
        .collect();
    let lib_text = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexports = root_reexports(&lib_text);
    let mut edges = Edges::new();
    for file in &lib_files {
        let Some(top) = file.module.first() else {
            continue; // lib.rs itself only declares and re-exports
        };
        let text = std::fs::read_to_string(&file.path).unwrap();
        let shown = file
            .path
            .strip_prefix(src.parent().unwrap())
            .unwrap()
            .display()
            .to_string();
        for (name, line) in scan(&text, file.module.len()).root_items {
            let target = if tops.contains(&name) {
                name
            } else if let Some(module) = reexports.get(&name) {
                module.clone()
            } else {
                problems.push(format!(
                    "{shown}:{line}: `crate::{name}` is not a module of the crate root"
                ));
                continue;
            };
            if &target != top {
                edges.entry((top.clone(), target)).or_default().push(Place {
                    file: shown.clone(),
                    line,
                });
            }
        }
    }
    (edges, tops, problems)
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn the_module_graph_has_no_cycle_and_follows_the_layers() {
    let (edges, tops, problems) = library_graph();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        tops.len() >= 10 && tops.contains("history") && tops.contains("pipeline"),
        "the scan found too few modules: {tops:?}"
    );
    let unplaced: Vec<&String> = tops
        .iter()
        .filter(|m| !LAYERS.contains(&m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules not in LAYERS (tests/layout.rs) nor in docs/architecture.md: {unplaced:?}; \
         place each above the modules it uses"
    );
    if let Some(cycle) = find_cycle(&edges) {
        let mut msg = format!("import cycle: {}\n", cycle.join(" -> "));
        for pair in cycle.windows(2) {
            let _ = writeln!(
                msg,
                "  {} -> {}:{}",
                pair[0],
                pair[1],
                places(&edges, &pair[0], &pair[1])
            );
        }
        panic!("{msg}");
    }
    let rank = |m: &str| LAYERS.iter().position(|&l| l == m).unwrap();
    let mut upward = String::new();
    for (from, to) in edges.keys() {
        if rank(to) > rank(from) {
            let _ = writeln!(
                upward,
                "  {from} uses {to}, which LAYERS puts above it:{}",
                places(&edges, from, to)
            );
        }
    }
    assert!(
        upward.is_empty(),
        "uses against the layers (move the code to the module that owns the concept):\n{upward}"
    );
}

#[test]
fn the_documented_layers_are_the_tested_ones() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    // The "Layers" list: one line per module, lowest first, `- `name`: …`.
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .expect("docs/architecture.md has a \"## Layers\" section");
    let documented: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .filter(|m| *m != "cli")
        .collect();
    assert_eq!(
        documented, LAYERS,
        "docs/architecture.md's Layers vs tests/layout.rs"
    );
}

#[test]
fn the_scanner_finds_every_form_and_nothing_in_comments_or_strings() {
    let text = r##"
//! Uses [`crate::pipeline`] only in a comment.
use crate::{history::{History, TxnId}, error::InputError};
use crate :: check;
/* crate::ser in a /* nested */ block comment */
const S: &str = "crate::predict";
const R: &str = r#"crate::store " still inside"#;
const C: char = '"';
fn f<'a>(x: &'a str) -> u8 { let _ = b'\''; $crate::dot::quote(x) }
#[path = "other_tests.rs"]
mod tests;
mod inline {
    use super::super::formats::Format;
    use super::super::super::nothing;
}
fn g() { super::generate::x(); super::super::beyond(); }
"##;
    let found = scan(text, 1);
    let names: Vec<(&str, usize)> = found
        .root_items
        .iter()
        .map(|(n, l)| (n.as_str(), *l))
        .collect();
    assert_eq!(
        names,
        [
            ("history", 3),
            ("error", 3),
            ("check", 4),
            ("dot", 9),
            ("formats", 13),
            ("generate", 16)
        ]
    );
    assert_eq!(
        found.modules,
        [(
            "tests".to_string(),
            Some("other_tests.rs".to_string()),
            false
        )]
    );
}

#[test]
fn a_cycle_is_found_and_shown_with_its_places() {
    let mut edges = Edges::new();
    let place = |file: &str, line| Place {
        file: file.to_string(),
        line,
    };
    edges.insert(("a".into(), "b".into()), vec![place("src/a.rs", 3)]);
    edges.insert(("b".into(), "c".into()), vec![place("src/b/x.rs", 7)]);
    edges.insert(("c".into(), "d".into()), vec![place("src/c.rs", 1)]);
    assert_eq!(find_cycle(&edges), None);
    edges.insert(("c".into(), "a".into()), vec![place("src/c.rs", 9)]);
    assert_eq!(
        find_cycle(&edges).unwrap(),
        ["a", "b", "c", "a"].map(String::from)
    );
    assert_eq!(places(&edges, "c", "a"), " src/c.rs:9");
}
