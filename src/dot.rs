//! Helpers shared by every DOT (Graphviz) rendering: checker violations, predictions and the
//! anomaly drawings of `run`. A leaf module: it depends on nothing else in the crate.

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
    use super::quote;

    #[test]
    fn quotes_escape_what_dot_needs() {
        assert_eq!(quote("t1"), "\"t1\"");
        assert_eq!(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }
}
