//! The crate's structure (docs/architecture.md, "Layers" and "The rule"), seen file by file.
//!
//! The test parses every source file (with `syn`), following the `mod` declarations from
//! src/lib.rs and src/main.rs, and resolves every path that names a module of the crate —
//! `use crate::…`, `use super::…`, `use self::…`, a child module's name, the same in code and
//! in macro arguments, `#[cfg(test)]` code included — to the file that defines that module.
//! That gives an arrow from file to file. A module file's arrows into its own submodules are
//! containment (the module is their door: `mod x;`, `pub use x::Y`), not imports; every other
//! arrow is an import. Then:
//!
//! - no circle of files importing each other, at any depth (none is allowed: what two files
//!   both need moves down to a third that both import);
//! - every top-level module uses only modules listed before it in [`LAYERS`], which is the
//!   "Layers" list of docs/architecture.md;
//! - every file under src/ is reached from src/lib.rs or src/main.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

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
    "shrink",
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
    // The one decision core.
    "verdict",
    // Prediction.
    "predict",
    // The recording store and the workloads written against it.
    "store",
    "workloads",
    // The store over PostgreSQL's wire protocol: any client's SQL recorded as a history.
    "server",
    // Views of plain data: drawings, tables, the run report.
    "report",
    // run and rank: record → check → predict → verify → validate → report.
    "pipeline",
    // Reproducing a prediction on a database: schedule, execution, reproducer files.
    "reproduce",
];

// ---------------------------------------------------------------------------------------------
// The module tree.

/// A module path inside one crate root: `(root, ["ser", "aion"])`; root 0 is the library
/// (src/lib.rs), 1 the command line (src/main.rs).
type ModPath = (usize, Vec<String>);

/// One source file: where it is (relative to the repository) and its module.
struct SourceFile {
    path: String,
    module: ModPath,
    ast: syn::File,
    /// Compiled for unit tests only (its `mod` item, or one around it, is `#[cfg(test)]`).
    test: bool,
}

/// The crate's files and which file defines each module (inline modules: the file they are
/// written in).
struct Tree {
    files: Vec<SourceFile>,
    modules: BTreeMap<ModPath, usize>,
    problems: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `#[path = "…"]` of a `mod` item, if any.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

impl Tree {
    fn read() -> Tree {
        let mut tree = Tree {
            files: Vec::new(),
            modules: BTreeMap::new(),
            problems: Vec::new(),
        };
        tree.load(&root().join("src/lib.rs"), (0, Vec::new()), false);
        tree.load(&root().join("src/main.rs"), (1, Vec::new()), false);
        tree
    }

    fn load(&mut self, path: &Path, module: ModPath, test: bool) {
        let text = std::fs::read_to_string(path).unwrap();
        let ast = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", path.display()));
        let index = self.files.len();
        self.modules.insert(module.clone(), index);
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let dir = path.parent().unwrap().to_path_buf();
        let children = if module.1.is_empty() || stem == "mod" {
            dir.clone()
        } else {
            dir.join(stem)
        };
        let items = ast.items.clone();
        self.files.push(SourceFile {
            path: shown(path),
            module: module.clone(),
            ast,
            test,
        });
        self.items(&items, index, &module, &dir, &children, false);
    }

    /// The `mod` items of `items` (in file `index`, module `module`).
    fn items(
        &mut self,
        items: &[syn::Item],
        index: usize,
        module: &ModPath,
        dir: &Path,
        children: &Path,
        inline: bool,
    ) {
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            let name = m.ident.to_string();
            let mut child = module.clone();
            child.1.push(name.clone());
            if let Some((_, content)) = &m.content {
                self.modules.insert(child.clone(), index);
                self.items(content, index, &child, dir, &children.join(&name), true);
                continue;
            }
            if inline {
                self.problems.push(format!(
                    "{}: `mod {name};` inside an inline module: this test cannot place it",
                    self.files[index].path
                ));
                continue;
            }
            let candidates = match path_attr(&m.attrs) {
                Some(p) => vec![dir.join(p)],
                None => vec![
                    children.join(format!("{name}.rs")),
                    children.join(&name).join("mod.rs"),
                ],
            };
            match candidates.into_iter().find(|c| c.is_file()) {
                Some(path) => {
                    // A file is test code when its `mod` item or its own file is.
                    let test = self.files[index].test || is_cfg_test(&m.attrs);
                    self.load(&path, child, test)
                }
                None => self.problems.push(format!(
                    "{}: no file for `mod {name};`",
                    self.files[index].path
                )),
            }
        }
    }

    /// The module a path written in module `cur` names, and the first name after it: the
    /// longest prefix of the path that is a module of the crate. `None` for paths that do
    /// not start at the crate (`crate`, `self`, `super`, a submodule's name).
    fn resolve(&self, cur: &ModPath, segments: &[String]) -> Option<(ModPath, String)> {
        let (module, rest) = self.resolve_rest(cur, segments)?;
        let name = rest
            .first()
            .cloned()
            .unwrap_or_else(|| segments.last().unwrap().clone());
        Some((module, name))
    }

    /// [`Tree::resolve`] with every name after the module (none: the path is the module).
    fn resolve_rest(&self, cur: &ModPath, segments: &[String]) -> Option<(ModPath, Vec<String>)> {
        let first = segments.first()?;
        let (mut base, mut i) = match first.as_str() {
            "crate" => ((cur.0, Vec::new()), 1),
            "self" => (cur.clone(), 1),
            "super" => {
                let mut base = cur.clone();
                let mut i = 0;
                while segments.get(i).is_some_and(|s| s == "super") {
                    base.1.pop()?;
                    i += 1;
                }
                (base, i)
            }
            name => {
                let mut child = cur.clone();
                child.1.push(name.to_string());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                (cur.clone(), 0)
            }
        };
        while let Some(s) = segments.get(i) {
            let mut next = base.clone();
            next.1.push(s.clone());
            if !self.modules.contains_key(&next) {
                break;
            }
            base = next;
            i += 1;
        }
        Some((base, segments[i..].to_vec()))
    }
}

// ---------------------------------------------------------------------------------------------
// The paths a file writes.

/// Collects every path of a file with the module it is written in (and whether it is unit
/// test code), its glob imports and the names its `use` items bring in.
struct Paths {
    module: ModPath,
    /// Inside `#[cfg(test)]` code (the file's own flag, or a test module or item in it).
    test: bool,
    found: Vec<Found>,
    /// `use a::b::*;`: the module it is written in and the path before the `*`.
    globs: Vec<(ModPath, Vec<String>)>,
    /// `use a::b;` / `use a::b as c;` / `use a::{self}`: (module written in, name) → path.
    aliases: BTreeMap<(ModPath, String), Vec<String>>,
}

/// One path a file writes: the module it is written in, its names, whether in test code.
struct Found {
    written_in: ModPath,
    segments: Vec<String>,
    test: bool,
}

impl Paths {
    fn new(file: &SourceFile) -> Paths {
        Paths {
            module: file.module.clone(),
            test: file.test,
            found: Vec::new(),
            globs: Vec::new(),
            aliases: BTreeMap::new(),
        }
    }

    fn push(&mut self, segments: Vec<String>) {
        if !segments.is_empty() {
            self.found.push(Found {
                written_in: self.module.clone(),
                segments,
                test: self.test,
            });
        }
    }

    fn alias(&mut self, name: String, path: Vec<String>) {
        if name != "_" && !path.is_empty() {
            self.aliases.insert((self.module.clone(), name), path);
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => {
                if let Some(last) = prefix.last() {
                    self.alias(last.clone(), prefix.clone());
                }
                self.push(prefix.clone());
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.alias(n.ident.to_string(), path.clone());
                self.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.alias(r.rename.to_string(), path.clone());
                self.push(path);
            }
            syn::UseTree::Glob(_) => {
                self.globs.push((self.module.clone(), prefix.clone()));
                let mut path = prefix.clone();
                path.push("*".to_string());
                self.push(path);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

/// The `a :: b :: c` paths in the text of a macro's arguments that start at `crate`, `self`
/// or `super`.
fn paths_in_tokens(text: &str) -> Vec<Vec<String>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let starts = matches!(words[i], "crate" | "self" | "super")
            && (i == 0 || words[i - 1] != "::")
            && words.get(i + 1) == Some(&"::");
        if !starts {
            i += 1;
            continue;
        }
        let mut path = vec![words[i].to_string()];
        let mut j = i + 1;
        while words.get(j) == Some(&"::")
            && words
                .get(j + 1)
                .is_some_and(|w| w.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            path.push(words[j + 1].to_string());
            j += 2;
        }
        out.push(path);
        i = j;
    }
    out
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            let test = self.test;
            self.test |= is_cfg_test(&m.attrs);
            self.module.1.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.module.1.pop();
            self.test = test;
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = self.test;
        self.test |= is_cfg_test(&f.attrs);
        syn::visit::visit_item_fn(self, f);
        self.test = test;
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            let segments = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.push(segments);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        for path in paths_in_tokens(&m.tokens.to_string()) {
            self.push(path);
        }
        syn::visit::visit_macro(self, m);
    }
}

// ---------------------------------------------------------------------------------------------
// The graph of files.

/// Imports from file to file (indexes into `Tree::files`), each with the names taken.
type FileEdges = BTreeMap<(usize, usize), BTreeSet<String>>;

/// Every import of the crate, from file to file, and the top-level modules' uses of each
/// other (library only; root re-exports such as `crate::History` resolved to their module).
fn imports(tree: &Tree) -> (FileEdges, BTreeMap<(String, String), BTreeSet<String>>) {
    let reexports = root_reexports(&tree.files[0].ast);
    let mut files = FileEdges::new();
    let mut tops = BTreeMap::new();
    for (from, file) in tree.files.iter().enumerate() {
        let mut paths = Paths::new(file);
        paths.visit_file(&file.ast);
        for f in &paths.found {
            let Some((target, rest)) = resolve_found(tree, &paths, f) else {
                continue;
            };
            let name = rest
                .first()
                .cloned()
                .unwrap_or_else(|| f.segments.last().unwrap().clone());
            let to = tree.modules[&target];
            // A module's uses of its own submodules are containment, not imports.
            let inside = target.0 == file.module.0
                && target.1.len() > file.module.1.len()
                && target.1.starts_with(&file.module.1);
            if to != from && !inside {
                files.entry((from, to)).or_default().insert(name.clone());
            }
            if file.module.0 != 0 || file.module.1.is_empty() {
                continue;
            }
            let top_to = match target.1.first() {
                Some(top) => top.clone(),
                None => match reexports.get(&name) {
                    Some(m) => m.clone(),
                    None => format!("<crate root: {name}>"),
                },
            };
            if top_to != file.module.1[0] {
                tops.entry((file.module.1[0].clone(), top_to))
                    .or_insert_with(BTreeSet::new)
                    .insert(file.path.clone());
            }
        }
    }
    (files, tops)
}

/// The module a path a file writes names, and the names after it: resolved from the crate
/// root, `self` or `super` ([`Tree::resolve_rest`]), or through a name a `use` brought in —
/// a glob (`use super::*;` then `extract::build`: when that first name is a module there) or
/// an alias (`use crate::check;` then `check::check`).
fn resolve_found(tree: &Tree, paths: &Paths, f: &Found) -> Option<(ModPath, Vec<String>)> {
    if let Some(found) = tree.resolve_rest(&f.written_in, &f.segments) {
        return Some(found);
    }
    let first = f.segments.first()?;
    if let Some(path) = paths.aliases.get(&(f.written_in.clone(), first.clone())) {
        let full = [path.as_slice(), &f.segments[1..]].concat();
        if let Some(found) = tree.resolve_rest(&f.written_in, &full) {
            return Some(found);
        }
    }
    paths
        .globs
        .iter()
        .filter(|(module, _)| *module == f.written_in)
        .find_map(|(module, prefix)| {
            let star = [prefix.as_slice(), &["*".to_string()]].concat();
            let (base, _) = tree.resolve(module, &star)?;
            let mut child = base.clone();
            child.1.push(first.clone());
            if !tree.modules.contains_key(&child) {
                return None;
            }
            tree.resolve_rest(&base, &f.segments)
        })
}

/// Root names that lib.rs re-exports (`pub use history::{History, …}`), mapped to their
/// module.
fn root_reexports(lib: &syn::File) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for item in &lib.items {
        let syn::Item::Use(u) = item else { continue };
        let syn::UseTree::Path(p) = &u.tree else {
            continue;
        };
        let module = p.ident.to_string();
        let mut stack = vec![&*p.tree];
        while let Some(t) = stack.pop() {
            match t {
                syn::UseTree::Path(p) => stack.push(&p.tree),
                syn::UseTree::Name(n) => {
                    map.insert(n.ident.to_string(), module.clone());
                }
                syn::UseTree::Rename(r) => {
                    map.insert(r.rename.to_string(), module.clone());
                }
                syn::UseTree::Group(g) => stack.extend(g.items.iter()),
                syn::UseTree::Glob(_) => {}
            }
        }
    }
    map
}

/// The strongly connected components of more than one node (Tarjan), each sorted.
fn circles(nodes: usize, edges: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut next = vec![Vec::new(); nodes];
    for &(a, b) in edges {
        next[a].push(b);
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    fn connect(v: usize, next: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &next[v] {
            match s.index[w] {
                None => {
                    connect(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        index: vec![None; nodes],
        low: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..nodes {
        if s.index[v].is_none() {
            connect(v, &next, &mut s);
        }
    }
    s.out.sort();
    s.out
}

/// A circle of files, each import inside it with the names taken.
fn describe(tree: &Tree, edges: &FileEdges, circle: &[usize]) -> String {
    let mut s = format!("circle of {} files:\n", circle.len());
    for (&(a, b), names) in edges {
        if circle.contains(&a) && circle.contains(&b) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let _ = writeln!(
                s,
                "  {} -> {}: {}",
                tree.files[a].path,
                tree.files[b].path,
                names.join(", ")
            );
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn every_source_file_is_a_module_of_the_crate() {
    let tree = Tree::read();
    assert!(tree.problems.is_empty(), "{}", tree.problems.join("\n"));
    let reached: BTreeSet<&str> = tree.files.iter().map(|f| f.path.as_str()).collect();
    let mut stack = vec![root().join("src")];
    let mut missing = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !reached.contains(shown(&path).as_str())
            {
                missing.push(shown(&path));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not reached from src/lib.rs or src/main.rs by `mod` declarations: {missing:?}"
    );
    assert!(tree.files.len() > 100, "the walk found too few files");
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let tree = Tree::read();
    let (edges, _) = imports(&tree);
    assert!(edges.len() > 300, "the scan found too few imports");
    let found = circles(tree.files.len(), &edges.keys().copied().collect());
    let mut problems = String::new();
    for circle in &found {
        problems.push_str(&describe(&tree, &edges, circle));
    }
    assert!(
        problems.is_empty(),
        "files that import each other in a circle (move what both need to a lower file):\n{problems}"
    );
}

#[test]
fn the_top_level_modules_follow_the_layers() {
    let tree = Tree::read();
    let (_, tops) = imports(&tree);
    let modules: BTreeSet<&str> = tree
        .modules
        .keys()
        .filter(|(root, path)| *root == 0 && path.len() == 1)
        .map(|(_, path)| path[0].as_str())
        .collect();
    let unplaced: Vec<&&str> = modules.iter().filter(|m| !LAYERS.contains(m)).collect();
    assert!(
        unplaced.is_empty(),
        "modules not in LAYERS (tests/repository/layout.rs) nor in docs/architecture.md: {unplaced:?}; \
         place each above the modules it uses"
    );
    let rank = |m: &str| LAYERS.iter().position(|&l| l == m);
    let mut wrong = String::new();
    for ((from, to), files) in &tops {
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        match (rank(from), rank(to)) {
            (Some(a), Some(b)) if b < a => {}
            (_, None) => {
                let _ = writeln!(wrong, "  {from} names {to}, not a module: {files:?}");
            }
            _ => {
                let _ = writeln!(
                    wrong,
                    "  {from} uses {to}, which LAYERS puts above it: {files:?}"
                );
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses against the layers (move the code to the module that owns the concept):\n{wrong}"
    );
}

#[test]
fn the_documented_layers_are_the_tested_ones() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
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
        "docs/architecture.md's Layers vs tests/repository/layout.rs"
    );
}

#[test]
fn paths_resolve_to_the_files_of_their_modules() {
    let tree = Tree::read();
    let file_of = |segments: &[&str], cur: &[&str]| {
        let cur = (0, cur.iter().map(|s| s.to_string()).collect());
        let segments: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        tree.resolve(&cur, &segments)
            .map(|(m, name)| (tree.files[tree.modules[&m]].path.clone(), name))
    };
    let at = |p: &str, n: &str| Some((p.to_string(), n.to_string()));
    assert_eq!(
        file_of(&["crate", "check", "cc", "saturate"], &["ser"]),
        at("src/check/cc.rs", "saturate")
    );
    assert_eq!(
        file_of(&["super", "cc_clock", "Clock"], &["check", "cc"]),
        at("src/check/cc_clock.rs", "Clock")
    );
    assert_eq!(
        file_of(&["super", "super", "history", "History"], &["check", "cc"]),
        at("src/history/mod.rs", "History")
    );
    assert_eq!(
        file_of(&["cc", "CcStopped"], &["check"]),
        at("src/check/cc.rs", "CcStopped")
    );
    assert_eq!(file_of(&["std", "mem", "take"], &["check"]), None);
    assert_eq!(
        paths_in_tokens("\"x\" , crate :: dot :: quote (x) , a :: super :: b"),
        [vec!["crate", "dot", "quote"]]
    );
}

#[test]
fn a_circle_is_found() {
    let edges: BTreeSet<(usize, usize)> = [(0, 1), (1, 2), (2, 3), (4, 4)].into();
    assert!(circles(5, &edges).is_empty());
    let mut edges = edges;
    edges.insert((3, 1));
    assert_eq!(circles(5, &edges), [vec![1, 2, 3]]);
}

#[test]
fn glob_imports_are_followed() {
    let tree = Tree::read();
    let (edges, _) = imports(&tree);
    let file = |p: &str| tree.files.iter().position(|f| f.path == p).unwrap();
    // src/predict/tests.rs has `use super::*;` and then calls `extract::build(…)`.
    let names = edges.get(&(file("src/predict/tests.rs"), file("src/predict/extract.rs")));
    assert!(names.is_some_and(|n| n.contains("build")), "{names:?}");
}

// ---------------------------------------------------------------------------------------------
// The decision core as the only door to the engines.

/// The engines: the functions of `check` and `ser` that decide whether a history satisfies a
/// level (docs/architecture.md, "The decision core"). Private to the crate at their homes;
/// `verdict::engines` is their public door for benchmarks and tests.
const ENGINES: &[&str] = &[
    "check",
    "check_strong",
    "is_serializable",
    "check_serializable",
    "check_si_pc",
    "satisfies_si_pc",
    "check_timestamps",
    "check_known_order",
];

/// The modules that may name the engines: their homes and the decision core.
const ENGINE_ROOMS: &[&str] = &["check", "ser", "verdict"];

/// The places where `file` reaches an engine against the rule: an engine named at its home
/// (`check::check`, `crate::ser::check_strong`, `use crate::ser::is_serializable`), or, in code
/// that is not a unit test, `verdict::engines` (library code judges through `verdict::decide`).
fn engine_uses(tree: &Tree, file: &SourceFile) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut paths = Paths::new(file);
    paths.visit_file(&file.ast);
    for f in &paths.found {
        let Some((target, rest)) = resolve_found(tree, &paths, f) else {
            continue;
        };
        let path = f.segments.join("::");
        let home = target.1.first().map(String::as_str);
        let engine = rest.first().filter(|n| ENGINES.contains(&n.as_str()));
        if let (Some("check" | "ser"), Some(engine)) = (home, engine) {
            wrong.push(format!(
                "{}: `{path}` names the engine `{engine}` at its home (ask `verdict::decide`; \
                 unit tests: `verdict::engines::{engine}`)",
                file.path
            ));
        } else if target.1 == ["verdict", "engines"] && !f.test {
            wrong.push(format!(
                "{}: `{path}`: library code runs an engine itself (ask `verdict::decide`)",
                file.path
            ));
        }
    }
    wrong
}

#[test]
fn only_the_decision_core_reaches_the_engines() {
    let tree = Tree::read();
    let mut wrong = Vec::new();
    let mut in_rooms = 0;
    for file in tree.files.iter().filter(|f| f.module.0 == 0) {
        let top = file.module.1.first().map(String::as_str).unwrap_or("");
        let uses = engine_uses(&tree, file);
        if ENGINE_ROOMS.contains(&top) {
            in_rooms += uses.len();
        } else {
            wrong.extend(uses);
        }
    }
    // The core itself runs the engines: the scan must see that.
    assert!(
        in_rooms > 5,
        "the scan found too few engine calls in the core"
    );
    assert!(
        wrong.is_empty(),
        "code outside the decision core (src/verdict/) reaches an engine:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn an_engine_named_outside_the_core_is_found() {
    let tree = Tree::read();
    let ast = syn::parse_str(
        "use crate::check;
         use crate::ser::is_serializable;
         fn f() {
             check::check(h, l, o);
             crate::ser::check_strong(h, l, o);
             crate::verdict::engines::check(h, l, o);
             crate::verdict::decide(i, l, e, m);
         }
         #[cfg(test)]
         mod tests {
             fn g() { crate::verdict::engines::check_strong(h, l, o); }
         }",
    )
    .unwrap();
    let file = SourceFile {
        path: "src/pipeline/example.rs".to_string(),
        module: (0, vec!["pipeline".to_string(), "example".to_string()]),
        ast,
        test: false,
    };
    let found = engine_uses(&tree, &file);
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(found[0].contains("`crate::ser::is_serializable`"));
    assert!(found[1].contains("`check::check`"));
    assert!(found[2].contains("`crate::ser::check_strong`"));
    assert!(found[3].contains("library code runs an engine itself"));
}
