//! The one DOT (Graphviz) writer, shared by every DOT rendering: checker violations
//! (`check`, `ser`), predictions (`predict`), the anomaly drawings of `run` (`report`) and the
//! command line's placeholders. A leaf module: it depends on nothing else in the crate.
//!
//! [`DotWriter`] writes a `digraph` statement by statement, indenting by nesting (two spaces
//! per level); every label goes through [`quote`]. Renderers choose the statements and their
//! attributes; the writer owns the syntax.

use std::fmt::{Display, Write as _};

/// A DOT digraph being written (see the module documentation).
#[derive(Debug)]
pub struct DotWriter {
    out: String,
    depth: usize,
}

impl DotWriter {
    /// `digraph NAME {`.
    pub fn digraph(name: &str) -> DotWriter {
        DotWriter {
            out: format!("digraph {name} {{\n"),
            depth: 1,
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }

    /// A statement written as given (`rankdir=TB`, `node [shape=box]`), then `;`.
    pub fn stmt(&mut self, statement: impl Display) -> &mut DotWriter {
        self.indent();
        let _ = writeln!(self.out, "{statement};");
        self
    }

    /// `label="TEXT";` for the graph or the cluster being written.
    pub fn label(&mut self, text: &str) -> &mut DotWriter {
        self.stmt(format_args!("label={}", quote(text)))
    }

    /// `ID [label="TEXT", ATTRS];` (no `, ATTRS` when `attrs` is empty).
    pub fn node(&mut self, id: impl Display, label: &str, attrs: &str) -> &mut DotWriter {
        let sep = if attrs.is_empty() { "" } else { ", " };
        self.stmt(format_args!("{id} [label={}{sep}{attrs}]", quote(label)))
    }

    /// `FROM -> TO [label="TEXT", ATTRS];` (no `, ATTRS` when `attrs` is empty).
    pub fn edge(
        &mut self,
        from: impl Display,
        to: impl Display,
        label: &str,
        attrs: &str,
    ) -> &mut DotWriter {
        let sep = if attrs.is_empty() { "" } else { ", " };
        self.stmt(format_args!(
            "{from} -> {to} [label={}{sep}{attrs}]",
            quote(label)
        ))
    }

    /// `subgraph cluster_NAME {` with its label; statements until [`DotWriter::end_cluster`]
    /// are inside it.
    pub fn begin_cluster(&mut self, name: impl Display, label: &str) -> &mut DotWriter {
        self.indent();
        let _ = writeln!(self.out, "subgraph cluster_{name} {{");
        self.depth += 1;
        self.label(label)
    }

    /// The `}` of the cluster begun last.
    pub fn end_cluster(&mut self) -> &mut DotWriter {
        self.depth -= 1;
        self.indent();
        self.out.push_str("}\n");
        self
    }

    /// The digraph's closing `}` and its text.
    pub fn finish(mut self) -> String {
        debug_assert_eq!(self.depth, 1, "a cluster left open");
        self.out.push_str("}\n");
        self.out
    }
}

/// `s` as a DOT double-quoted string: quotes and backslashes escaped, newlines as `\n`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::{quote, DotWriter};

    #[test]
    fn quotes_escape_what_dot_needs() {
        assert_eq!(quote("t1"), "\"t1\"");
        assert_eq!(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }

    #[test]
    fn the_writer_indents_clusters_and_quotes_labels() {
        let mut w = DotWriter::digraph("g");
        w.label("a \"title\"").stmt("rankdir=TB");
        w.begin_cluster(0, "s1").node("n1", "T1", "style=bold");
        w.end_cluster();
        w.node("n2", "T2", "").edge("n1", "n2", "wr x", "color=red");
        w.edge("n2", "n1", "so", "");
        assert_eq!(
            w.finish(),
            "digraph g {\n  label=\"a \\\"title\\\"\";\n  rankdir=TB;\n  subgraph cluster_0 {\n    \
             label=\"s1\";\n    n1 [label=\"T1\", style=bold];\n  }\n  n2 [label=\"T2\"];\n  \
             n1 -> n2 [label=\"wr x\", color=red];\n  n2 -> n1 [label=\"so\"];\n}\n"
        );
    }
}
