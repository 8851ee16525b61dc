//! psql's `\d TABLE`, answered from the server's catalog. psql (15, the version serve
//! reports) sends, in order, catalog queries it reads by column position (captured from
//! PostgreSQL 15's statement log):
//!
//! 1. the lookup: `SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c … WHERE
//!    c.relname OPERATOR(pg_catalog.~) '^(acct)$' …` — one row per table whose name matches
//!    the pattern (`*` and `?` arrive as `.*` and `.`);
//! 2. the table's flags: `SELECT c.relchecks, c.relkind, c.relhasindex, … WHERE c.oid = 'N'`;
//! 3. the columns: `SELECT a.attname, pg_catalog.format_type(…), (default), a.attnotnull,
//!    (collation), a.attidentity, a.attgenerated FROM pg_catalog.pg_attribute a WHERE
//!    a.attrelid = 'N' …`;
//! 4. the indexes: `SELECT c2.relname, i.indisprimary, …, pg_catalog.pg_get_indexdef(…), …
//!    FROM … pg_catalog.pg_index i …` — the primary key's index, `TABLE_pkey`;
//!
//! then policies, statistics, publications and inheritance, which have no rows here. A table
//! is known by [`Catalog::oid`].

use super::catalog::{Catalog, SqlType};
use super::Field;
use crate::store::Value;

/// The rows of one of psql's `\d TABLE` queries (`text` as the statement prints), or `None`
/// when the query is none of them.
pub fn table_detail(fields: &[Field], text: &str, catalog: &Catalog) -> Option<Vec<Vec<Value>>> {
    let first = fields.first()?.name.as_str();
    let lower = text.to_ascii_lowercase();
    if !lower.contains("pg_catalog.pg_") {
        return None;
    }
    let rows = match first {
        "oid" if fields.len() == 3 && lower.contains("relname operator(pg_catalog.~)") => {
            lookup(text, &lower, catalog)
        }
        "relchecks" => table_of(&lower, "c.oid = '", catalog)
            .map(|t| flags(t, catalog))
            .into_iter()
            .collect(),
        "attname" if lower.contains("pg_attribute") => table_of(&lower, "a.attrelid = '", catalog)
            .map(|t| columns(t, catalog))
            .unwrap_or_default(),
        "relname" if lower.contains("pg_index") && lower.contains("indisprimary") => {
            table_of(&lower, "c.oid = '", catalog)
                .and_then(|t| primary_key_index(t, catalog))
                .into_iter()
                .collect()
        }
        _ => return None,
    };
    // Each row as wide as the query's select list (psql reads by position).
    Some(
        rows.into_iter()
            .map(|mut r: Vec<Value>| {
                r.resize(fields.len(), Value::Null);
                r
            })
            .collect(),
    )
}

/// The table whose oid follows `marker` (`c.oid = '16385'`).
fn table_of(lower: &str, marker: &str, catalog: &Catalog) -> Option<usize> {
    let at = lower.find(marker)? + marker.len();
    let digits: String = lower[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let oid: u32 = digits.parse().ok()?;
    let t = oid.checked_sub(Catalog::oid(0))? as usize;
    let name = &catalog.table_at(t)?.name;
    // A dropped table's oid names nothing.
    (catalog.table(name) == Some(t)).then_some(t)
}

/// The lookup's rows: `(oid, 'public', name)` for every table whose name matches the
/// pattern `'^(…)$'` the query carries, by name.
fn lookup(text: &str, lower: &str, catalog: &Catalog) -> Vec<Vec<Value>> {
    let marker = "relname operator(pg_catalog.~) '^(";
    let Some(at) = lower.find(marker).map(|a| a + marker.len()) else {
        return Vec::new();
    };
    let Some(len) = text[at..].find(")$'") else {
        return Vec::new();
    };
    let pattern: Vec<char> = text[at..at + len].chars().collect();
    let mut names: Vec<&str> = catalog
        .table_names()
        .filter(|n| matches(&pattern, &n.chars().collect::<Vec<_>>()))
        .collect();
    names.sort_unstable();
    names
        .into_iter()
        .filter_map(|n| {
            let t = catalog.table(n)?;
            Some(vec![
                Value::Int(i64::from(Catalog::oid(t))),
                Value::text("public"),
                Value::text(n),
            ])
        })
        .collect()
}

/// Whether `name` matches psql's pattern as a whole: `.*` any run, `.` any character, `\c`
/// the character `c`, others themselves.
fn matches(pattern: &[char], name: &[char]) -> bool {
    match pattern {
        [] => name.is_empty(),
        ['.', '*', rest @ ..] => (0..=name.len()).any(|i| matches(rest, &name[i..])),
        ['.', rest @ ..] => !name.is_empty() && matches(rest, &name[1..]),
        ['\\', c, rest @ ..] | [c, rest @ ..] => {
            name.first() == Some(c) && matches(rest, &name[1..])
        }
    }
}

fn flag(b: bool) -> Value {
    Value::text(if b { "t" } else { "f" })
}

/// relchecks, relkind, relhasindex, relhasrules, relhastriggers, relrowsecurity,
/// relforcerowsecurity, relhasoids, relispartition, '', reltablespace, reloftype,
/// relpersistence, relreplident, amname: an ordinary table, indexed when it has a key.
fn flags(t: usize, catalog: &Catalog) -> Vec<Value> {
    let has_key = !catalog.get(t).key.is_empty();
    vec![
        Value::text("0"),
        Value::text("r"),
        flag(has_key),
        flag(false),
        flag(false),
        flag(false),
        flag(false),
        flag(false),
        flag(false),
        Value::text(""),
        Value::text("0"),
        Value::text(""),
        Value::text("p"),
        Value::text("d"),
        Value::text("heap"),
    ]
}

/// The type's name as `format_type` gives it.
fn format_type(ty: SqlType) -> &'static str {
    // PostgreSQL's format_type spells out the one name its input errors shorten.
    match ty {
        SqlType::Timestamp => "timestamp without time zone",
        other => super::eval::type_name(other),
    }
}

/// attname, format_type, default, attnotnull, collation, attidentity, attgenerated per
/// column, in order.
fn columns(t: usize, catalog: &Catalog) -> Vec<Vec<Value>> {
    catalog
        .get(t)
        .columns
        .iter()
        .map(|c| {
            let default = match (c.sequence, c.identity, &c.default) {
                (Some(s), None, _) => Value::text(&format!(
                    "nextval('{}'::regclass)",
                    catalog.sequences.get(s).name
                )),
                (_, None, Some(e)) => Value::text(&e.to_string()),
                _ => Value::Null,
            };
            let identity = c.identity.map(String::from).unwrap_or_default();
            vec![
                Value::text(&c.name),
                Value::text(format_type(c.ty)),
                default,
                flag(c.not_null),
                Value::Null,
                Value::text(&identity),
                Value::text(""),
            ]
        })
        .collect()
}

/// The primary key's index row (relname, indisprimary, indisunique, indisclustered,
/// indisvalid, indexdef, constraintdef, contype, condeferrable, condeferred, indisreplident,
/// reltablespace), if the table has a key.
fn primary_key_index(t: usize, catalog: &Catalog) -> Option<Vec<Value>> {
    let table = catalog.get(t);
    if table.key.is_empty() {
        return None;
    }
    let key = table
        .key
        .iter()
        .map(|&k| table.columns[k].name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let index = format!("{}_pkey", table.name);
    Some(vec![
        Value::text(&index),
        flag(true),
        flag(true),
        flag(false),
        flag(true),
        Value::text(&format!(
            "CREATE UNIQUE INDEX {index} ON public.{} USING btree ({key})",
            table.name
        )),
        Value::text(&format!("PRIMARY KEY ({key})")),
        Value::text("p"),
        flag(false),
        flag(false),
        flag(false),
        Value::text("0"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psql_patterns_match_whole_names() {
        let m = |p: &str, n: &str| {
            matches(
                &p.chars().collect::<Vec<_>>(),
                &n.chars().collect::<Vec<_>>(),
            )
        };
        assert!(m("acct", "acct"));
        assert!(!m("acct", "acct2"));
        assert!(m("acc.*", "acct2"));
        assert!(m("a.ct", "acct"));
        assert!(!m("a.ct", "act"));
        assert!(m("pgbench\\_accounts", "pgbench_accounts"));
    }
}
