//! Test helpers: a compact notation for hand-written histories.

use crate::history::{History, HistoryBuilder, ReadFrom};

/// Builds a history from a compact description: sessions separated by `|`, transactions by
/// `/`, operations `w<key><value>` and `r<key><value>` (one-letter keys; value 0 is the
/// initial value), and a `!` token marks its transaction aborted. Operation i (1-based, in
/// order of appearance) gets input line i. Transaction ids: 1, 2, … session by session.
pub(crate) fn h(spec: &str) -> History {
    let mut b = HistoryBuilder::new("test");
    b.initial_value(0);
    let mut line = 0;
    for session in spec.split('|') {
        let s = b.session(None);
        for txn in session.split('/') {
            let t = b.begin(s, None);
            for token in txn.split_whitespace() {
                if token == "!" {
                    b.abort(t);
                    continue;
                }
                line += 1;
                let mut chars = token.chars();
                let kind = chars.next().unwrap();
                let key = b.key(&chars.next().unwrap().to_string());
                let value: u64 = chars.as_str().parse().unwrap();
                match kind {
                    'w' => b.write(t, key, Some(value), line),
                    'r' => b.read(t, key, Some(value), ReadFrom::Value(value), line),
                    _ => panic!("bad token {token}"),
                }
            }
        }
    }
    b.build().unwrap()
}

/// Two transactions in two sessions both read `x` and `y` from t0; the first writes `x`, the
/// second writes `x` too (a lost update) or, when `skew`, only `y` (a write skew).
pub(crate) fn lost_update_or_write_skew(skew: bool) -> History {
    let mut b = HistoryBuilder::new("pair");
    let x = b.key("x");
    let y = b.key("y");
    let s1 = b.session(None);
    let s2 = b.session(None);
    let t1 = b.begin(s1, None);
    b.read(t1, x, None, ReadFrom::Initial, 0);
    b.read(t1, y, None, ReadFrom::Initial, 0);
    b.write(t1, x, None, 0);
    let t2 = b.begin(s2, None);
    b.read(t2, x, None, ReadFrom::Initial, 0);
    b.read(t2, y, None, ReadFrom::Initial, 0);
    b.write(t2, if skew { y } else { x }, None, 0);
    b.build().unwrap()
}
