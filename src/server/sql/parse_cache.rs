//! A connection's parse cache: statements parsed once per *shape*, the text with its literals
//! taken out — as `pg_stat_statements` normalises a query (PostgreSQL's
//! `contrib/pg_stat_statements`, "query normalization"). A client that inlines its values
//! (pgbench `-M simple`, psql scripts, drivers without server-side parameters) sends a new text
//! for every value, so a cache keyed by the text alone would rarely hit; keyed by the shape,
//! `SELECT v FROM bench WHERE id = 17` and `… WHERE id = 912` share one parse.
//!
//! How: the text is scanned once for plain literals — unsigned numbers (`17`, `2.5`) and
//! standard strings (`'abc'`) — each replaced by a placeholder numbered after the text's own
//! (`$1`…): that is the shape, the cache's key (with the literals' kinds). The first text of a
//! shape is parsed as sent, the shape itself is parsed too, and the shape's statements with the
//! literals put back in their placeholders must equal the text's own statements; only then is
//! the shape cached (else it is remembered as one to parse every time: a literal the grammar
//! reads as something other than a value, `varchar(20)`, `DATE '…'`). A later text of the same
//! shape gets a copy of the shape's statements with its own literals put in: the statements
//! sqlparser returns for that text, without tokenizing and parsing it.
//!
//! Texts with anything the scan does not read exactly as PostgreSQL does (a backslash, a block
//! comment, a dollar-quoted or prefixed string such as `E'…'`) are parsed as sent, uncached.

use std::ops::ControlFlow;

use rustc_hash::FxHashMap;
use sqlparser::ast::{Statement, Value, ValueWithSpan, VisitMut, VisitorMut};

use super::SqlError;

/// Shapes kept per connection; past this many the cache starts again empty.
const CAPACITY: usize = 256;

/// A literal taken out of a text: where its value is, and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Literal {
    /// The value's bytes in the text (a string's without its quotes).
    start: usize,
    end: usize,
    kind: LiteralKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LiteralKind {
    Number,
    String,
}

/// A text's shape: its key, the length of the shape's text in the key, the number its
/// placeholders start after, and the literals in order.
#[derive(Debug, Default)]
struct Shape {
    /// The shape's text, then a NUL and one letter per literal (`n` number, `s` string).
    key: String,
    text_len: usize,
    first_placeholder: usize,
    literals: Vec<Literal>,
}

/// A connection's parse cache (see the module documentation).
#[derive(Debug, Default)]
pub struct ParseCache {
    /// Shape key → the shape's statements, or `None`: the shape is parsed every time.
    shapes: FxHashMap<String, Option<Vec<Statement>>>,
    /// The shape of the text being parsed (kept to reuse its buffers).
    shape: Shape,
}

impl ParseCache {
    /// The statements of `text`, as [`super::parse`] returns them.
    pub fn parse(&mut self, text: &str) -> Result<Vec<Statement>, SqlError> {
        if !self.shape.read(text) {
            return super::parse(text);
        }
        if let Some(cached) = self.shapes.get(self.shape.key.as_str()) {
            return match cached {
                Some(statements) => {
                    let mut statements = statements.clone();
                    self.shape.fill(text, &mut statements);
                    Ok(statements)
                }
                None => super::parse(text),
            };
        }
        let parsed = super::parse(text)?;
        let entry = self.shape.statements_if_faithful(text, &parsed);
        if self.shapes.len() >= CAPACITY {
            self.shapes.clear();
        }
        self.shapes.insert(self.shape.key.clone(), entry);
        Ok(parsed)
    }

    /// Shapes cached (with statements) and shapes parsed every time.
    pub fn counts(&self) -> (usize, usize) {
        let cached = self.shapes.values().filter(|s| s.is_some()).count();
        (cached, self.shapes.len() - cached)
    }
}

/// Identifier characters (and any byte of a non-ASCII character).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

impl Shape {
    /// Reads `text`'s shape; `false`: the text is not one the scan reads exactly.
    fn read(&mut self, text: &str) -> bool {
        self.key.clear();
        self.literals.clear();
        let bytes = text.as_bytes();
        if bytes.contains(&b'\\') {
            return false;
        }
        let Some(own) = own_placeholders(bytes) else {
            return false;
        };
        self.first_placeholder = own;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let after_word = i > 0 && (is_word_byte(bytes[i - 1]) || bytes[i - 1] == b'.');
            let next = bytes.get(i + 1).copied();
            let end = match b {
                b'\'' if i > 0 && (is_word_byte(bytes[i - 1]) || bytes[i - 1] == b'&') => {
                    return false; // E'…', U&'…', B'…', X'…', N'…'
                }
                b'\'' => {
                    let Some(close) = quoted_end(bytes, i) else {
                        return false;
                    };
                    let content = &bytes[i + 1..close - 1];
                    if content.contains(&b'\'') {
                        self.key.push_str(&text[i..close]); // '' inside: kept as written
                    } else {
                        self.placeholder(i + 1, close - 1, LiteralKind::String);
                    }
                    i = close;
                    continue;
                }
                b'"' => {
                    let Some(close) = quoted_end(bytes, i) else {
                        return false;
                    };
                    close
                }
                b'-' if next == Some(b'-') => bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |n| i + n),
                b'/' if next == Some(b'*') => return false,
                b'0'..=b'9' if !after_word => {
                    let end = number_end(bytes, i);
                    if end.1 {
                        self.placeholder(i, end.0, LiteralKind::Number);
                        i = end.0;
                        continue;
                    }
                    end.0
                }
                b if is_word_byte(b) => {
                    i + bytes[i..]
                        .iter()
                        .position(|&c| !is_word_byte(c))
                        .unwrap_or(bytes.len() - i)
                }
                _ => i + 1,
            };
            self.key.push_str(&text[i..end]);
            i = end;
        }
        self.text_len = self.key.len();
        self.key.push('\0');
        for l in &self.literals {
            self.key.push(match l.kind {
                LiteralKind::Number => 'n',
                LiteralKind::String => 's',
            });
        }
        true
    }

    /// Takes out the literal at `start..end` of the text: a placeholder in its place.
    fn placeholder(&mut self, start: usize, end: usize, kind: LiteralKind) {
        self.literals.push(Literal { start, end, kind });
        let n = self.first_placeholder + self.literals.len();
        self.key.push('$');
        self.key.push_str(&n.to_string());
    }

    /// The shape's statements if, with `text`'s literals put back, they are `parsed` (the
    /// statements of `text`); `None` otherwise.
    fn statements_if_faithful(&self, text: &str, parsed: &[Statement]) -> Option<Vec<Statement>> {
        let shape = super::parse(&self.key[..self.text_len]).ok()?;
        let mut filled = shape.clone();
        if !self.fill(text, &mut filled) || filled != parsed {
            return None;
        }
        Some(shape)
    }

    /// Puts `text`'s literals into the placeholders of `statements`; `false` if some literal
    /// had no placeholder to go to.
    fn fill(&self, text: &str, statements: &mut [Statement]) -> bool {
        let mut filler = Filler {
            text,
            shape: self,
            filled: 0,
        };
        for s in statements.iter_mut() {
            let _ = s.visit(&mut filler);
        }
        filler.filled == self.literals.len()
    }
}

/// Puts literals into placeholders (a visitor of the statements' values).
struct Filler<'a> {
    text: &'a str,
    shape: &'a Shape,
    filled: usize,
}

impl VisitorMut for Filler<'_> {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        let Value::Placeholder(p) = &value.value else {
            return ControlFlow::Continue(());
        };
        let Some(n) = p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) else {
            return ControlFlow::Continue(());
        };
        let Some(l) = n
            .checked_sub(self.shape.first_placeholder + 1)
            .and_then(|i| self.shape.literals.get(i))
        else {
            return ControlFlow::Continue(());
        };
        let written = self.text[l.start..l.end].to_string();
        value.value = match l.kind {
            LiteralKind::Number => Value::Number(written, false),
            LiteralKind::String => Value::SingleQuotedString(written),
        };
        self.filled += 1;
        ControlFlow::Continue(())
    }
}

/// The highest `$n` the text itself holds (0: none); `None` if it holds a `$` that is not a
/// placeholder (a dollar-quoted string, `$tag$`).
fn own_placeholders(bytes: &[u8]) -> Option<usize> {
    let mut highest = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'$' || (i > 0 && is_word_byte(bytes[i - 1])) {
            continue;
        }
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 || digits > 6 {
            return None;
        }
        let n: usize = std::str::from_utf8(&bytes[i + 1..i + 1 + digits])
            .ok()?
            .parse()
            .ok()?;
        highest = highest.max(n);
    }
    Some(highest)
}

/// The end (one past the closing quote) of the standard string (`'`) or quoted identifier
/// (`"`) opening at `open`, where a doubled quote stands for one inside it.
fn quoted_end(bytes: &[u8], open: usize) -> Option<usize> {
    let quote = bytes[open];
    let mut i = open + 1;
    loop {
        let at = i + bytes.get(i..)?.iter().position(|&c| c == quote)?;
        if bytes.get(at + 1) == Some(&quote) {
            i = at + 2;
        } else {
            return Some(at + 1);
        }
    }
}

/// The end of the number starting at `start` (digits, then optionally `.` and digits), and
/// whether it is a plain literal: not followed by an exponent, another `.` or a word character
/// (`1e5`, `0x1f`, `1_000`, `1.2.3` are kept as written).
fn number_end(bytes: &[u8], start: usize) -> (usize, bool) {
    let digits_from = |i: usize| i + bytes[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut end = digits_from(start);
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits_from(end + 1);
    }
    match bytes.get(end) {
        Some(&c) if is_word_byte(c) || c == b'.' => {
            let rest = bytes[end..]
                .iter()
                .position(|&c| !(is_word_byte(c) || c == b'.'))
                .map_or(bytes.len(), |n| end + n);
            (rest, false)
        }
        _ => (end, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_of(text: &str) -> Option<(String, Vec<&str>)> {
        let mut shape = Shape::default();
        if !shape.read(text) {
            return None;
        }
        let values = shape
            .literals
            .iter()
            .map(|l| &text[l.start..l.end])
            .collect();
        Some((shape.key[..shape.text_len].to_string(), values))
    }

    #[test]
    fn a_text_s_plain_literals_become_placeholders() {
        let (key, values) =
            shape_of("UPDATE bench SET v = v + 5 WHERE id = 917 AND name = 'x y' AND r = 2.5;")
                .unwrap();
        assert_eq!(
            key,
            "UPDATE bench SET v = v + $1 WHERE id = $2 AND name = $3 AND r = $4;"
        );
        assert_eq!(values, ["5", "917", "x y", "2.5"]);
        // Numbers inside names, quoted names, comments and strings with quotes stay as written;
        // the text's own placeholders are kept and the literals numbered after them.
        let (key, values) = shape_of(
            "SELECT t2.c1, \"a 1\" FROM t2 -- 7 o'clock\nWHERE x = $2 AND y = 'it''s' AND z = -3",
        )
        .unwrap();
        assert_eq!(
            key,
            "SELECT t2.c1, \"a 1\" FROM t2 -- 7 o'clock\nWHERE x = $2 AND y = 'it''s' AND z = -$3"
        );
        assert_eq!(values, ["3"]);
        let (key, _) = shape_of("SELECT 1e5, 0x1f, 1.2.3, x.5").unwrap();
        assert_eq!(key, "SELECT 1e5, 0x1f, 1.2.3, x.5");
    }

    #[test]
    fn texts_the_scan_cannot_read_exactly_are_not_shaped() {
        for text in [
            "SELECT E'a\\'b'",
            "SELECT 'a\\b'",
            "SELECT $$x$$",
            "SELECT /* 5 */ 1",
            "SELECT U&'x'",
            "SELECT 'open",
        ] {
            assert!(shape_of(text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_cached_shape_gives_the_statements_the_parser_gives() {
        let mut cache = ParseCache::default();
        let texts = [
            "SELECT v FROM bench WHERE id = 17",
            "SELECT v FROM bench WHERE id = 912",
            "UPDATE bench SET v = v + 3 WHERE id = 5;",
            "UPDATE bench SET v = v + 9 WHERE id = 1000;",
            "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'it''s'); SELECT 4 LIMIT 2",
            "INSERT INTO t (a, b) VALUES (7, 'y'), (8, 'it''s'); SELECT 5 LIMIT 1",
            "SELECT * FROM t WHERE a = $1 AND b = 'z' ORDER BY 1",
            "SELECT * FROM t WHERE a = $1 AND b = 'w' ORDER BY 2",
            "CREATE TABLE t (c varchar(20))",
            "CREATE TABLE t (c varchar(30))",
        ];
        for text in texts {
            assert_eq!(cache.parse(text), super::super::parse(text), "{text}");
        }
        // Four shapes cached; varchar(n) is a type's length, not a value: parsed every time.
        assert_eq!(cache.counts(), (4, 1));
        // A syntax error is the parser's.
        assert_eq!(cache.parse("SELEC 1"), super::super::parse("SELEC 1"));
    }
}
