//! Values held by plain keys of the store.
//!
//! MonkeyDB (OOPSLA'21) keeps every cell as a string and compares `=`/`!=` as strings and
//! `<`, `<=`, `>`, `>=` as floating-point numbers. Here values are typed; [`Value::sql_eq`] and
//! [`Value::sql_cmp`] give the same answers for the values the workloads store (numbers compare
//! numerically whether integer or real, texts compare as texts).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A value stored under a plain key.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL (MonkeyDB's literal text `NULL`).
    Null,
    /// A Boolean (set membership, flags).
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// A text (cheap to clone).
    Text(Arc<str>),
}

impl Value {
    /// A text value.
    pub fn text(s: &str) -> Value {
        Value::Text(Arc::from(s))
    }

    /// The number this value holds, if it is numeric (an integer, a real, or a text that
    /// parses as a number, as MonkeyDB parses cells).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            Value::Text(t) => t.trim().parse().ok(),
            Value::Bool(_) | Value::Null => None,
        }
    }

    /// The integer this value holds (reals are truncated; texts parsed), if numeric.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Real(r) => Some(*r as i64),
            Value::Text(t) => t
                .trim()
                .parse()
                .ok()
                .or_else(|| t.trim().parse::<f64>().ok().map(|f| f as i64)),
            Value::Bool(_) | Value::Null => None,
        }
    }

    /// The text of a text value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// SQL `=` as MonkeyDB evaluates it: numbers numerically, everything else by its text.
    pub fn sql_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Int(_) | Value::Real(_), Value::Int(_) | Value::Real(_)) => {
                self.as_f64() == other.as_f64()
            }
            (Value::Text(a), Value::Text(b)) => a == b,
            _ => self.to_string() == other.to_string(),
        }
    }

    /// SQL `<`-style comparison: numerically when both are numeric, otherwise by text.
    pub fn sql_cmp(&self, other: &Value) -> Ordering {
        match (self.as_f64(), other.as_f64()) {
            (Some(a), Some(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            _ => self.to_string().cmp(&other.to_string()),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{r}"),
            Value::Text(t) => write!(f, "{t}"),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::text(v)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(Arc::from(v))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_comparisons() {
        assert!(Value::Int(3).sql_eq(&Value::Real(3.0)));
        assert!(!Value::Int(3).sql_eq(&Value::Int(4)));
        assert!(Value::text("a").sql_eq(&Value::text("a")));
        assert_eq!(Value::Real(4.5).sql_cmp(&Value::Int(5)), Ordering::Less);
        assert_eq!(Value::text("10").sql_cmp(&Value::Int(9)), Ordering::Greater);
        assert_eq!(Value::text("2500.0").as_i64(), Some(2500));
    }
}
