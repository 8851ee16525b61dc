//! A small EDN reader (the subset Jepsen histories use, and the rest of EDN skipped safely):
//! nil, booleans, integers (with an optional `N`), floats, strings, characters, keywords,
//! symbols, lists, vectors, maps, sets, tagged values (`#inst "…"`), `#_` discards and `;`
//! comments. Strings and names borrow from the input; nesting deeper than [`MAX_DEPTH`] is
//! an error, so hostile input cannot overflow the stack.
//!
//! Written here rather than taken from a crate: `edn-rs` is deprecated, and `edn-format`
//! builds a `BTreeMap` per map and pulls in big-number, date and UUID crates, while a history
//! reader needs only Jepsen's subset, zero-copy strings and byte offsets for error lines.

use std::borrow::Cow;

/// Deepest nesting accepted.
pub(crate) const MAX_DEPTH: usize = 64;

/// An EDN value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edn<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    /// An integer beyond the 64-bit range (its text, sign and digits): no history value is
    /// that large, and an error says so instead of showing a float the input does not hold.
    BigInt(Cow<'a, str>),
    Float(f64),
    Str(Cow<'a, str>),
    Char(char),
    /// A keyword, without its `:`.
    Keyword(&'a str),
    Symbol(&'a str),
    List(Vec<Edn<'a>>),
    Vector(Vec<Edn<'a>>),
    Set(Vec<Edn<'a>>),
    Map(Vec<(Edn<'a>, Edn<'a>)>),
    Tagged(&'a str, Box<Edn<'a>>),
}

impl<'a> Edn<'a> {
    /// The value of keyword key `name` in a map.
    pub(crate) fn get(&self, name: &str) -> Option<&Edn<'a>> {
        match self {
            Edn::Map(entries) => entries
                .iter()
                .find(|(k, _)| {
                    matches!(k, Edn::Keyword(n) if *n == name)
                        || matches!(k, Edn::Str(s) if s == name)
                })
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The elements of a vector or list.
    pub(crate) fn items(&self) -> Option<&[Edn<'a>]> {
        match self {
            Edn::Vector(v) | Edn::List(v) => Some(v),
            _ => None,
        }
    }

    /// A keyword's or string's text (a leading `:` of a string removed): how Jepsen's JSON
    /// rendering writes keywords.
    pub(crate) fn word(&self) -> Option<&str> {
        match self {
            Edn::Keyword(k) => Some(k),
            Edn::Str(s) => Some(s.strip_prefix(':').unwrap_or(s)),
            _ => None,
        }
    }

    /// Converts a JSON value (Jepsen's JSON rendering) into the same shape.
    pub(crate) fn from_json(v: serde_json::Value) -> Edn<'static> {
        use serde_json::Value;
        match v {
            Value::Null => Edn::Nil,
            Value::Bool(b) => Edn::Bool(b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Edn::Int(i),
                None if n.is_u64() => Edn::BigInt(Cow::Owned(n.to_string())),
                None => Edn::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Edn::Str(Cow::Owned(s)),
            Value::Array(a) => Edn::Vector(a.into_iter().map(Edn::from_json).collect()),
            Value::Object(o) => Edn::Map(
                o.into_iter()
                    .map(|(k, v)| (Edn::Str(Cow::Owned(k)), Edn::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// A short description for error messages.
    pub(crate) fn describe(&self) -> String {
        if let Edn::BigInt(t) = self {
            return format!("the integer {t}, beyond the 64-bit range");
        }
        let s = format!("{self:?}");
        let mut out: String = s.chars().take(60).collect();
        if s.chars().count() > 60 {
            out.push('…');
        }
        out
    }
}

/// A parse error at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EdnError {
    pub offset: usize,
    pub message: String,
}

/// A reader over a sequence of top-level EDN values.
pub(crate) struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pub(crate) pos: usize,
}

/// Bytes that end a token: ASCII whitespace, `,`, brackets, `"` and `;`.
const DELIMITERS: [bool; 256] = {
    let mut table = [false; 256];
    let delimiters = b" \t\n\x0c\r,()[]{}\";";
    let mut i = 0;
    while i < delimiters.len() {
        table[delimiters[i] as usize] = true;
        i += 1;
    }
    table
};

#[inline]
fn is_delimiter(b: u8) -> bool {
    DELIMITERS[b as usize]
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    fn error<T>(&self, offset: usize, message: impl Into<String>) -> Result<T, EdnError> {
        Err(EdnError {
            offset,
            message: message.into(),
        })
    }

    /// Skips whitespace, commas and comments; `#_` discards are handled by [`Self::value`].
    pub(crate) fn skip(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b.is_ascii_whitespace() || b == b',' {
                self.pos += 1;
            } else if b == b';' {
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Whether only whitespace and comments remain.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip();
        self.pos >= self.bytes.len()
    }

    /// Reads the next value (after whitespace); `None` at the end of the input.
    #[cfg(test)]
    pub(crate) fn next_value(&mut self) -> Result<Option<(usize, Edn<'a>)>, EdnError> {
        if !self.next_start()? {
            return Ok(None);
        }
        let start = self.pos;
        Ok(Some((start, self.value(0)?)))
    }

    /// Skips whitespace, comments and `#_` discards up to the next value; `false` at the end
    /// of the input.
    pub(crate) fn next_start(&mut self) -> Result<bool, EdnError> {
        loop {
            if self.at_end() {
                return Ok(false);
            }
            if self.bytes[self.pos..].starts_with(b"#_") {
                self.pos += 2;
                self.skip_value(0)?;
                continue;
            }
            return Ok(true);
        }
    }

    /// Skips whitespace, comments and `#_` discards inside a collection at `depth`.
    pub(crate) fn skip_discards(&mut self, depth: usize) -> Result<(), EdnError> {
        loop {
            self.skip();
            if self.bytes[self.pos..].starts_with(b"#_") {
                self.pos += 2;
                self.skip_value(depth + 1)?;
            } else {
                return Ok(());
            }
        }
    }

    /// The byte at the reading position, if any.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// The text between two offsets (on character boundaries: value starts and ends).
    pub(crate) fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    /// An error at `offset`.
    pub(crate) fn error_at(&self, offset: usize, message: impl Into<String>) -> EdnError {
        EdnError {
            offset,
            message: message.into(),
        }
    }

    /// Skips one value, checking it as [`Self::value`] does but building nothing for
    /// collections (so skipping a big value allocates nothing).
    pub(crate) fn skip_value(&mut self, depth: usize) -> Result<(), EdnError> {
        self.skip();
        if depth > MAX_DEPTH {
            return self.error(self.pos, format!("values nested deeper than {MAX_DEPTH}"));
        }
        let start = self.pos;
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                self.skip_seq(b')', depth).map(drop)
            }
            Some(b'[') => {
                self.pos += 1;
                self.skip_seq(b']', depth).map(drop)
            }
            Some(b'{') => {
                self.pos += 1;
                if self.skip_seq(b'}', depth)? % 2 != 0 {
                    return self.error(start, "a map with an odd number of forms");
                }
                Ok(())
            }
            Some(b'#') => {
                self.pos += 1;
                match self.peek() {
                    Some(b'{') => {
                        self.pos += 1;
                        self.skip_seq(b'}', depth).map(drop)
                    }
                    Some(b'_') => {
                        self.pos += 1;
                        self.skip_value(depth + 1)?;
                        self.skip_value(depth)
                    }
                    _ => {
                        if self.token().is_empty() {
                            return self.error(start, "`#` without a tag");
                        }
                        self.skip_value(depth + 1)
                    }
                }
            }
            // The commonest scalars, checked without converting them: a keyword, or an
            // integer of at most 18 digits (which always fits an i64).
            Some(b) if b == b':' || b.is_ascii_digit() => {
                let t = self.token().as_bytes();
                let plain = if b == b':' {
                    t.len() > 1
                } else {
                    t.len() <= 18 && t.iter().all(u8::is_ascii_digit)
                };
                if !plain {
                    self.pos = start;
                    self.value(depth)?;
                }
                Ok(())
            }
            // Other scalars allocate nothing (an escaped string aside).
            _ => self.value(depth).map(drop),
        }
    }

    /// Skips the items of a collection up to `close` (the opening byte consumed); returns
    /// how many there were. Errors as [`Self::seq`].
    fn skip_seq(&mut self, close: u8, depth: usize) -> Result<usize, EdnError> {
        let mut items = 0;
        self.each_item(close, depth, Self::skip_value, |r, depth| {
            r.skip_value(depth)?;
            items += 1;
            Ok(())
        })?;
        Ok(items)
    }

    /// Goes through the items of a collection up to `close` (the opening byte consumed):
    /// `item` reads each item at `depth + 1`, `discard` each `#_` discarded one. Errors: the
    /// collection never closed (at its opening byte), a closing byte of another kind, or an
    /// item's error.
    #[inline(always)]
    fn each_item(
        &mut self,
        close: u8,
        depth: usize,
        discard: fn(&mut Self, usize) -> Result<(), EdnError>,
        mut item: impl FnMut(&mut Self, usize) -> Result<(), EdnError>,
    ) -> Result<(), EdnError> {
        let open = self.pos - 1;
        loop {
            self.skip();
            match self.bytes.get(self.pos) {
                None => {
                    return self.error(
                        open,
                        format!("`{}` is never closed", self.bytes[open] as char),
                    )
                }
                Some(&b) if b == close => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b')' | b']' | b'}') => {
                    return self.error(
                        self.pos,
                        format!("unexpected `{}`", self.bytes[self.pos] as char),
                    )
                }
                Some(b'#') if self.bytes[self.pos..].starts_with(b"#_") => {
                    self.pos += 2;
                    discard(self, depth + 1)?;
                }
                Some(_) => item(self, depth + 1)?,
            }
        }
    }

    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while self.pos < self.bytes.len() && !is_delimiter(self.bytes[self.pos]) {
            self.pos += 1;
        }
        // Delimiters are ASCII, so the slice ends on a character boundary.
        self.text.get(start..self.pos).unwrap_or("")
    }

    fn seq(&mut self, close: u8, depth: usize) -> Result<Vec<Edn<'a>>, EdnError> {
        let mut items = Vec::new();
        self.each_item(
            close,
            depth,
            |r, depth| r.value(depth).map(drop),
            |r, depth| {
                items.push(r.value(depth)?);
                Ok(())
            },
        )?;
        Ok(items)
    }

    /// Reads one value at nesting `depth` (after whitespace).
    pub(crate) fn value(&mut self, depth: usize) -> Result<Edn<'a>, EdnError> {
        self.skip();
        if depth > MAX_DEPTH {
            return self.error(self.pos, format!("values nested deeper than {MAX_DEPTH}"));
        }
        let start = self.pos;
        let Some(&b) = self.bytes.get(self.pos) else {
            return self.error(start, "the input ends where a value was expected");
        };
        match b {
            b'(' => {
                self.pos += 1;
                Ok(Edn::List(self.seq(b')', depth)?))
            }
            b'[' => {
                self.pos += 1;
                Ok(Edn::Vector(self.seq(b']', depth)?))
            }
            b'{' => {
                self.pos += 1;
                let items = self.seq(b'}', depth)?;
                if items.len() % 2 != 0 {
                    return self.error(start, "a map with an odd number of forms");
                }
                let mut entries = Vec::with_capacity(items.len() / 2);
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Edn::Map(entries))
            }
            b')' | b']' | b'}' => self.error(start, format!("unexpected `{}`", b as char)),
            b'"' => self.string(),
            b'#' => {
                self.pos += 1;
                match self.bytes.get(self.pos) {
                    Some(b'{') => {
                        self.pos += 1;
                        Ok(Edn::Set(self.seq(b'}', depth)?))
                    }
                    Some(b'_') => {
                        self.pos += 1;
                        self.value(depth + 1)?;
                        self.value(depth)
                    }
                    _ => {
                        let tag = self.token();
                        if tag.is_empty() {
                            return self.error(start, "`#` without a tag");
                        }
                        let v = self.value(depth + 1)?;
                        Ok(Edn::Tagged(tag, Box::new(v)))
                    }
                }
            }
            b'\\' => {
                self.pos += 1;
                let t = self.token();
                let c = match t {
                    "newline" => '\n',
                    "space" => ' ',
                    "tab" => '\t',
                    "return" => '\r',
                    _ => match t.chars().next() {
                        Some(c) if t.len() == c.len_utf8() => c,
                        None if self.pos < self.bytes.len() => {
                            // A delimiter character itself, e.g. `\(`.
                            let c = self.bytes[self.pos] as char;
                            self.pos += 1;
                            c
                        }
                        _ => return self.error(start, format!("unknown character `\\{t}`")),
                    },
                };
                Ok(Edn::Char(c))
            }
            b':' => {
                self.pos += 1;
                let t = self.token();
                if t.is_empty() {
                    return self.error(start, "an empty keyword");
                }
                Ok(Edn::Keyword(t))
            }
            _ => {
                let t = self.token();
                if t.is_empty() {
                    self.pos += 1;
                    return self.error(start, format!("unexpected byte 0x{b:02x}"));
                }
                let first = t.as_bytes()[0];
                let numeric = first.is_ascii_digit()
                    || (matches!(first, b'-' | b'+')
                        && t.len() > 1
                        && t.as_bytes()[1].is_ascii_digit());
                if numeric {
                    let digits = t.strip_suffix('N').unwrap_or(t);
                    if let Ok(i) = digits.parse::<i64>() {
                        return Ok(Edn::Int(i));
                    }
                    let unsigned = digits.strip_prefix(['-', '+']).unwrap_or(digits);
                    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
                        return Ok(Edn::BigInt(Cow::Borrowed(digits)));
                    }
                    let float = t.strip_suffix('M').unwrap_or(t);
                    return match float.parse::<f64>() {
                        Ok(f) => Ok(Edn::Float(f)),
                        Err(_) => self.error(start, format!("not a number: `{t}`")),
                    };
                }
                Ok(match t {
                    "nil" => Edn::Nil,
                    "true" => Edn::Bool(true),
                    "false" => Edn::Bool(false),
                    _ => Edn::Symbol(t),
                })
            }
        }
    }

    fn string(&mut self) -> Result<Edn<'a>, EdnError> {
        let start = self.pos;
        self.pos += 1;
        let body = self.pos;
        let mut escaped = false;
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'"' => {
                    let raw = &self.text[body..self.pos];
                    self.pos += 1;
                    return if escaped {
                        unescape(raw)
                            .map(|s| Edn::Str(Cow::Owned(s)))
                            .ok_or(EdnError {
                                offset: start,
                                message: "a bad escape in a string".into(),
                            })
                    } else {
                        Ok(Edn::Str(Cow::Borrowed(raw)))
                    };
                }
                b'\\' => {
                    escaped = true;
                    self.pos += 2;
                }
                _ => self.pos += 1,
            }
        }
        self.error(start, "a string is never closed")
    }
}

fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '"' => '"',
            '\\' => '\\',
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
            }
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Result<Vec<Edn<'_>>, EdnError> {
        let mut r = Reader::new(text);
        let mut v = Vec::new();
        while let Some((_, x)) = r.next_value()? {
            v.push(x);
        }
        Ok(v)
    }

    #[test]
    fn reads_jepsen_ops() {
        let v = all("{:type :ok, :f :txn, :value [[:r 1 [1 2]] [:append :x 3]], :process 0, :time 12N}\n; c\n#_ {:a 1} [nil true \"a\\\"b\" \\c #{1} #inst \"2020\" -5 1.5]").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].get("type"), Some(&Edn::Keyword("ok")));
        assert_eq!(v[0].get("time"), Some(&Edn::Int(12)));
        let items = v[1].items().unwrap();
        assert_eq!(items[0], Edn::Nil);
        assert_eq!(items[2], Edn::Str(Cow::Owned("a\"b".into())));
        assert_eq!(items[3], Edn::Char('c'));
        assert_eq!(items[6], Edn::Int(-5));
    }

    proptest::proptest! {
        /// Skipping a value checks exactly what reading it checks: the same end, or the same
        /// error at the same offset.
        #[test]
        fn skipping_agrees_with_reading(text in "[\\[\\]{}()#_:;\"\\\\ ,\n1aN.-]{0,24}") {
            let mut read = Reader::new(&text);
            let mut skipped = Reader::new(&text);
            let a = read.value(0).map(drop);
            let b = skipped.skip_value(0);
            proptest::prop_assert_eq!(&a, &b);
            if a.is_ok() {
                proptest::prop_assert_eq!(read.pos, skipped.pos);
            }
        }
    }

    #[test]
    fn errors_carry_offsets() {
        assert_eq!(all("[1 2").unwrap_err().offset, 0);
        assert_eq!(all("{:a 1} {:b}").unwrap_err().offset, 7);
        assert_eq!(all("  )").unwrap_err().offset, 2);
        assert!(all(&"[".repeat(100))
            .unwrap_err()
            .message
            .contains("nested"));
        assert!(all("\"abc").is_err());
    }
}
