//! `COPY table [(columns)] FROM STDIN` in PostgreSQL's text format (the format `pg_dump`,
//! `psql \copy` and `pgbench -i` send; PostgreSQL documentation, "COPY", File Formats: Text
//! Format): one row per line, columns separated by the delimiter (a tab unless `DELIMITER`
//! says otherwise), `\N` for NULL (or the `NULL` option's string), backslash escapes (`\t`,
//! `\n`, `\\`, octal `\NNN`, hex `\xNN`, …), and an optional `\.` line at the end.
//!
//! The rows are gathered from the client's CopyData messages here; at CopyDone the session
//! inserts them as one statement, `INSERT INTO table (columns) VALUES ($1, …)` per row, so
//! they are recorded as the rows' writes in the transaction as an INSERT's are. Other formats
//! (csv, binary) and `COPY … TO`/`FROM` a file or program are refused.

use sqlparser::ast::{CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement};

use super::catalog::Catalog;
use super::eval::{ident, object_name};
use super::SqlError;
use crate::store::Value;

/// A COPY's text with PostgreSQL's `on`/`off` spellings of its boolean options written
/// `true`/`false`, which sqlparser takes (`pgbench -i` sends `copy … with (freeze on)`);
/// `None` when the text is no COPY or has none.
pub fn spell_boolean_options(query: &str) -> Option<String> {
    let lower = query.to_ascii_lowercase();
    if !lower.trim_start().starts_with("copy") {
        return None;
    }
    let mut out = String::with_capacity(query.len());
    let mut changed = false;
    let mut rest = 0;
    for option in ["freeze", "header"] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(option) {
            let after = from + at + option.len();
            let value_at = after + (lower[after..].len() - lower[after..].trim_start().len());
            let word_end = lower[value_at..]
                .find(|c: char| !c.is_ascii_alphabetic())
                .map_or(lower.len(), |e| value_at + e);
            let spelled = match &lower[value_at..word_end] {
                "on" => Some("true"),
                "off" => Some("false"),
                _ => None,
            };
            if let (Some(word), true) = (spelled, value_at >= rest) {
                out.push_str(&query[rest..value_at]);
                out.push_str(word);
                rest = word_end;
                changed = true;
            }
            from = after;
        }
    }
    out.push_str(&query[rest..]);
    changed.then_some(out)
}

/// A `COPY … FROM STDIN` in progress: its target and the rows received so far.
#[derive(Debug)]
pub struct CopyIn {
    /// The table's name.
    pub table: String,
    /// The target columns (empty: all of the table's, in order).
    pub columns: Vec<String>,
    delimiter: u8,
    null: String,
    /// The bytes of a line not yet ended.
    partial: Vec<u8>,
    /// The rows received, as text (`None`: NULL).
    pub rows: Vec<Vec<Value>>,
    /// The `\.` end marker was seen: further data is ignored.
    ended: bool,
}

/// The `COPY … FROM STDIN` a statement is (`None`: it is no COPY).
pub fn copy_in(stmt: &Statement) -> Option<Result<CopyIn, SqlError>> {
    let Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        ..
    } = stmt
    else {
        return None;
    };
    Some(start(source, *to, target, options, legacy_options))
}

fn start(
    source: &CopySource,
    to: bool,
    target: &CopyTarget,
    options: &[CopyOption],
    legacy_options: &[CopyLegacyOption],
) -> Result<CopyIn, SqlError> {
    if to || !matches!(target, CopyTarget::Stdin) {
        return Err(SqlError::unsupported(format!(
            "COPY {} {target} (only COPY … FROM STDIN)",
            if to { "TO" } else { "FROM" }
        )));
    }
    let CopySource::Table {
        table_name,
        columns,
    } = source
    else {
        return Err(SqlError::unsupported("COPY of a query"));
    };
    let mut copy = CopyIn {
        table: object_name(table_name)?,
        columns: columns.iter().map(ident).collect(),
        delimiter: b'\t',
        null: "\\N".to_string(),
        partial: Vec::new(),
        rows: Vec::new(),
        ended: false,
    };
    for option in options {
        match option {
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("text") => {}
            CopyOption::Freeze(_) | CopyOption::Encoding(_) => {}
            CopyOption::Delimiter(c) if c.is_ascii() => copy.delimiter = *c as u8,
            CopyOption::Null(n) => copy.null = n.clone(),
            other => {
                return Err(SqlError::unsupported(format!(
                    "the COPY option {other} (only the text format)"
                )))
            }
        }
    }
    for option in legacy_options {
        match option {
            CopyLegacyOption::Delimiter(c) if c.is_ascii() => copy.delimiter = *c as u8,
            CopyLegacyOption::Null(n) => copy.null = n.clone(),
            other => {
                return Err(SqlError::unsupported(format!(
                    "the COPY option {other} (only the text format)"
                )))
            }
        }
    }
    Ok(copy)
}

impl CopyIn {
    /// The INSERT each row runs as: its text (with `$1`, … for the row's values) and the
    /// number of columns a row has.
    pub fn insert_sql(&self, catalog: &Catalog) -> Result<(String, usize), SqlError> {
        let t = catalog
            .table(&self.table)
            .ok_or_else(|| SqlError::undefined_table(&self.table))?;
        let table = catalog.get(t);
        let columns: Vec<&str> = if self.columns.is_empty() {
            table.columns.iter().map(|c| c.name.as_str()).collect()
        } else {
            self.columns.iter().map(String::as_str).collect()
        };
        let quoted: Vec<String> = columns
            .iter()
            .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
            .collect();
        let params: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
        Ok((
            format!(
                "INSERT INTO \"{}\" ({}) VALUES ({})",
                self.table.replace('"', "\"\""),
                quoted.join(", "),
                params.join(", ")
            ),
            columns.len(),
        ))
    }

    /// Takes one CopyData message's bytes: the lines it completes become rows.
    pub fn data(&mut self, bytes: &[u8], width: usize) -> Result<(), SqlError> {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line, after) = rest.split_at(end);
            rest = &after[1..];
            if self.partial.is_empty() {
                self.line(line, width)?;
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.line(&whole, width)?;
            }
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// CopyDone: a last line without its newline becomes a row too.
    pub fn finish(&mut self, width: usize) -> Result<(), SqlError> {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last, width)?;
        }
        Ok(())
    }

    fn line(&mut self, line: &[u8], width: usize) -> Result<(), SqlError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if self.ended {
            return Ok(());
        }
        if line == b"\\." {
            self.ended = true;
            return Ok(());
        }
        let row: Vec<Value> = line
            .split(|&b| b == self.delimiter)
            .map(|field| self.field(field))
            .collect::<Result<_, _>>()?;
        if row.len() != width {
            return Err(SqlError::new(
                "22P04",
                format!(
                    "COPY {}, line {}: {} columns, the table takes {width}",
                    self.table,
                    self.rows.len() + 1,
                    row.len()
                ),
            ));
        }
        self.rows.push(row);
        Ok(())
    }

    fn field(&self, raw: &[u8]) -> Result<Value, SqlError> {
        if raw == self.null.as_bytes() {
            return Ok(Value::Null);
        }
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            let b = raw[i];
            i += 1;
            if b != b'\\' || i == raw.len() {
                out.push(b);
                continue;
            }
            let e = raw[i];
            i += 1;
            match e {
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'v' => out.push(11),
                b'0'..=b'7' => {
                    let mut v = u32::from(e - b'0');
                    for _ in 0..2 {
                        match raw.get(i) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                i += 1;
                            }
                            _ => break,
                        }
                    }
                    out.push(v as u8);
                }
                b'x' if raw.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                    let mut v = 0u32;
                    for _ in 0..2 {
                        match raw.get(i).and_then(|d| (*d as char).to_digit(16)) {
                            Some(d) => {
                                v = v * 16 + d;
                                i += 1;
                            }
                            None => break,
                        }
                    }
                    out.push(v as u8);
                }
                other => out.push(other),
            }
        }
        let text = String::from_utf8(out).map_err(|_| {
            SqlError::new(
                "22021",
                format!("COPY {}: a value is not valid UTF-8", self.table),
            )
        })?;
        Ok(Value::text(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(sql: &str) -> Result<CopyIn, SqlError> {
        let stmts = super::super::parse(sql)?;
        copy_in(&stmts[0]).expect("a COPY")
    }

    #[test]
    fn text_format_rows_split_across_messages_with_escapes_and_nulls() {
        let mut c = copy("COPY t (a, b, c) FROM STDIN").unwrap();
        assert_eq!(c.columns, ["a", "b", "c"]);
        c.data(b"1\tx\\ty\t\\N\n2\t", 3).unwrap();
        c.data(b"back\\\\slash\t\\101\\x42\n3\tlast\tz", 3).unwrap();
        c.finish(3).unwrap();
        assert_eq!(
            c.rows,
            vec![
                vec![Value::text("1"), Value::text("x\ty"), Value::Null],
                vec![
                    Value::text("2"),
                    Value::text("back\\slash"),
                    Value::text("AB")
                ],
                vec![Value::text("3"), Value::text("last"), Value::text("z")],
            ]
        );
    }

    #[test]
    fn on_and_off_options_are_spelled_for_the_parser() {
        let sql = "copy pgbench_accounts from stdin with (freeze on)";
        let spelled = spell_boolean_options(sql).unwrap();
        assert_eq!(
            spelled,
            "copy pgbench_accounts from stdin with (freeze true)"
        );
        assert!(copy(&spelled).is_ok());
        assert_eq!(spell_boolean_options("SELECT 'freeze on'"), None);
        assert_eq!(spell_boolean_options("COPY t FROM STDIN"), None);
    }

    #[test]
    fn the_end_marker_options_and_refusals() {
        let mut c = copy("COPY t FROM STDIN WITH (DELIMITER ',', NULL 'nil')").unwrap();
        c.data(b"1,nil\n\\.\n9,9\n", 2).unwrap();
        assert_eq!(c.rows, vec![vec![Value::text("1"), Value::Null]]);
        let mut c = copy("COPY t FROM STDIN").unwrap();
        assert_eq!(c.data(b"1\t2\t3\n", 2).unwrap_err().code, "22P04");
        for refused in [
            "COPY t TO STDOUT",
            "COPY t FROM '/etc/passwd'",
            "COPY t FROM STDIN WITH (FORMAT csv)",
        ] {
            assert_eq!(copy(refused).unwrap_err().code, "0A000", "{refused}");
        }
    }
}
