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
