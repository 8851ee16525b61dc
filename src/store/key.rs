//! Store keys: plain 64-bit keys and set-membership pseudo-keys, and their names in a
//! [`History`](crate::history::History).
//!
//! MonkeyDB (OOPSLA'21) stores plain keys and sets of 64-bit elements; IsoPredict (PLDI'24 §6,
//! its trace reader) treats the membership of element `e` in set `s` as the pseudo-key
//! `Set(s:e)`: INSERT and DELETE write it, CONTAINS reads it. Plain keys are named by their
//! decimal value, as in the artifact's traces.

use std::fmt;

/// A key of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyRef {
    /// A plain key holding a [`Value`](super::Value).
    Plain(u64),
    /// Whether `elem` is a member of set `set` (written by insert/delete, read by contains).
    Member {
        /// The set's id.
        set: u64,
        /// The element.
        elem: u64,
    },
}

impl KeyRef {
    /// The key's name in a History: `"123"` for a plain key, `"Set(s:e)"` for membership.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// Parses a name written by [`KeyRef::name`]; `None` for any other name.
    pub fn parse(name: &str) -> Option<KeyRef> {
        if let Some(inner) = name.strip_prefix("Set(").and_then(|r| r.strip_suffix(')')) {
            let (set, elem) = inner.split_once(':')?;
            return Some(KeyRef::Member {
                set: set.parse().ok()?,
                elem: elem.parse().ok()?,
            });
        }
        name.parse().ok().map(KeyRef::Plain)
    }
}

impl fmt::Display for KeyRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyRef::Plain(k) => write!(f, "{k}"),
            KeyRef::Member { set, elem } => write!(f, "Set({set}:{elem})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in [
            KeyRef::Plain(0),
            KeyRef::Plain(u64::MAX),
            KeyRef::Member {
                set: 7,
                elem: 18088007599891946824,
            },
        ] {
            assert_eq!(KeyRef::parse(&k.name()), Some(k));
        }
        assert_eq!(KeyRef::parse("x"), None);
        assert_eq!(KeyRef::parse("Set(1:)"), None);
    }
}
