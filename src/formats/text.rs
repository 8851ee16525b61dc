//! Byte-level helpers shared by the line-oriented readers: line iteration, a token cursor and
//! integer parsing without allocation.

use crate::error::InputError;

/// Iterates over the lines of a byte buffer as `(1-based line number, line)`, without the
/// line terminator (`\n` or `\r\n`).
pub(crate) struct Lines<'a> {
    rest: &'a [u8],
    line: u32,
    done: bool,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Lines {
            rest: bytes,
            line: 0,
            done: false,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u32, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.line = self.line.saturating_add(1);
        let (line, rest) = match self.rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
            None => {
                self.done = true;
                if self.rest.is_empty() {
                    return None;
                }
                (self.rest, &self.rest[self.rest.len()..])
            }
        };
        self.rest = rest;
        let line = match line.last() {
            Some(b'\r') => &line[..line.len() - 1],
            _ => line,
        };
        Some((self.line, line))
    }
}

/// A piece of a text made of whole lines, with the number of its first line, so that pieces
/// can be read on several threads: [`LineChunk::lines`] yields exactly the lines, and the line
/// numbers, that [`Lines`] over the whole text yields there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineChunk<'a> {
    /// The 1-based number of the piece's first line.
    pub(crate) first_line: u32,
    /// The piece: whole lines, each ending in `\n` except perhaps the text's last.
    pub(crate) bytes: &'a [u8],
}

impl<'a> LineChunk<'a> {
    /// The piece's lines, numbered as in the whole text.
    pub(crate) fn lines(&self) -> Lines<'a> {
        Lines {
            rest: self.bytes,
            line: self.first_line.saturating_sub(1),
            done: false,
        }
    }
}

/// Splits `bytes` into pieces of whole lines of about `target` bytes each (a piece ends at
/// the first line end at or after `target` bytes; a line longer than that is one piece), and
/// numbers each piece's first line; the newlines are counted in parallel. An empty text has
/// no piece.
pub(crate) fn line_chunks(bytes: &[u8], target: usize) -> Vec<LineChunk<'_>> {
    use rayon::prelude::*;
    let target = target.max(1);
    let mut pieces: Vec<&[u8]> = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0;
    while start < bytes.len() {
        let at_least = start.saturating_add(target);
        let end = if at_least >= bytes.len() {
            bytes.len()
        } else {
            match bytes[at_least - 1..].iter().position(|&b| b == b'\n') {
                Some(i) => at_least + i,
                None => bytes.len(),
            }
        };
        pieces.push(&bytes[start..end]);
        start = end;
    }
    let newlines: Vec<usize> = pieces
        .par_iter()
        .map(|p| p.iter().filter(|&&b| b == b'\n').count())
        .collect();
    let mut first_line: u32 = 1;
    pieces
        .into_iter()
        .zip(newlines)
        .map(|(bytes, n)| {
            let chunk = LineChunk { first_line, bytes };
            first_line = first_line.saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
            chunk
        })
        .collect()
}

/// Strips ASCII spaces and tabs (and a stray `\r`) from both ends.
#[inline]
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r'] = s {
        s = rest;
    }
    s
}

/// Whether a (trimmed) line carries nothing: empty, or a `#` comment.
#[inline]
pub(crate) fn is_blank_or_comment(trimmed: &[u8]) -> bool {
    trimmed.is_empty() || trimmed[0] == b'#'
}

/// Skips a UTF-8 byte order mark.
pub(crate) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Shows a piece of input in an error message: at most 40 characters, lossy UTF-8.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    // Control characters (a NUL byte, a tab) are shown escaped, not printed raw.
    let mut out: String = s
        .chars()
        .take(40)
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// A cursor over one line, for hand-written parsers. Errors are plain strings (the caller
/// adds file and line).
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    /// The unconsumed rest.
    #[inline]
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    /// Whether the rest starts with `literal`; one-byte literals (the separators) compare one
    /// byte instead of calling `memcmp`.
    #[inline]
    fn starts_with(&self, literal: &[u8]) -> bool {
        match literal {
            [b] => self.bytes.get(self.pos) == Some(b),
            _ => self.rest().starts_with(literal),
        }
    }

    #[inline]
    pub(crate) fn skip_spaces(&mut self) {
        while let Some(b' ' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Consumes `literal` (after optional spaces) or fails naming what was expected.
    #[inline]
    pub(crate) fn expect(&mut self, literal: &[u8]) -> Result<(), String> {
        self.skip_spaces();
        if self.starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(self.expected(&format!("`{}`", String::from_utf8_lossy(literal))))
        }
    }

    /// Consumes `literal` if it comes next (after optional spaces).
    #[inline]
    pub(crate) fn eat(&mut self, literal: &[u8]) -> bool {
        self.skip_spaces();
        if self.starts_with(literal) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    /// A message "expected X, found Y".
    pub(crate) fn expected(&self, what: &str) -> String {
        let rest = self.rest();
        if rest.is_empty() {
            format!("expected {what} but the line ends")
        } else {
            format!("expected {what}, found `{}`", excerpt(rest))
        }
    }

    /// Parses an unsigned decimal integer (after optional spaces).
    #[inline]
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, String> {
        self.skip_spaces();
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(&b) = self.bytes.get(self.pos) {
            if !b.is_ascii_digit() {
                break;
            }
            value = match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(b - b'0')))
            {
                Some(v) => v,
                None => {
                    self.pos = start;
                    return Err(format!("{what} does not fit in 64 bits"));
                }
            };
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.expected(what));
        }
        Ok(value)
    }

    /// Consumes bytes up to (not including) `stop`, which must occur; the slice must be
    /// non-empty.
    #[inline]
    pub(crate) fn until(&mut self, stop: u8, what: &str) -> Result<&'a [u8], String> {
        let rest = self.rest();
        match rest.iter().position(|&b| b == stop) {
            Some(0) => Err(format!("empty {what}")),
            Some(i) => {
                self.pos += i;
                Ok(&rest[..i])
            }
            None => Err(format!(
                "{what} is not closed by `{}`: `{}`",
                stop as char,
                excerpt(rest)
            )),
        }
    }

    /// Fails unless only spaces remain.
    #[inline]
    pub(crate) fn end(&mut self) -> Result<(), String> {
        self.skip_spaces();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(format!(
                "unexpected `{}` at the end of the line",
                excerpt(self.rest())
            ))
        }
    }
}

/// Maps byte offsets (or sub-slices) of a text to 1-based lines, moving forward cheaply.
pub(crate) struct LineIndex<'a> {
    text: &'a [u8],
    pos: usize,
    line: u32,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a [u8]) -> Self {
        LineIndex {
            text,
            pos: 0,
            line: 1,
        }
    }

    /// The line of byte `offset` (clamped to the text).
    pub(crate) fn line_at(&mut self, offset: usize) -> u32 {
        let offset = offset.min(self.text.len());
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        let newlines = self.text[self.pos..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.line = self.line.saturating_add(newlines as u32);
        self.pos = offset;
        self.line
    }

    /// The line where `slice`, a part of the text, starts.
    pub(crate) fn line_of(&mut self, slice: &[u8]) -> u32 {
        let offset = (slice.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        self.line_at(offset)
    }
}

/// An [`InputError`] from a serde_json error in a piece of text starting at `base_line`.
pub(crate) fn json_error(source: &str, base_line: u32, e: &serde_json::Error) -> InputError {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    let line = if e.line() == 0 {
        base_line
    } else {
        base_line.saturating_add(e.line() as u32 - 1)
    };
    InputError::new(source, line, format!("invalid JSON: {message}"))
}

/// Checks UTF-8, naming the line of the first invalid byte.
pub(crate) fn utf8<'a>(bytes: &'a [u8], source: &str) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        InputError::new(source, line as u32, "invalid UTF-8")
    })
}

/// A key name given in JSON as a string or an unsigned integer (dbcop variables, Viper and
/// Jepsen keys), borrowed when possible.
pub(crate) enum JsonKey<'a> {
    /// A string.
    Str(std::borrow::Cow<'a, str>),
    /// An integer (named by its decimal form).
    Int(u64),
}

impl JsonKey<'_> {
    /// Appends the name to `out` (cleared first) and returns it.
    pub(crate) fn name<'b>(&'b self, out: &'b mut String) -> &'b str {
        match self {
            JsonKey::Str(s) => s,
            JsonKey::Int(i) => {
                use std::fmt::Write as _;
                out.clear();
                let _ = write!(out, "{i}");
                out
            }
        }
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for JsonKey<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = JsonKey<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key: a string or an unsigned integer")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(JsonKey::Int(v))
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(JsonKey::Str(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsonKey::Str(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_any(V)
    }
}

/// The error for `source:line`.
pub(crate) fn error(source: &str, line: u32, message: impl Into<String>) -> InputError {
    InputError::new(source, line, message)
}

/// Whether `name` is the canonical decimal form of a `u64` (no sign, no leading zeros), so
/// that writing it as an integer and reading it back gives the same name.
pub(crate) fn canonical_u64(name: &str) -> Option<u64> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 20 || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    if !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    name.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_show_control_characters() {
        assert_eq!(excerpt(b"\0"), "\\u{0}");
        assert_eq!(excerpt(b"a\tb"), "a\\tb");
        assert_eq!(excerpt(b"ok"), "ok");
    }

    #[test]
    fn lines_strip_terminators() {
        let v: Vec<_> = Lines::new(b"a\r\nb\n\nc").collect();
        assert_eq!(
            v,
            vec![
                (1, &b"a"[..]),
                (2, &b"b"[..]),
                (3, &b""[..]),
                (4, &b"c"[..])
            ]
        );
        assert_eq!(Lines::new(b"x\n").count(), 1);
        assert_eq!(Lines::new(b"").count(), 0);
    }

    #[test]
    fn line_chunks_yield_the_lines_of_the_whole_text() {
        let texts: &[&[u8]] = &[
            b"",
            b"\n",
            b"a",
            b"a\n",
            b"a\r\nbb\n\nccc\r\n\nd",
            b"one long line without an end",
            b"x\ny\nz\n\n\n",
        ];
        for &text in texts {
            let whole: Vec<_> = Lines::new(text).collect();
            for target in [1, 2, 3, 5, 8, 1000] {
                let chunks = line_chunks(text, target);
                let pieces: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.to_vec()).collect();
                assert_eq!(pieces, text, "{text:?} in pieces of {target}");
                let from_pieces: Vec<_> = chunks.iter().flat_map(|c| c.lines()).collect();
                assert_eq!(from_pieces, whole, "{text:?} in pieces of {target}");
                for c in &chunks[..chunks.len().saturating_sub(1)] {
                    assert_eq!(
                        c.bytes.last(),
                        Some(&b'\n'),
                        "{text:?}: a piece ends a line"
                    );
                }
            }
        }
    }

    #[test]
    fn cursor_parses_numbers_and_reports() {
        let mut c = Cursor::new(b" 12 ,18446744073709551615)");
        assert_eq!(c.u64("key"), Ok(12));
        c.expect(b",").unwrap();
        assert_eq!(c.u64("value"), Ok(u64::MAX));
        assert!(c.expect(b",").unwrap_err().contains("expected `,`"));
        let mut c = Cursor::new(b"18446744073709551616");
        assert!(c.u64("key").unwrap_err().contains("64 bits"));
        let mut c = Cursor::new(b"x");
        assert!(c.u64("key").unwrap_err().contains("expected key"));
    }

    #[test]
    fn canonical_integers() {
        assert_eq!(canonical_u64("0"), Some(0));
        assert_eq!(canonical_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(canonical_u64("18446744073709551616"), None);
        assert_eq!(canonical_u64("007"), None);
        assert_eq!(canonical_u64("-1"), None);
        assert_eq!(canonical_u64(""), None);
        assert_eq!(canonical_u64("Set(1:2)"), None);
    }
}
