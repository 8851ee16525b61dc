//! The SQL of an application's reproducer (`reproduce/app.rs`): its recorded statements with
//! their parameters written in as literals, the marker columns that name the transaction whose
//! write a row or cell holds, and the probes that read them.
//!
//! **Markers.** Every table the application created gets `isopredict_w` (the transaction that
//! inserted the row) and `isopredict_w_<column>` per column (the transaction that last wrote the
//! cell); triggers set them to the writing transaction's name (`SET LOCAL isopredict.txn`):
//! `BEFORE INSERT` all of them, `BEFORE UPDATE OF <column>` that column's — PostgreSQL fires an
//! `UPDATE OF` trigger exactly when the column is in the statement's SET list, which is when
//! the recording server records a write of the cell. So the marker names the writer of the
//! version a statement sees, exactly, as the workloads' `written_by` does; the application's
//! values could not (two deposits that both write 110 look alike, and values are not in the
//! recording).

use std::fmt::Write as _;

/// A probe's answer for a row that does not exist.
pub const NO_ROW: &str = "(no row)";

/// The session variable that names the running transaction for the markers.
pub const TXN_SETTING: &str = "isopredict.txn";

/// A store key of the recording server, parsed: `acct.bal[id=1]` (a cell) or `acct[id=1]` (a
/// row's existence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRef {
    /// The table (a later generation's `#n` dropped).
    pub table: String,
    /// The column of a cell; `None` for the row's existence.
    pub column: Option<String>,
    /// The primary key: (column, SQL literal).
    pub row: Vec<(String, String)>,
}

impl KeyRef {
    /// Parses a key name; `None` when it is not a row or cell of a table with a primary key
    /// (a table without one numbers its rows `ctid=N`, which PostgreSQL does not share).
    pub fn parse(name: &str) -> Option<KeyRef> {
        let (head, rest) = name.split_once('[')?;
        let label = rest.strip_suffix(']')?;
        let (table, column) = match head.split_once('.') {
            Some((t, c)) => (t, Some(c.to_string())),
            None => (head, None),
        };
        let table = table.split('#').next()?.to_string();
        let mut row = Vec::new();
        for part in split_outside_quotes(label, ',') {
            let (c, v) = part.split_once('=')?;
            if c == "ctid" || c.is_empty() || v.is_empty() {
                return None;
            }
            row.push((c.to_string(), v.to_string()));
        }
        (!table.is_empty() && !row.is_empty()).then_some(KeyRef { table, column, row })
    }

    /// The marker column of this key.
    pub fn marker(&self) -> String {
        marker_column(self.column.as_deref())
    }

    /// `"id" = 1 AND …`.
    pub fn condition(&self) -> String {
        self.row
            .iter()
            .map(|(c, v)| format!("{} = {v}", ident(c)))
            .collect::<Vec<_>>()
            .join(" AND ")
    }
}

/// `isopredict_w` (the row) or `isopredict_w_<column>`.
pub fn marker_column(column: Option<&str>) -> String {
    match column {
        None => "isopredict_w".to_string(),
        Some(c) => format!("isopredict_w_{c}"),
    }
}

/// A quoted SQL identifier.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A SQL string literal (quotes doubled).
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `text` split at `sep` where it is not inside single quotes.
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == '\'' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            out.push(&text[start..i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    out
}

/// `sql` with each parameter `$n` written in as a literal of its recorded text (an untyped
/// string literal, which PostgreSQL types from its context as it types an untyped parameter;
/// NULL for NULL). Quoted strings, quoted identifiers, comments and dollar-quoted strings are
/// left alone. `None` when a parameter is missing.
pub fn inline_params(sql: &str, params: &[Option<String>]) -> Option<String> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let skip_to = match c {
            b'\'' | b'"' => {
                let mut j = i + 1;
                while j < b.len() {
                    if b[j] == c {
                        if b.get(j + 1) == Some(&c) {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                Some((j + 1).min(b.len()))
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                Some(sql[i..].find('\n').map_or(b.len(), |n| i + n))
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                Some(sql[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2))
            }
            b'$' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let n: usize = sql[i + 1..j].parse().ok()?;
                match params.get(n.checked_sub(1)?)? {
                    Some(v) => out.push_str(&literal(v)),
                    None => out.push_str("NULL"),
                }
                i = j;
                continue;
            }
            b'$' => {
                // A dollar-quoted string: $tag$ … $tag$.
                let tag_end = sql[i + 1..].find('$').map(|n| i + 1 + n).filter(|&e| {
                    sql[i + 1..e]
                        .bytes()
                        .all(|x| x.is_ascii_alphanumeric() || x == b'_')
                });
                tag_end.map(|e| {
                    let tag = &sql[i..=e];
                    sql[e + 1..]
                        .find(tag)
                        .map_or(b.len(), |n| e + 1 + n + tag.len())
                })
            }
            _ => None,
        };
        match skip_to {
            Some(j) => {
                out.push_str(&sql[i..j]);
                i = j;
            }
            None => {
                let ch = sql[i..].chars().next()?;
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    Some(out)
}

/// The tables the schema statements leave, each with its columns (CREATE TABLE, less DROP
/// TABLE, in order). Statements the parser does not read are skipped.
pub fn tables_of(schema: &[String]) -> Vec<(String, Vec<String>)> {
    use sqlparser::ast::{ObjectType, Statement};
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    for sql in schema {
        let Ok(statements) = sqlparser::parser::Parser::parse_sql(&dialect, sql) else {
            continue;
        };
        for st in statements {
            match st {
                Statement::CreateTable(ct) => {
                    let name = object_name(&ct.name.to_string());
                    let columns = ct
                        .columns
                        .iter()
                        .map(|c| unquote(&c.name.value, c.name.quote_style.is_some()))
                        .collect();
                    tables.retain(|(t, _)| *t != name);
                    tables.push((name, columns));
                }
                Statement::Drop {
                    object_type: ObjectType::Table,
                    names,
                    ..
                } => {
                    for n in names {
                        let name = object_name(&n.to_string());
                        tables.retain(|(t, _)| *t != name);
                    }
                }
                _ => {}
            }
        }
    }
    tables
}

/// The table name as the recording names it: the last part, lower case unless quoted.
fn object_name(name: &str) -> String {
    let last = name.rsplit('.').next().unwrap_or(name);
    match last.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => last.to_lowercase(),
    }
}

fn unquote(name: &str, quoted: bool) -> String {
    if quoted {
        name.to_string()
    } else {
        name.to_lowercase()
    }
}

/// The marker function and, per table, its marker columns and triggers (module docs).
pub fn marker_sql(tables: &[(String, Vec<String>)]) -> String {
    let mut out = format!(
        "CREATE FUNCTION isopredict_mark() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         RETURN jsonb_populate_record(NEW, jsonb_object(TG_ARGV, array_fill(\
         COALESCE(NULLIF(current_setting('{TXN_SETTING}', true), ''), '(unlabelled)'), \
         ARRAY[TG_NARGS]))); END $$;\n"
    );
    for (table, columns) in tables {
        let t = ident(table);
        let mut markers = vec![marker_column(None)];
        markers.extend(columns.iter().map(|c| marker_column(Some(c))));
        let adds: Vec<String> = markers
            .iter()
            .map(|m| format!("ADD COLUMN {} text", ident(m)))
            .collect();
        let _ = writeln!(out, "ALTER TABLE {t} {};", adds.join(", "));
        let args: Vec<String> = markers.iter().map(|m| literal(m)).collect();
        let _ = writeln!(
            out,
            "CREATE TRIGGER isopredict_insert BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION isopredict_mark({});",
            args.join(", ")
        );
        for (i, c) in columns.iter().enumerate() {
            let _ = writeln!(
                out,
                "CREATE TRIGGER {} BEFORE UPDATE OF {} ON {t} FOR EACH ROW EXECUTE FUNCTION isopredict_mark({});",
                ident(&format!("isopredict_update_{i}")),
                ident(c),
                literal(&marker_column(Some(c)))
            );
        }
    }
    out
}

/// A probe of `keys` (their names, parsed): one row `k | written_by` per key, in order; a
/// row that does not exist prints [`NO_ROW`].
pub fn probe_sql(keys: &[(String, KeyRef)]) -> String {
    let rows: Vec<String> = keys
        .iter()
        .map(|(name, k)| {
            format!(
                "({}, COALESCE((SELECT COALESCE({}, '(unlabelled)') FROM {} WHERE {}), {}))",
                literal(name),
                ident(&k.marker()),
                ident(&k.table),
                k.condition(),
                literal(NO_ROW)
            )
        })
        .collect();
    format!(
        "SELECT k, written_by FROM (VALUES {}) AS isopredict_probe(k, written_by);",
        rows.join(", ")
    )
}

/// A probe of `keys` by row versions (the application itself on PostgreSQL, which keeps its
/// own tables): one row `k | xmin` per key, in order — the id of the transaction that wrote
/// the version the snapshot sees; NULL for a row that does not exist.
pub fn xmin_probe_sql(keys: &[(String, KeyRef)]) -> String {
    let rows: Vec<String> = keys
        .iter()
        .map(|(name, k)| {
            format!(
                "({}, (SELECT xmin::text FROM {} WHERE {}))",
                literal(name),
                ident(&k.table),
                k.condition()
            )
        })
        .collect();
    format!(
        "SELECT k, v FROM (VALUES {}) AS isopredict_probe(k, v)",
        rows.join(", ")
    )
}

/// `SET LOCAL isopredict.txn = 'label';`.
pub fn name_txn(label: &str) -> String {
    format!("SET LOCAL {TXN_SETTING} = {};", literal(label))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_into_table_column_and_row() {
        let k = KeyRef::parse("acct.bal[id=1]").unwrap();
        assert_eq!(k.table, "acct");
        assert_eq!(k.column.as_deref(), Some("bal"));
        assert_eq!(k.condition(), "\"id\" = 1");
        assert_eq!(k.marker(), "isopredict_w_bal");
        let k = KeyRef::parse("t#2[a=1,b='x,''y']").unwrap();
        assert_eq!(k.table, "t");
        assert_eq!(k.column, None);
        assert_eq!(k.condition(), "\"a\" = 1 AND \"b\" = 'x,''y'");
        assert_eq!(KeyRef::parse("t.v[ctid=3]"), None);
        assert_eq!(KeyRef::parse("x"), None);
    }

    #[test]
    fn parameters_are_written_in_outside_strings_and_comments() {
        let params = [Some("110".to_string()), Some("it's".to_string()), None];
        assert_eq!(
            inline_params("UPDATE acct SET bal = $1, note = $2 WHERE id = $3", &params).unwrap(),
            "UPDATE acct SET bal = '110', note = 'it''s' WHERE id = NULL"
        );
        assert_eq!(
            inline_params(
                "SELECT '$1', \"$2\" -- $1\n, $$ $1 $$, $t$ $2 $t$ /* $3 */ FROM t WHERE a = $1",
                &params
            )
            .unwrap(),
            "SELECT '$1', \"$2\" -- $1\n, $$ $1 $$, $t$ $2 $t$ /* $3 */ FROM t WHERE a = '110'"
        );
        assert_eq!(inline_params("SELECT $4", &params), None);
    }

    #[test]
    fn the_schema_gives_the_tables_left_and_their_columns() {
        let schema = [
            "CREATE TABLE acct (id integer PRIMARY KEY, Bal integer)".to_string(),
            "CREATE TABLE gone (id int)".to_string(),
            "DROP TABLE gone".to_string(),
            "CREATE INDEX ON acct (bal)".to_string(),
        ];
        assert_eq!(
            tables_of(&schema),
            [(
                "acct".to_string(),
                vec!["id".to_string(), "bal".to_string()]
            )]
        );
        let sql = marker_sql(&tables_of(&schema));
        assert!(
            sql.contains("BEFORE UPDATE OF \"bal\" ON \"acct\""),
            "{sql}"
        );
        assert!(sql.contains("ADD COLUMN \"isopredict_w\" text"), "{sql}");
        assert!(
            !sql.contains('{') && !sql.contains('}'),
            "an isolationtester block cannot hold braces: {sql}"
        );
    }
}
