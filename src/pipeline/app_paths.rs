//! Whether a replayed application took the path it took when recorded (`isopredict test`):
//! IsoPredict's divergence (PLDI'24 §5) at the level of an application's SQL. Sessions are
//! matched by their recorded id (the replay server records each connection under the id of
//! the recorded session it replays: `application_name`, else connection order), statements by
//! their index in the session. A statement diverges when its SQL differs from the recorded
//! one up to literal values (the application may compute other values from the steered
//! reads: `UPDATE acct SET bal = 120` for `… = 110` is the same path) or when it touched other
//! rows or columns. Only the statements of the transactions the prediction holds are compared
//! (after a session's prediction boundary the application is free to go anywhere). Also here:
//! the store's divergences (a read that could not follow the prediction) in the same words.

use rustc_hash::FxHashMap;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::history::{History, SqlStatement, StatementTable, TxnId};
use crate::store::{Divergence, DivergenceReason};

/// The SQL text with literals replaced by `?`, whitespace and comments dropped, lower case:
/// two statements of the same shape are the same step of the program.
pub fn statement_shape(sql: &str) -> String {
    let dialect = PostgreSqlDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, sql).tokenize() else {
        return sql.split_whitespace().collect::<Vec<_>>().join(" ");
    };
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    for t in tokens {
        match t {
            Token::Whitespace(_) | Token::SemiColon => {}
            Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::EscapedStringLiteral(_)
            | Token::DollarQuotedString(_)
            | Token::NationalStringLiteral(_) => out.push("?".into()),
            other => out.push(other.to_string().to_lowercase()),
        }
    }
    out.join(" ")
}

/// `SQL` with its parameters, for reports: `` `UPDATE acct SET bal = $1 …` ($1 = 110, $2 = 1) ``.
pub fn statement_words(st: &SqlStatement) -> String {
    let sql = st.sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let sql = crate::printable::printable(&sql);
    if st.params.is_empty() {
        return format!("`{sql}`");
    }
    let params: Vec<String> = st
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Some(v) => format!("${} = {}", i + 1, crate::printable::printable(v)),
            None => format!("${} = NULL", i + 1),
        })
        .collect();
    format!("`{sql}` ({})", params.join(", "))
}

/// A history's statements by session (external id): index in session → statement and the
/// keys its operations touched.
struct SessionStatements<'h> {
    name: &'h str,
    by_index: FxHashMap<u32, (&'h SqlStatement, Vec<&'h str>)>,
}

fn statements_by_session(h: &History) -> FxHashMap<u64, SessionStatements<'_>> {
    let mut out = FxHashMap::default();
    let Some(table) = h.statements() else {
        return out;
    };
    let id = |s: usize| h.sessions()[s].external_id.unwrap_or(s as u64);
    for (s, name) in table.session_names().iter().enumerate() {
        out.insert(
            id(s),
            SessionStatements {
                name,
                by_index: FxHashMap::default(),
            },
        );
    }
    for st in table.statements() {
        if let Some(ss) = out.get_mut(&id(st.session)) {
            ss.by_index.insert(st.index, (st, Vec::new()));
        }
    }
    for (op, &s) in table.op_statements().iter().enumerate() {
        let Some(st) = table.statements().get(s as usize) else {
            continue;
        };
        if let Some(ss) = out.get_mut(&id(st.session)) {
            if let Some((_, keys)) = ss.by_index.get_mut(&st.index) {
                let key = h.key_name(h.op(op as u32).key);
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    for ss in out.values_mut() {
        for (_, keys) in ss.by_index.values_mut() {
            keys.sort_unstable();
        }
    }
    out
}

/// Per recorded session (external id): the last statement index of the transactions the
/// prediction holds (its first n committed transactions, n as in `predicted`).
fn predicted_extent(observed: &History, predicted: &History) -> FxHashMap<u64, u32> {
    let mut out = FxHashMap::default();
    let Some(table) = observed.statements() else {
        return out;
    };
    let id = |h: &History, s: usize| h.sessions()[s].external_id.unwrap_or(s as u64);
    let mut held: FxHashMap<u64, usize> = FxHashMap::default();
    for (s, session) in predicted.sessions().iter().enumerate() {
        let n = session
            .txns()
            .filter(|&t| predicted.txn(t).is_committed())
            .count();
        held.insert(id(predicted, s), n);
    }
    for (s, session) in observed.sessions().iter().enumerate() {
        let Some(&n) = held.get(&id(observed, s)) else {
            continue;
        };
        let txns: Vec<TxnId> = session
            .txns()
            .filter(|&t| observed.txn(t).is_committed())
            .take(n)
            .collect();
        let last = txns
            .iter()
            .flat_map(|&t| observed.txn(t).ops())
            .filter_map(|op| table.of_op(op).map(|st| st.index))
            .max();
        if let Some(last) = last {
            out.insert(id(observed, s), last);
        }
    }
    out
}

/// Where the replay (`validating`) left the path the application took when recorded
/// (`observed`), within what `predicted` holds: at most one divergence per session, the first,
/// in words ("the application took another path at …").
pub fn path_divergences(
    observed: &History,
    predicted: &History,
    validating: &History,
) -> Vec<String> {
    let recorded = statements_by_session(observed);
    let replayed = statements_by_session(validating);
    let extent = predicted_extent(observed, predicted);
    let mut ids: Vec<&u64> = extent.keys().collect();
    ids.sort_unstable();
    let mut out = Vec::new();
    for id in ids {
        let Some(rec) = recorded.get(id) else {
            continue;
        };
        let Some(rep) = replayed.get(id) else {
            out.push(format!(
                "the application took another path at {}: it never ran a transaction in the \
                 replay",
                rec.name
            ));
            continue;
        };
        for index in 1..=extent[id] {
            let Some((st, keys)) = rec.by_index.get(&index) else {
                continue;
            };
            let at = format!(
                "the application took another path at {}'s statement #{index}",
                rec.name
            );
            let Some((again, again_keys)) = rep.by_index.get(&index) else {
                out.push(format!(
                    "{at}: recorded {}, the replay sent no statement #{index}",
                    statement_words(st)
                ));
                break;
            };
            if statement_shape(&st.sql) != statement_shape(&again.sql) {
                out.push(format!(
                    "{at}: recorded {}, the replay sent {}",
                    statement_words(st),
                    statement_words(again)
                ));
                break;
            }
            if keys != again_keys {
                out.push(format!(
                    "{at} {}: recorded it touching {}, in the replay {}",
                    statement_words(again),
                    key_list(keys),
                    key_list(again_keys)
                ));
                break;
            }
        }
    }
    out
}

fn key_list(keys: &[&str]) -> String {
    if keys.is_empty() {
        return "no rows".into();
    }
    keys.iter()
        .map(|k| crate::printable::printable(k))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A store divergence (a read that could not follow the prediction) in the application's
/// words: the session's name and the statement that made the read, in `validating`.
pub fn read_divergence_words(
    d: &Divergence,
    validating: &History,
    app_names: &FxHashMap<&str, &str>,
) -> String {
    let d = &Divergence {
        key: d.key.as_deref().map(|k| app_name(k, app_names)),
        reason: match &d.reason {
            DivergenceReason::OtherKey {
                expected: Some(expected),
            } => DivergenceReason::OtherKey {
                expected: Some(app_name(expected, app_names)),
            },
            other => other.clone(),
        },
        ..d.clone()
    };
    let table = validating.statements();
    let session = validating
        .sessions()
        .iter()
        .position(|s| s.external_id == Some(d.session));
    let name = match (session, table) {
        (Some(s), Some(t)) => t.session_names()[s].clone(),
        _ => format!("session {}", d.session),
    };
    let statement = session
        .zip(table)
        .and_then(|(s, t)| divergent_statement(validating, t, s, d));
    match statement {
        Some(st) => format!(
            "{name}, statement #{} {}: {d}",
            st.index,
            statement_words(st)
        ),
        None => format!("{name}: {d}"),
    }
}

fn app_name(store_name: &str, app_names: &FxHashMap<&str, &str>) -> String {
    app_names
        .get(store_name)
        .map_or_else(|| store_name.to_string(), |a| a.to_string())
}

/// The statement of the read `d` names (its transaction's `d.read`-th read of another
/// transaction's write), when the transaction committed.
fn divergent_statement<'t>(
    h: &History,
    table: &'t StatementTable,
    session: usize,
    d: &Divergence,
) -> Option<&'t SqlStatement> {
    let t = h.sessions()[session]
        .txns()
        .filter(|&t| h.txn(t).is_committed())
        .nth(d.txn as usize)?;
    let read = d.read?;
    let op = h
        .txn(t)
        .ops()
        .filter(|&op| h.op(op).kind == crate::history::OpKind::Read && !h.is_internal_read(op))
        .nth(read as usize)?;
    table.of_op(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_ignore_literals_space_and_case() {
        assert_eq!(
            statement_shape("UPDATE acct SET bal = 110 WHERE id = 1"),
            statement_shape("update  acct set bal = 120\n where id = 1;")
        );
        assert_ne!(
            statement_shape("UPDATE acct SET bal = 110 WHERE id = 1"),
            statement_shape("UPDATE acct SET bal = 110, flagged = true WHERE id = 1")
        );
        assert_eq!(
            statement_shape("SELECT owner FROM acct WHERE owner = 'alice'"),
            statement_shape("SELECT owner FROM acct WHERE owner = 'bob'")
        );
    }

    #[test]
    fn words_show_parameters() {
        let st = SqlStatement {
            session: 0,
            index: 2,
            sql: "UPDATE acct\n  SET bal = $1 WHERE id = $2".into(),
            params: vec![Some("110".into()), None],
        };
        assert_eq!(
            statement_words(&st),
            "`UPDATE acct SET bal = $1 WHERE id = $2` ($1 = 110, $2 = NULL)"
        );
    }
}
