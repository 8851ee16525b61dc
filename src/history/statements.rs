//! The SQL statements behind a recorded history's operations (the recording server's
//! histories, `isopredict serve`/`record`): each statement's text, bound parameters, session
//! and position in its session, and for every operation the statement that made it, so that
//! reports can speak in the application's statements. Optional: most histories have none.

use crate::error::InputError;

/// One SQL statement a client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlStatement {
    /// The history session (connection) that sent it.
    pub session: usize,
    /// Its position among its session's statements (1-based, as a line number).
    pub index: u32,
    /// The text as sent.
    pub sql: String,
    /// Bound parameters (`$1`, `$2`, …) as text; `None` is NULL.
    pub params: Vec<Option<String>>,
}

/// The statements of a history and the statement of each operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementTable {
    session_names: Vec<String>,
    statements: Vec<SqlStatement>,
    op_statement: Vec<u32>,
    schema: Vec<String>,
}

/// No statement (an operation the history has without one, such as an initial write).
pub const NO_STATEMENT: u32 = u32::MAX;

impl StatementTable {
    /// A table: each history session's name, the statements, and per operation (in
    /// [`super::OpId`] order) its statement's number or [`NO_STATEMENT`].
    pub fn new(
        session_names: Vec<String>,
        statements: Vec<SqlStatement>,
        op_statement: Vec<u32>,
    ) -> StatementTable {
        StatementTable {
            session_names,
            statements,
            op_statement,
            schema: Vec::new(),
        }
    }

    /// The same with the schema statements the clients ran (CREATE/DROP TABLE, CREATE
    /// INDEX, in order; not transactions, so no operation names them).
    pub fn with_schema(mut self, schema: Vec<String>) -> StatementTable {
        self.schema = schema;
        self
    }

    /// The schema statements, in the order run.
    pub fn schema(&self) -> &[String] {
        &self.schema
    }

    /// The name of each history session (its connection's `application_name`).
    pub fn session_names(&self) -> &[String] {
        &self.session_names
    }

    /// The statements, in the order sent.
    pub fn statements(&self) -> &[SqlStatement] {
        &self.statements
    }

    /// The statement of each operation ([`NO_STATEMENT`] for none).
    pub fn op_statements(&self) -> &[u32] {
        &self.op_statement
    }

    /// The statement that made operation `op`.
    pub fn of_op(&self, op: super::OpId) -> Option<&SqlStatement> {
        self.op_statement
            .get(op as usize)
            .and_then(|&s| self.statements.get(s as usize))
    }

    /// Checks the table against a history: one entry per operation, statement numbers and
    /// sessions in range.
    pub fn validate(&self, history: &super::History) -> Result<(), InputError> {
        let err = |m: String| InputError::new(history.source().to_string(), 0, m);
        if self.op_statement.len() != history.ops().len() {
            return Err(err(format!(
                "statements: {} operation entries for {} operations",
                self.op_statement.len(),
                history.ops().len()
            )));
        }
        if let Some(&s) = self
            .op_statement
            .iter()
            .find(|&&s| s != NO_STATEMENT && s as usize >= self.statements.len())
        {
            return Err(err(format!(
                "statements: operation names statement {s} of {}",
                self.statements.len()
            )));
        }
        if let Some(st) = self
            .statements
            .iter()
            .find(|st| st.session >= history.sessions().len())
        {
            return Err(err(format!(
                "statements: statement {:?} names session {} of {}",
                st.sql,
                st.session,
                history.sessions().len()
            )));
        }
        Ok(())
    }
}
