//! SQL for the recording server: statements parsed with `sqlparser` (PostgreSQL dialect) and
//! translated onto the store's key–value reads and writes at row/column granularity, as
//! MonkeyDB translates JDBC statements (Biswas et al., OOPSLA'21; IsoPredict PLDI'24 §6).
//!
//! - [`catalog`]: tables, columns, rows ever inserted, and the keys' application names.
//! - [`eval`]: scalar expressions over a row.
//! - [`exec`]: each statement kind's translation (SELECT, INSERT, UPDATE, DELETE, DDL).
//! - [`copy`]: `COPY … FROM STDIN` and `COPY … TO STDOUT` rows (text and CSV).
//! - [`parse_cache`]: a connection's statements parsed once per shape (literals taken out).
//! - [`psql_describe`]: psql's `\d TABLE`, answered from the catalog.
//! - [`sequence`]: sequences and `nextval`, outside transactions as in PostgreSQL.
//! - [`chatter`]: what drivers and tools send on connect (SET/SHOW/RESET, `version()`,
//!   catalog queries), answered minimally and recorded as nothing.
//!
//! Anything else is refused with SQLSTATE `0A000` naming the construct (see
//! [`SqlError::unsupported`]).

pub mod catalog;
pub mod chatter;
pub mod copy;
pub mod eval;
pub mod exec;
pub mod parse_cache;
pub mod psql_describe;
pub mod sequence;

use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// Where the documentation lists the SQL the server supports.
pub const SUPPORTED_SQL_DOC: &str = "docs/recording.md#supported-sql";

/// A statement refused or failed, with its SQLSTATE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// The SQLSTATE code (`0A000`, `42601`, `42P01`, `42703`, `23505`, …).
    pub code: &'static str,
    /// The message the client prints.
    pub message: String,
}

impl SqlError {
    /// An error with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            message: message.into(),
        }
    }

    /// `0A000` feature_not_supported, naming the construct and the supported list.
    pub fn unsupported(construct: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            "0A000",
            format!(
                "{construct} is not supported by the isopredict recording server \
                 (supported SQL: {SUPPORTED_SQL_DOC})"
            ),
        )
    }

    /// `42P01` undefined_table.
    pub fn undefined_table(name: &str) -> SqlError {
        SqlError::new("42P01", format!("relation \"{name}\" does not exist"))
    }

    /// `42703` undefined_column.
    pub fn undefined_column(name: &str) -> SqlError {
        SqlError::new("42703", format!("column \"{name}\" does not exist"))
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (SQLSTATE {})", self.message, self.code)
    }
}

/// Parses a query string into statements (syntax errors: `42601`).
pub fn parse(sql: &str) -> Result<Vec<Statement>, SqlError> {
    Parser::parse_sql(&PostgreSqlDialect {}, sql)
        .map_err(|e| SqlError::new("42601", format!("syntax error: {e}")))
}

/// What a statement does to the session's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// BEGIN / START TRANSACTION.
    Begin,
    /// COMMIT / END.
    Commit,
    /// ROLLBACK / ABORT.
    Rollback,
    /// SAVEPOINT, RELEASE SAVEPOINT, ROLLBACK TO SAVEPOINT.
    Savepoint,
    /// Session chatter (SET, SHOW, RESET, DISCARD, catalog queries, `SELECT version()`):
    /// answered without the store, recorded as nothing.
    Chatter,
    /// Schema changes: applied at once, not recorded.
    Schema,
    /// Reads and writes of the tables: recorded.
    Data,
    /// DECLARE, FETCH and CLOSE of a cursor ([`crate::server::cursor`]): a DECLARE's query
    /// is recorded as a data statement, FETCH and CLOSE as nothing.
    Cursor,
}

/// The kind of a parsed statement.
pub fn kind(s: &Statement) -> Kind {
    match s {
        Statement::StartTransaction { .. } => Kind::Begin,
        Statement::Commit { .. } => Kind::Commit,
        Statement::Rollback {
            savepoint: None, ..
        } => Kind::Rollback,
        Statement::Rollback {
            savepoint: Some(_), ..
        }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. } => Kind::Savepoint,
        Statement::CreateTable(_)
        | Statement::CreateIndex(_)
        | Statement::CreateSequence { .. }
        | Statement::CreateDatabase { .. }
        | Statement::Drop { .. }
        | Statement::AlterTable(_) => Kind::Schema,
        Statement::Declare { .. } | Statement::Fetch { .. } | Statement::Close { .. } => {
            Kind::Cursor
        }
        s if chatter::is_chatter(s) => Kind::Chatter,
        _ => Kind::Data,
    }
}

/// A result column.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The column's name as the client sees it.
    pub name: String,
    /// Its type.
    pub ty: catalog::SqlType,
}

/// What a statement returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Rows (SELECT, RETURNING, SHOW): the fields, the rows, and the command tag's verb
    /// (`SELECT`, `INSERT 0`, `UPDATE`, `DELETE`, `SHOW`) followed by the row count.
    Rows {
        /// The result columns.
        fields: Vec<Field>,
        /// The rows.
        rows: Vec<Vec<crate::store::Value>>,
        /// The command tag without its count (`SELECT`, `INSERT 0`, …).
        tag: &'static str,
        /// The count the tag ends with (rows affected).
        count: usize,
    },
    /// A command without rows and its complete tag (`CREATE TABLE`, `INSERT 0 3`, `SET`).
    Done(String),
}

impl Outcome {
    /// A SELECT's rows: tagged `SELECT n`, n the number of rows.
    pub fn select(fields: Vec<Field>, rows: Vec<Vec<crate::store::Value>>) -> Outcome {
        let count = rows.len();
        Outcome::Rows {
            fields,
            rows,
            tag: "SELECT",
            count,
        }
    }
}
