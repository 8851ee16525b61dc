//! Printing names that come from the input (key names, transaction and session names) in
//! text reports without letting them act on the reader's terminal or forge report lines.
//!
//! A history file or a `watch` client chooses its key names freely; printed raw, a name with
//! a newline writes a line that looks like the tool's own, and one with an escape sequence
//! (`ESC [ …`) moves the cursor, recolours or retitles the terminal. [`printable`] is the one
//! helper every text report passes such names through: control characters (C0, DEL, C1) and
//! the Unicode bidirectional overrides (which reorder what is shown) become `\u{…}` escapes, a
//! backslash stays itself; every other character is kept. JSON outputs are escaped by JSON.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control character and bidirectional override written as `\u{HEX}`
/// (borrowed when there is none).
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A key's name for a sentence: printable ([`printable`]), and `key 1` when the name is a
/// number (Jepsen's integer keys), which read alone would pass for a value ("both read 1").
pub fn key_in_words(name: &str) -> Cow<'_, str> {
    let numeric = !name.is_empty()
        && name
            .strip_prefix('-')
            .unwrap_or(name)
            .chars()
            .all(|c| c.is_ascii_digit());
    if numeric {
        Cow::Owned(format!("key {name}"))
    } else {
        printable(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("CHECKING.bal[1]"), Cow::Borrowed(_)));
        assert_eq!(printable("x\u{1b}[2Jy"), "x\\u{1b}[2Jy");
        assert_eq!(
            printable("k\nNOCONFLICT: forged"),
            "k\\u{a}NOCONFLICT: forged"
        );
        assert_eq!(
            printable("a\u{202e}b\u{7f}\u{9b}"),
            "a\\u{202e}b\\u{7f}\\u{9b}"
        );
        assert_eq!(printable("é ü 日本 \\"), "é ü 日本 \\");
    }
}
