//! Scalar functions and the special forms over values, as PostgreSQL 15 defines them
//! (documentation §9.3 "Mathematical Functions", §9.4 "String Functions and Operators", §9.7.1
//! "LIKE", §9.9 "date_trunc", §9.18 "Conditional Expressions"): a NULL argument makes the
//! strict ones NULL; COALESCE, NULLIF, GREATEST, LEAST and CONCAT read NULLs as PostgreSQL
//! does.

use std::cmp::Ordering;

use sqlparser::ast::Expr;

use super::{coerce, compare, eval, plain, timestamp_now, Columns, SERVER_VERSION};
use crate::server::sql::catalog::SqlType;
use crate::server::sql::SqlError;
use crate::store::Value;

/// The functions whose value is NULL when an argument is.
const STRICT: &[&str] = &[
    "lower",
    "upper",
    "length",
    "char_length",
    "abs",
    "substr",
    "substring",
    "btrim",
    "ltrim",
    "rtrim",
    "replace",
    "left",
    "right",
    "strpos",
    "round",
    "floor",
    "ceil",
    "ceiling",
    "mod",
    "date_trunc",
];

/// The special forms: `[NOT] LIKE`/`ILIKE`, `IS [NOT] DISTINCT FROM`, `SUBSTRING(… FROM …
/// FOR …)`, `TRIM([BOTH|LEADING|TRAILING] … FROM …)`, `POSITION(… IN …)`, `CEIL`, `FLOOR`.
pub(super) fn special_form(
    e: &Expr,
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<Value, SqlError> {
    Ok(match e {
        Expr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        }
        | Expr::ILike {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        } => {
            let folded = matches!(e, Expr::ILike { .. });
            let v = eval(expr, cols, params)?;
            let p = eval(pattern, cols, params)?;
            let escape = match escape_char {
                Some(c) => plain(&eval(c, cols, params)?).chars().next(),
                None => Some('\\'),
            };
            match (v, p) {
                (Value::Null, _) | (_, Value::Null) => Value::Null,
                (v, p) if folded => {
                    let (v, p) = (plain(&v).to_lowercase(), plain(&p).to_lowercase());
                    Value::Bool(like(&v, &p, escape)? != *negated)
                }
                (v, p) => Value::Bool(like(&plain(&v), &plain(&p), escape)? != *negated),
            }
        }
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
            let (a, b) = (eval(a, cols, params)?, eval(b, cols, params)?);
            let same = match (&a, &b) {
                (Value::Null, Value::Null) => true,
                (Value::Null, _) | (_, Value::Null) => false,
                _ => compare(&a, &b) == Some(Ordering::Equal),
            };
            Value::Bool(same == matches!(e, Expr::IsNotDistinctFrom(..)))
        }
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            let v = eval(expr, cols, params)?;
            let from = match substring_from {
                Some(f) => eval(f, cols, params)?,
                None => Value::Int(1),
            };
            let n = match substring_for {
                Some(n) => Some(eval(n, cols, params)?),
                None => None,
            };
            if matches!(v, Value::Null)
                || matches!(from, Value::Null)
                || matches!(n, Some(Value::Null))
            {
                Value::Null
            } else {
                let n = n.as_ref().map(int_arg).transpose()?;
                substring(&plain(&v), int_arg(&from)?, n)?
            }
        }
        Expr::Trim {
            trim_where,
            trim_what,
            expr,
            trim_characters,
        } => {
            use sqlparser::ast::TrimWhereField as W;
            let v = eval(expr, cols, params)?;
            let chars = match (trim_what.as_deref(), trim_characters.as_deref()) {
                (Some(w), _) | (None, Some([w])) => eval(w, cols, params)?,
                (None, None) => Value::text(" "),
                _ => return Err(SqlError::unsupported(format!("the call {e}"))),
            };
            let (lead, trail) = match trim_where {
                Some(W::Leading) => (true, false),
                Some(W::Trailing) => (false, true),
                _ => (true, true),
            };
            match (v, chars) {
                (Value::Null, _) | (_, Value::Null) => Value::Null,
                (v, c) => trim(&plain(&v), &plain(&c), lead, trail),
            }
        }
        Expr::Position { expr, r#in } => {
            let (sub, s) = (eval(expr, cols, params)?, eval(r#in, cols, params)?);
            match (s, sub) {
                (Value::Null, _) | (_, Value::Null) => Value::Null,
                (s, sub) => strpos(&plain(&s), &plain(&sub)),
            }
        }
        Expr::Ceil { expr, field } | Expr::Floor { expr, field } => {
            use sqlparser::ast::{CeilFloorKind, DateTimeField};
            if !matches!(
                field,
                CeilFloorKind::DateTimeField(DateTimeField::NoDateTime)
            ) {
                return Err(SqlError::unsupported(format!("the call {e}")));
            }
            let name = if matches!(e, Expr::Ceil { .. }) {
                "ceil"
            } else {
                "floor"
            };
            function(name, vec![eval(expr, cols, params)?], e)?
        }
        other => return Err(SqlError::unsupported(format!("the expression {other}"))),
    })
}

/// An integer argument (a text or a fraction converted as PostgreSQL casts it).
pub(super) fn int_arg(v: &Value) -> Result<i64, SqlError> {
    match coerce(v.clone(), SqlType::Int8)? {
        Value::Int(i) => Ok(i),
        other => Err(SqlError::new(
            "22P02",
            format!("invalid integer argument {other}"),
        )),
    }
}

/// Scalar function `name` of `args` (the call `e`, for messages).
pub(super) fn function(name: &str, args: Vec<Value>, e: &Expr) -> Result<Value, SqlError> {
    if STRICT.contains(&name) && args.iter().any(|v| matches!(v, Value::Null)) {
        return Ok(Value::Null);
    }
    let text = |v: &Value| plain(v);
    Ok(match (name, args.as_slice()) {
        ("version", []) => Value::text(&format!(
            "PostgreSQL {SERVER_VERSION} (isopredict recording server {})",
            env!("CARGO_PKG_VERSION")
        )),
        (
            "now"
            | "current_timestamp"
            | "localtimestamp"
            | "statement_timestamp"
            | "transaction_timestamp"
            | "clock_timestamp",
            [],
        ) => Value::text(&timestamp_now()),
        ("current_database", []) => Value::text("postgres"),
        ("current_schema", []) => Value::text("public"),
        ("current_user" | "session_user" | "user", []) => Value::text("postgres"),
        ("pg_backend_pid", []) => Value::Int(std::process::id() as i64),
        ("lower", [v]) => Value::text(&text(v).to_lowercase()),
        ("upper", [v]) => Value::text(&text(v).to_uppercase()),
        ("length" | "char_length", [v]) => Value::Int(text(v).chars().count() as i64),
        ("abs", [Value::Int(i)]) => Value::Int(i.abs()),
        ("abs", [Value::Real(r)]) => Value::Real(r.abs()),
        ("coalesce", vs) => vs
            .iter()
            .find(|v| !matches!(v, Value::Null))
            .cloned()
            .unwrap_or(Value::Null),
        ("nullif", [a, b]) => match compare(a, b) {
            Some(Ordering::Equal) => Value::Null,
            _ => a.clone(),
        },
        ("greatest" | "least", vs) if !vs.is_empty() => {
            let want = if name == "greatest" {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best: Option<&Value> = None;
            for v in vs.iter().filter(|v| !matches!(v, Value::Null)) {
                if best.map_or(true, |b| compare(v, b) == Some(want)) {
                    best = Some(v);
                }
            }
            best.cloned().unwrap_or(Value::Null)
        }
        ("concat", vs) => Value::text(
            &vs.iter()
                .filter(|v| !matches!(v, Value::Null))
                .map(plain)
                .collect::<String>(),
        ),
        ("concat_ws", [Value::Null, ..]) => Value::Null,
        ("concat_ws", [sep, rest @ ..]) => Value::text(
            &rest
                .iter()
                .filter(|v| !matches!(v, Value::Null))
                .map(plain)
                .collect::<Vec<_>>()
                .join(&text(sep)),
        ),
        ("substr" | "substring", [s, from]) => substring(&text(s), int_arg(from)?, None)?,
        ("substr" | "substring", [s, from, n]) => {
            substring(&text(s), int_arg(from)?, Some(int_arg(n)?))?
        }
        ("btrim", [s]) => trim(&text(s), " ", true, true),
        ("btrim", [s, chars]) => trim(&text(s), &text(chars), true, true),
        ("ltrim", [s]) => trim(&text(s), " ", true, false),
        ("ltrim", [s, chars]) => trim(&text(s), &text(chars), true, false),
        ("rtrim", [s]) => trim(&text(s), " ", false, true),
        ("rtrim", [s, chars]) => trim(&text(s), &text(chars), false, true),
        ("replace", [s, from, to]) => {
            let (s, from) = (text(s), text(from));
            if from.is_empty() {
                Value::text(&s)
            } else {
                Value::text(&s.replace(&from, &text(to)))
            }
        }
        ("left" | "right", [s, n]) => {
            let chars: Vec<char> = text(s).chars().collect();
            let n = int_arg(n)?;
            let len = chars.len() as i64;
            let keep = if n >= 0 { n.min(len) } else { (len + n).max(0) } as usize;
            let part: String = if name == "left" {
                chars[..keep].iter().collect()
            } else {
                chars[chars.len() - keep..].iter().collect()
            };
            Value::text(&part)
        }
        ("strpos", [s, sub]) => strpos(&text(s), &text(sub)),
        ("round", [Value::Int(i)]) => Value::Int(*i),
        ("round", [v]) => Value::Real(real(v, e)?.round()),
        ("round", [v, d]) => {
            let scale = 10f64.powi(int_arg(d)?.clamp(-300, 300) as i32);
            Value::Real((real(v, e)? * scale).round() / scale)
        }
        ("floor" | "ceil" | "ceiling", [Value::Int(i)]) => Value::Int(*i),
        ("floor", [v]) => Value::Real(real(v, e)?.floor()),
        ("ceil" | "ceiling", [v]) => Value::Real(real(v, e)?.ceil()),
        ("mod", [a, b]) => {
            let (a, b) = (int_arg(a)?, int_arg(b)?);
            if b == 0 {
                return Err(SqlError::new("22012", "division by zero"));
            }
            Value::Int(a % b)
        }
        ("date_trunc", [unit, ts]) => date_trunc(&text(unit), &text(ts), e)?,
        _ => return Err(SqlError::unsupported(format!("the function call {e}"))),
    })
}

fn real(v: &Value, e: &Expr) -> Result<f64, SqlError> {
    v.as_f64().ok_or_else(|| {
        SqlError::new(
            "42883",
            format!("function {e} does not exist for the argument {v}"),
        )
    })
}

/// SQL's `substring(s FROM from FOR n)`: characters `from` to `from + n - 1` (1-based), the
/// part inside the string.
pub(super) fn substring(s: &str, from: i64, n: Option<i64>) -> Result<Value, SqlError> {
    let chars: Vec<char> = s.chars().collect();
    let end = match n {
        Some(n) if n < 0 => {
            return Err(SqlError::new(
                "22011",
                "negative substring length not allowed",
            ))
        }
        Some(n) => from.saturating_add(n),
        None => i64::MAX,
    };
    let lo = from.max(1);
    let hi = end.min(chars.len() as i64 + 1);
    Ok(Value::text(&if hi <= lo {
        String::new()
    } else {
        chars[(lo - 1) as usize..(hi - 1) as usize].iter().collect()
    }))
}

/// `s` without the characters of `chars` at its start (`leading`) and end (`trailing`).
pub(super) fn trim(s: &str, chars: &str, leading: bool, trailing: bool) -> Value {
    let set = |c: char| chars.contains(c);
    let t = if leading {
        s.trim_start_matches(set)
    } else {
        s
    };
    let t = if trailing { t.trim_end_matches(set) } else { t };
    Value::text(t)
}

/// The 1-based character position of `sub` in `s` (0: not found).
pub(super) fn strpos(s: &str, sub: &str) -> Value {
    Value::Int(match s.find(sub) {
        Some(byte) => s[..byte].chars().count() as i64 + 1,
        None => 0,
    })
}

/// One token of a LIKE pattern.
#[derive(Clone, Copy, PartialEq)]
enum Token {
    Char(char),
    One,
    Many,
}

/// Whether `s` matches LIKE pattern `pattern` (`%` any run, `_` one character, `escape`
/// taking the next character literally), or `22025` for a pattern ending in the escape.
pub(super) fn like(s: &str, pattern: &str, escape: Option<char>) -> Result<bool, SqlError> {
    let mut tokens = Vec::with_capacity(pattern.len());
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        tokens.push(if Some(c) == escape {
            match it.next() {
                Some(n) => Token::Char(n),
                None => {
                    return Err(SqlError::new(
                        "22025",
                        "LIKE pattern must not end with escape character",
                    ))
                }
            }
        } else if c == '%' {
            Token::Many
        } else if c == '_' {
            Token::One
        } else {
            Token::Char(c)
        });
    }
    let s: Vec<char> = s.chars().collect();
    // Greedy matching that backtracks to the last `%` (linear in practice).
    let (mut i, mut p) = (0, 0);
    let mut back: Option<(usize, usize)> = None;
    while i < s.len() {
        match tokens.get(p) {
            Some(Token::Char(c)) if *c == s[i] => (i, p) = (i + 1, p + 1),
            Some(Token::One) => (i, p) = (i + 1, p + 1),
            Some(Token::Many) => {
                back = Some((p, i));
                p += 1;
            }
            _ => match back {
                Some((bp, bi)) => {
                    back = Some((bp, bi + 1));
                    (i, p) = (bi + 1, bp + 1);
                }
                None => return Ok(false),
            },
        }
    }
    Ok(tokens[p..].iter().all(|t| *t == Token::Many))
}

/// `date_trunc(unit, ts)` over a timestamp kept as text (`YYYY-MM-DD HH:MM:SS[.ffffff]`).
fn date_trunc(unit: &str, ts: &str, e: &Expr) -> Result<Value, SqlError> {
    let bad = || SqlError::new("22007", format!("invalid timestamp \"{ts}\" in {e}"));
    let date = ts.get(..10).ok_or_else(bad)?;
    let time = ts.get(11..19).unwrap_or("00:00:00");
    let (year, month, day) = (&date[..4], &date[5..7], &date[8..10]);
    let (hour, minute, second) = (
        time.get(..2).ok_or_else(bad)?,
        time.get(3..5).ok_or_else(bad)?,
        time.get(6..8).ok_or_else(bad)?,
    );
    let t = match unit.to_ascii_lowercase().as_str() {
        "year" => format!("{year}-01-01 00:00:00"),
        "month" => format!("{year}-{month}-01 00:00:00"),
        "day" => format!("{year}-{month}-{day} 00:00:00"),
        "hour" => format!("{year}-{month}-{day} {hour}:00:00"),
        "minute" => format!("{year}-{month}-{day} {hour}:{minute}:00"),
        "second" => format!("{year}-{month}-{day} {hour}:{minute}:{second}"),
        other => {
            return Err(SqlError::unsupported(format!(
                "date_trunc to the unit {other}"
            )))
        }
    };
    Ok(Value::text(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_as_postgresql_does() {
        let m = |s: &str, p: &str| like(s, p, Some('\\')).unwrap();
        assert!(m("alice", "a%"));
        assert!(m("alice", "%ic%"));
        assert!(m("alice", "_lice"));
        assert!(!m("alice", "_ice"));
        assert!(m("a%b", "a\\%b"));
        assert!(!m("axb", "a\\%b"));
        assert!(m("aaab", "%a%ab"));
        assert!(m("", "%"));
        assert!(!m("", "_"));
        assert_eq!(like("a", "a\\", Some('\\')).unwrap_err().code, "22025");
    }

    #[test]
    fn substrings_and_trims_count_characters() {
        assert_eq!(substring("hello", 2, Some(3)).unwrap(), Value::text("ell"));
        assert_eq!(substring("hello", 0, Some(3)).unwrap(), Value::text("he"));
        assert_eq!(substring("héllo", 2, None).unwrap(), Value::text("éllo"));
        assert_eq!(substring("x", 1, Some(-1)).unwrap_err().code, "22011");
        assert_eq!(trim("xxhixx", "x", true, false), Value::text("hixx"));
        assert_eq!(strpos("héllo", "llo"), Value::Int(3));
    }
}
