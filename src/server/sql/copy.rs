//! `COPY table [(columns)] FROM STDIN` in PostgreSQL's text format (the format `pg_dump`,
//! `psql \copy` and `pgbench -i` send; PostgreSQL documentation, "COPY", File Formats: Text
//! Format): one row per line, columns separated by the delimiter (a tab unless `DELIMITER`
//! says otherwise), `\N` for NULL (or the `NULL` option's string), backslash escapes (`\t`,
//! `\n`, `\\`, octal `\NNN`, hex `\xNN`, …), and an optional `\.` line at the end.
//!
//! The rows are gathered from the client's CopyData messages here; at CopyDone the session
//! inserts them as one statement, `INSERT INTO table (columns) VALUES ($1, …)` per row, so
//! they are recorded as the rows' writes in the transaction as an INSERT's are.
//!
//! The CSV format too (`FORMAT csv`, `WITH CSV [HEADER]`; "File Formats: CSV Format"): fields
//! separated by `,` unless `DELIMITER` says otherwise, quoted with `"` (a quote inside doubled),
//! a quoted field may span lines, an unquoted empty field is NULL (or the `NULL` option's
//! string); `HEADER` (in either format) skips the first line. The binary format and `COPY … TO`/`FROM` a file or
//! program are refused.

use sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};

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
    /// CSV: the quote character (`None`: the text format).
    csv_quote: Option<u8>,
    /// CSV with HEADER: the first line is still to be skipped.
    header: bool,
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
    if *to && matches!(target, CopyTarget::Stdout) {
        return None; // [`copy_out`]'s
    }
    Some(start(source, *to, target, options, legacy_options))
}

/// A `COPY table [(columns)] TO STDOUT` or `COPY (query) TO STDOUT`: the query whose rows it
/// sends (run as a SELECT, so its reads are recorded as that SELECT's) and their format.
pub struct CopyOut {
    /// The SELECT the COPY runs.
    pub query: Statement,
    format: DataFormat,
}

/// The `COPY … TO STDOUT` a statement is (`None`: it is none).
pub fn copy_out(stmt: &Statement) -> Option<Result<CopyOut, SqlError>> {
    let Statement::Copy {
        source,
        to: true,
        target: CopyTarget::Stdout,
        options,
        legacy_options,
        ..
    } = stmt
    else {
        return None;
    };
    let query = match source {
        CopySource::Query(q) => Ok(Statement::Query(q.clone())),
        CopySource::Table {
            table_name,
            columns,
        } => {
            let list = if columns.is_empty() {
                "*".to_string()
            } else {
                columns
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            super::parse(&format!("SELECT {list} FROM {table_name}")).map(|mut s| s.remove(0))
        }
    };
    Some(query.and_then(|query| {
        Ok(CopyOut {
            query,
            format: data_format(options, legacy_options)?,
        })
    }))
}

impl CopyOut {
    /// The CopyData of `rows` (a header line first when asked, of `names`): one line each.
    pub fn lines(&self, names: &[&str], rows: &[Vec<Value>]) -> Vec<Vec<u8>> {
        let f = &self.format;
        let mut out = Vec::with_capacity(rows.len() + 1);
        if f.header {
            let header: Vec<Value> = names.iter().map(|n| Value::text(n)).collect();
            out.push(self.line(&header));
        }
        out.extend(rows.iter().map(|r| self.line(r)));
        out
    }

    fn line(&self, row: &[Value]) -> Vec<u8> {
        let f = &self.format;
        let mut line = Vec::new();
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                line.push(f.delimiter);
            }
            if matches!(v, Value::Null) {
                line.extend_from_slice(f.null.as_bytes());
                continue;
            }
            let text = super::eval::plain(v);
            match f.csv_quote {
                Some(q) => {
                    let quote = text == f.null
                        || text
                            .bytes()
                            .any(|b| b == f.delimiter || b == q || b == b'\n' || b == b'\r');
                    if quote {
                        line.push(q);
                        for b in text.bytes() {
                            if b == q {
                                line.push(q);
                            }
                            line.push(b);
                        }
                        line.push(q);
                    } else {
                        line.extend_from_slice(text.as_bytes());
                    }
                }
                None => {
                    for b in text.bytes() {
                        match b {
                            b'\\' => line.extend_from_slice(b"\\\\"),
                            b'\n' => line.extend_from_slice(b"\\n"),
                            b'\r' => line.extend_from_slice(b"\\r"),
                            b'\t' => line.extend_from_slice(b"\\t"),
                            b if b == f.delimiter => line.extend_from_slice(&[b'\\', b]),
                            b => line.push(b),
                        }
                    }
                }
            }
        }
        line.push(b'\n');
        line
    }
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
        csv_quote: None,
        header: false,
        partial: Vec::new(),
        rows: Vec::new(),
        ended: false,
    };
    let format = data_format(options, legacy_options)?;
    copy.delimiter = format.delimiter;
    copy.null = format.null;
    copy.csv_quote = format.csv_quote;
    copy.header = format.header;
    Ok(copy)
}

/// A COPY's data format: its delimiter, NULL string, CSV quote (`None`: the text format) and
/// whether a header line comes first.
struct DataFormat {
    delimiter: u8,
    null: String,
    csv_quote: Option<u8>,
    header: bool,
}

/// The data format a COPY's options ask for (text unless `FORMAT csv` / `CSV`).
fn data_format(
    options: &[CopyOption],
    legacy_options: &[CopyLegacyOption],
) -> Result<DataFormat, SqlError> {
    let mut copy = DataFormat {
        delimiter: b'\t',
        null: "\\N".to_string(),
        csv_quote: None,
        header: false,
    };
    let (mut delimiter, mut null, mut quote) = (None, None, None);
    let refused = |option: &dyn std::fmt::Display| {
        SqlError::unsupported(format!(
            "the COPY option {option} (only the text and csv formats)"
        ))
    };
    for option in options {
        match option {
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("text") => {}
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("csv") => {
                copy.csv_quote = Some(b'"');
            }
            CopyOption::Freeze(_) | CopyOption::Encoding(_) => {}
            CopyOption::Delimiter(c) if c.is_ascii() => delimiter = Some(*c as u8),
            CopyOption::Null(n) => null = Some(n.clone()),
            CopyOption::Header(h) => copy.header = *h,
            CopyOption::Quote(c) if c.is_ascii() => quote = Some(*c as u8),
            CopyOption::Escape(c) if Some(*c as u8) == quote.or(Some(b'"')) => {}
            other => return Err(refused(other)),
        }
    }
    for option in legacy_options {
        match option {
            CopyLegacyOption::Delimiter(c) if c.is_ascii() => delimiter = Some(*c as u8),
            CopyLegacyOption::Null(n) => null = Some(n.clone()),
            CopyLegacyOption::Header => copy.header = true,
            CopyLegacyOption::Csv(csv_options) => {
                copy.csv_quote = Some(b'"');
                for o in csv_options {
                    match o {
                        CopyLegacyCsvOption::Header => copy.header = true,
                        CopyLegacyCsvOption::Quote(c) if c.is_ascii() => quote = Some(*c as u8),
                        CopyLegacyCsvOption::Escape(c)
                            if Some(*c as u8) == quote.or(Some(b'"')) => {}
                        other => return Err(refused(other)),
                    }
                }
            }
            other => return Err(refused(other)),
        }
    }
    if copy.csv_quote.is_some() {
        copy.delimiter = b',';
        copy.null = String::new();
        copy.csv_quote = quote.or(copy.csv_quote);
    } else if quote.is_some() {
        return Err(SqlError::new(
            "0A000",
            "COPY QUOTE is available only in CSV mode",
        ));
    }
    copy.delimiter = delimiter.unwrap_or(copy.delimiter);
    copy.null = null.unwrap_or(copy.null);
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
            if let Some(quote) = self.csv_quote {
                // A quoted CSV field may hold line ends: a line with a quote left open goes on.
                self.partial.extend_from_slice(line);
                if self.partial.iter().filter(|&&b| b == quote).count() % 2 == 1 {
                    self.partial.push(b'\n');
                    continue;
                }
                let whole = std::mem::take(&mut self.partial);
                self.line(&whole, width)?;
            } else if self.partial.is_empty() {
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
        if std::mem::take(&mut self.header) {
            return Ok(());
        }
        let row: Vec<Value> = match self.csv_quote {
            Some(quote) => self.csv_fields(line, quote)?,
            None => line
                .split(|&b| b == self.delimiter)
                .map(|field| self.field(field))
                .collect::<Result<_, _>>()?,
        };
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

    /// One CSV line's fields: quoted ones with their doubled quotes undone, an unquoted one
    /// equal to the NULL string is NULL.
    fn csv_fields(&self, line: &[u8], quote: u8) -> Result<Vec<Value>, SqlError> {
        let mut fields = Vec::new();
        let mut i = 0;
        loop {
            let mut out = Vec::new();
            let quoted = line.get(i) == Some(&quote);
            if quoted {
                i += 1;
                loop {
                    match line.get(i) {
                        None => {
                            return Err(SqlError::new(
                                "22P04",
                                format!("COPY {}: unterminated CSV quoted field", self.table),
                            ))
                        }
                        Some(&b) if b == quote && line.get(i + 1) == Some(&quote) => {
                            out.push(quote);
                            i += 2;
                        }
                        Some(&b) if b == quote => {
                            i += 1;
                            break;
                        }
                        Some(&b) => {
                            out.push(b);
                            i += 1;
                        }
                    }
                }
            }
            while let Some(&b) = line.get(i).filter(|&&b| b != self.delimiter) {
                out.push(b);
                i += 1;
            }
            fields.push(if !quoted && out == self.null.as_bytes() {
                Value::Null
            } else {
                Value::text(&self.utf8(out)?)
            });
            if line.get(i) != Some(&self.delimiter) {
                return Ok(fields);
            }
            i += 1;
        }
    }

    fn utf8(&self, bytes: Vec<u8>) -> Result<String, SqlError> {
        String::from_utf8(bytes).map_err(|_| {
            SqlError::new(
                "22021",
                format!("COPY {}: a value is not valid UTF-8", self.table),
            )
        })
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
        Ok(Value::text(&self.utf8(out)?))
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
            "COPY t TO '/tmp/out'",
            "COPY t FROM '/etc/passwd'",
            "COPY t FROM STDIN WITH (FORMAT binary)",
            "COPY t FROM STDIN WITH (QUOTE '\"')",
        ] {
            assert_eq!(copy(refused).unwrap_err().code, "0A000", "{refused}");
        }
    }

    #[test]
    fn csv_rows_with_quotes_line_ends_nulls_and_a_header() {
        for sql in [
            "COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER true)",
            "COPY t (a, b) FROM STDIN WITH CSV HEADER",
        ] {
            let mut c = copy(sql).unwrap();
            c.data(b"a,b\n1,\"x, \"\"y\"\"\"\n2,\"two\n", 2).unwrap();
            c.data(b"lines\"\n3,\n4,\"\"\n", 2).unwrap();
            c.finish(2).unwrap();
            assert_eq!(
                c.rows,
                vec![
                    vec![Value::text("1"), Value::text("x, \"y\"")],
                    vec![Value::text("2"), Value::text("two\nlines")],
                    vec![Value::text("3"), Value::Null],
                    vec![Value::text("4"), Value::text("")],
                ],
                "{sql}"
            );
        }
        let mut c = copy("COPY t FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'NA')").unwrap();
        c.data(b"1;NA;\"NA\"\n", 3).unwrap();
        assert_eq!(
            c.rows,
            vec![vec![Value::text("1"), Value::Null, Value::text("NA")]]
        );
        let mut c = copy("COPY t FROM STDIN WITH (FORMAT csv)").unwrap();
        c.data(b"1,\"open\n", 2).unwrap();
        assert_eq!(c.finish(2).unwrap_err().code, "22P04");
    }

    #[test]
    fn copy_to_stdout_lines_in_text_and_csv() {
        let stmts = super::super::parse("COPY t (a, b) TO STDOUT").unwrap();
        assert!(copy_in(&stmts[0]).is_none());
        let out = copy_out(&stmts[0]).unwrap().unwrap();
        assert_eq!(out.query.to_string(), "SELECT a, b FROM t");
        let rows = vec![
            vec![Value::Int(1), Value::text("x\ty\\")],
            vec![Value::Int(2), Value::Null],
        ];
        assert_eq!(
            out.lines(&["a", "b"], &rows),
            [b"1\tx\\ty\\\\\n".to_vec(), b"2\t\\N\n".to_vec()]
        );
        let stmts =
            super::super::parse("COPY (SELECT a, b FROM t) TO STDOUT WITH (FORMAT csv, HEADER)")
                .unwrap();
        let out = copy_out(&stmts[0]).unwrap().unwrap();
        let rows = vec![
            vec![Value::Int(1), Value::text("say \"hi\", twice")],
            vec![Value::Int(2), Value::text("")],
            vec![Value::Int(3), Value::Null],
        ];
        assert_eq!(
            out.lines(&["a", "b"], &rows),
            [
                b"a,b\n".to_vec(),
                b"1,\"say \"\"hi\"\", twice\"\n".to_vec(),
                b"2,\"\"\n".to_vec(),
                b"3,\n".to_vec()
            ]
        );
    }
}
