//! PostgreSQL's frontend/backend protocol, spoken with the `pgwire` crate: startup with
//! `trust` or cleartext-password authentication, the simple query protocol (several
//! statements per Query, stopping at the first error), and the extended one (Parse, Bind,
//! Describe, Execute, Sync, Close; after an error pgwire skips to the next Sync). Each
//! connection is one [`Session`]; its statements run through the SQL layer. The status that
//! ReadyForQuery reports (idle, in a block, failed) is the session's own
//! ([`Connection::status`]): an error of any kind fails a block, and `ROLLBACK TO SAVEPOINT`
//! makes a failed block usable again, which pgwire's own bookkeeping cannot say.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use futures::{stream, Sink};
use pgwire::api::auth::{
    finish_authentication, save_startup_parameters_to_metadata, ServerParameterProvider,
    StartupHandler,
};
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{
    CopyResponse, DataRowEncoder, DescribePortalResponse, DescribeStatementResponse, FieldFormat,
    FieldInfo, QueryResponse, Response, Tag,
};
use pgwire::api::stmt::{QueryParser, StoredStatement};
use pgwire::api::{ClientInfo, PgWireConnectionState, Type};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::response::TransactionStatus;
use pgwire::messages::startup::Authentication;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use sqlparser::ast::Statement;
use tokio::sync::Mutex;

use super::database::{ClosingProbe, Shared};
use super::session::{Effect, Session, TxnState};
use super::sql::catalog::SqlType;
use super::sql::copy::{CopyIn, CopyOut};
use super::sql::eval::{plain, SERVER_VERSION};
use super::sql::parse_cache::ParseCache;
use super::sql::{self, chatter, exec, Field, Outcome, SqlError};
use crate::store::Value;

/// A connection's handlers: its session (opened when the client is authenticated, with the
/// startup parameters) and the shared database.
pub struct Connection {
    shared: Arc<Shared>,
    password: Option<String>,
    session: Mutex<Option<Session>>,
    parser: Arc<Parse>,
    /// The session's transaction state as ReadyForQuery reports it (`I`, `T`, `E`).
    status: AtomicU8,
    /// A `COPY … FROM STDIN` receiving its rows.
    copy: std::sync::Mutex<Option<PendingCopy>>,
    /// Its socket, as other connections see it.
    socket: Arc<ClosingProbe>,
}

/// A `COPY … FROM STDIN` between CopyInResponse and CopyDone: the rows so far, the INSERT of
/// one row they run as, the statement's text, the first error in the data.
struct PendingCopy {
    rows: CopyIn,
    insert_one: Statement,
    width: usize,
    text: String,
    error: Option<SqlError>,
}

impl Connection {
    /// The handlers of a new connection.
    pub fn new(shared: Arc<Shared>, password: Option<String>) -> Arc<Connection> {
        Arc::new(Connection {
            shared,
            password,
            session: Mutex::new(None),
            parser: Arc::new(Parse::default()),
            status: AtomicU8::new(b'I'),
            copy: std::sync::Mutex::new(None),
            socket: Arc::default(),
        })
    }

    /// Its socket, as other connections see it (the connection loop attaches it).
    pub fn socket(&self) -> &ClosingProbe {
        &self.socket
    }

    /// Starts a `COPY … FROM STDIN` (`text`): the client is asked for its rows.
    fn start_copy<'a>(
        &self,
        session: &Session,
        copy: Result<CopyIn, SqlError>,
        text: String,
    ) -> Result<Response<'a>, SqlError> {
        if session.state() == TxnState::Failed {
            return Err(SqlError::new(
                "25P02",
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let rows = copy?;
        let (insert, width) = rows.insert_sql(&self.shared.lock().catalog)?;
        let insert_one = sql::parse(&insert)?
            .pop()
            .ok_or_else(|| SqlError::unsupported("this COPY"))?;
        *self.copy.lock().unwrap_or_else(|p| p.into_inner()) = Some(PendingCopy {
            rows,
            insert_one,
            width,
            text,
            error: None,
        });
        Ok(Response::CopyIn(CopyResponse::new(
            0,
            width,
            vec![0; width],
        )))
    }

    /// A `COPY … TO STDOUT` (`text`): its query runs as a data statement (recorded as the
    /// reads it makes), then its rows go to the client as CopyOutResponse, CopyData and
    /// CopyDone; the response left is the command's tag (`COPY n`), or the error.
    async fn copy_out<'a, C>(
        &self,
        client: &mut C,
        session: &mut Session,
        copy: Result<CopyOut, SqlError>,
        text: &str,
    ) -> PgWireResult<Response<'a>>
    where
        C: Sink<PgWireBackendMessage> + Unpin + Send,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        use futures::SinkExt;
        use pgwire::messages::copy::{CopyData, CopyDone, CopyOutResponse};
        let result = match copy {
            Ok(copy) => {
                let (result, _) = session.run(&self.shared, &copy.query, text, &[], &[]).await;
                result.and_then(|outcome| match outcome {
                    Outcome::Rows { fields, rows, .. } => Ok((copy, fields, rows)),
                    Outcome::Done(_) => Err(SqlError::unsupported("COPY of this statement")),
                })
            }
            Err(e) => {
                self.shared.lock().recorder.errors += 1;
                session.fail(&self.shared);
                Err(e)
            }
        };
        let (copy, fields, rows) = match result {
            Ok(r) => r,
            Err(e) => return Ok(Response::Error(Box::new(error_info(&e)))),
        };
        let width = fields.len();
        client
            .feed(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(
                0,
                width as i16,
                vec![0; width],
            )))
            .await?;
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        for line in copy.lines(&names, &rows) {
            let data = CopyData::new(line.into());
            client.feed(PgWireBackendMessage::CopyData(data)).await?;
        }
        client
            .feed(PgWireBackendMessage::CopyDone(CopyDone::new()))
            .await?;
        Ok(Response::Execution(Tag::new("COPY").with_rows(rows.len())))
    }

    /// CopyData: rows of the COPY in progress (a malformed row is reported at CopyDone).
    pub fn on_copy_data(&self, data: &[u8]) {
        let mut guard = self.copy.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = guard.as_mut().filter(|c| c.error.is_none()) {
            if let Err(e) = c.rows.data(data, c.width) {
                c.error = Some(e);
            }
        }
    }

    /// CopyDone: the rows are inserted as one statement; returns its tag (`COPY n`).
    pub async fn on_copy_done(&self) -> PgWireResult<Tag> {
        let pending = self.copy.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(mut c) = pending else {
            return Err(user_error(&SqlError::new(
                "08P01",
                "CopyDone without a COPY",
            )));
        };
        if let Some(e) = c.error.take() {
            return Err(user_error(&e));
        }
        c.rows.finish(c.width).map_err(|e| user_error(&e))?;
        let mut guard = self.session.lock().await;
        let session = guard.as_mut().expect("a COPY runs in an open session");
        let done = session
            .copy_rows(&self.shared, &c.insert_one, &c.text, &c.rows.rows)
            .await;
        self.note_state(session);
        match done {
            Ok(_) => Ok(Tag::new("COPY").with_rows(c.rows.rows.len())),
            Err(e) => Err(user_error(&e)),
        }
    }

    /// CopyFail: the client gave up the COPY; it fails like a statement.
    pub fn on_copy_fail(&self, message: &str) -> PgWireError {
        self.copy.lock().unwrap_or_else(|p| p.into_inner()).take();
        user_error(&SqlError::new(
            "57014",
            format!("COPY from stdin failed: {message}"),
        ))
    }

    /// The transaction status to report in ReadyForQuery: the session's.
    pub fn status(&self) -> TransactionStatus {
        match self.status.load(Ordering::Relaxed) {
            b'T' => TransactionStatus::Transaction,
            b'E' => TransactionStatus::Error,
            _ => TransactionStatus::Idle,
        }
    }

    fn note_state(&self, session: &Session) {
        let byte = match session.state() {
            TxnState::Idle => b'I',
            TxnState::InBlock => b'T',
            TxnState::Failed => b'E',
        };
        self.status.store(byte, Ordering::Relaxed);
    }

    /// A protocol-level error (a syntax error, a bad parameter, a message out of place):
    /// the session's block fails, as PostgreSQL fails it.
    pub async fn on_error(&self) {
        if let Some(session) = self.session.lock().await.as_mut() {
            session.fail(&self.shared);
            self.note_state(session);
        }
    }

    /// Called when the connection ended: an open transaction is recorded as aborted.
    pub async fn closed(&self) {
        if let Some(s) = self.session.lock().await.as_mut() {
            s.close(&self.shared);
        }
    }

    /// The session, opened with the client's `application_name` if it is not open yet.
    async fn with_session<C: ClientInfo + Sync>(
        &self,
        client: &C,
    ) -> tokio::sync::MutexGuard<'_, Option<Session>> {
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            let name = client.metadata().get("application_name");
            let socket = Some(self.socket.clone());
            *guard = Some(Session::open_on(
                &self.shared,
                name.map(String::as_str),
                socket,
            ));
        }
        guard
    }

    /// The session, opened with `application_name` if it is not open yet.
    async fn session_named(
        &self,
        application_name: Option<String>,
    ) -> tokio::sync::MutexGuard<'_, Option<Session>> {
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            let socket = Some(self.socket.clone());
            *guard = Some(Session::open_on(
                &self.shared,
                application_name.as_deref(),
                socket,
            ));
        }
        guard
    }
}

fn error_info(e: &SqlError) -> ErrorInfo {
    ErrorInfo::new("ERROR".to_string(), e.code.to_string(), e.message.clone())
}

fn user_error(e: &SqlError) -> PgWireError {
    PgWireError::UserError(Box::new(error_info(e)))
}

/// The protocol type of a column type in a format (binary numerics and timestamps are sent
/// as double precision and text).
fn pg_type(ty: SqlType, format: FieldFormat) -> Type {
    match (ty, format) {
        (SqlType::Int2, _) => Type::INT2,
        (SqlType::Int4, _) => Type::INT4,
        (SqlType::Int8, _) => Type::INT8,
        (SqlType::Float8, _) | (SqlType::Numeric, FieldFormat::Binary) => Type::FLOAT8,
        (SqlType::Numeric, FieldFormat::Text) => Type::NUMERIC,
        (SqlType::Bool, _) => Type::BOOL,
        (SqlType::Timestamp, FieldFormat::Text) => Type::TIMESTAMP,
        (SqlType::Text | SqlType::Timestamp, _) => Type::TEXT,
    }
}

fn format_at(format: &Format, i: usize) -> FieldFormat {
    match format {
        Format::UnifiedText => FieldFormat::Text,
        Format::UnifiedBinary => FieldFormat::Binary,
        Format::Individual(codes) => {
            let code = codes.get(i).or(codes.first()).copied().unwrap_or(0);
            FieldFormat::from(code)
        }
    }
}

fn field_infos(fields: &[Field], format: &Format) -> Vec<FieldInfo> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let fmt = format_at(format, i);
            FieldInfo::new(f.name.clone(), None, None, pg_type(f.ty, fmt), fmt)
        })
        .collect()
}

fn encode_value(enc: &mut DataRowEncoder, info: &FieldInfo, v: &Value) -> PgWireResult<()> {
    if matches!(v, Value::Null) {
        return enc.encode_field(&None::<i32>);
    }
    let ty = info.datatype();
    if *ty == Type::INT2 {
        enc.encode_field(&v.as_i64().map(|i| i as i16))
    } else if *ty == Type::INT4 {
        enc.encode_field(&v.as_i64().map(|i| i as i32))
    } else if *ty == Type::INT8 {
        enc.encode_field(&v.as_i64())
    } else if *ty == Type::FLOAT8 {
        enc.encode_field(&v.as_f64())
    } else if *ty == Type::BOOL {
        enc.encode_field(&match v {
            Value::Bool(b) => Some(*b),
            other => Some(plain(other) == "t"),
        })
    } else if *ty == Type::NUMERIC {
        // Text format only (see pg_type): the number's text.
        enc.encode_field_with_type_and_format(&Some(plain(v)), &Type::TEXT, FieldFormat::Text)
    } else if *ty == Type::TIMESTAMP {
        enc.encode_field_with_type_and_format(&Some(plain(v)), &Type::TEXT, FieldFormat::Text)
    } else {
        enc.encode_field(&Some(plain(v)))
    }
}

fn rows_response<'a>(fields: Vec<FieldInfo>, rows: Vec<Vec<Value>>, tag: &str) -> Response<'a> {
    let schema = Arc::new(fields);
    let encoded: Vec<PgWireResult<_>> = rows
        .iter()
        .map(|row| {
            let mut enc = DataRowEncoder::new(schema.clone());
            for (info, v) in schema.iter().zip(row) {
                encode_value(&mut enc, info, v)?;
            }
            enc.finish()
        })
        .collect();
    let mut q = QueryResponse::new(schema, stream::iter(encoded));
    q.set_command_tag(tag);
    Response::Query(q)
}

fn response<'a>(outcome: Outcome, effect: Effect, format: &Format) -> Response<'a> {
    match outcome {
        Outcome::Rows {
            fields, rows, tag, ..
        } => rows_response(field_infos(&fields, format), rows, tag),
        Outcome::Done(tag) => {
            let tag = Tag::new(&tag);
            match effect {
                Effect::Began => Response::TransactionStart(tag),
                Effect::Ended => Response::TransactionEnd(tag),
                Effect::None => Response::Execution(tag),
            }
        }
    }
}

/// The text of statement `i` of `n` parsed from `query`: the query itself when it holds one
/// statement (the client's own text), else the statement as parsed.
fn statement_text(query: &str, stmt: &Statement, n: usize) -> String {
    if n == 1 {
        query.trim().trim_end_matches(';').trim().to_string()
    } else {
        stmt.to_string()
    }
}

#[async_trait]
impl SimpleQueryHandler for Connection {
    async fn do_query<'a, C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response<'a>>>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let Some(tag) =
            chatter::maintenance_tag(query).or_else(|| chatter::set_constraints_tag(query))
        {
            return Ok(vec![Response::Execution(Tag::new(tag))]);
        }
        let parsed = self.parser.statements(query).or_else(|e| {
            sql::copy::spell_boolean_options(query).map_or(Err(e), |q| sql::parse(&q))
        });
        let stmts = match parsed {
            Ok(s) => s,
            Err(e) => {
                self.shared.lock().recorder.errors += 1;
                self.on_error().await;
                return Ok(vec![Response::Error(Box::new(error_info(&e)))]);
            }
        };
        let mut guard = self.with_session(client).await;
        let session = guard.as_mut().expect("the session was opened");
        let mut out = Vec::with_capacity(stmts.len());
        let n = stmts.len();
        for (i, stmt) in stmts.iter().enumerate() {
            let text = statement_text(query, stmt, n);
            if let Some(copy) = sql::copy::copy_in(stmt) {
                // The client sends the rows next: the COPY ends the query's statements.
                let started = if i + 1 < n {
                    Err(SqlError::unsupported("a statement after COPY … FROM STDIN"))
                } else {
                    self.start_copy(session, copy, text)
                };
                match started {
                    Ok(response) => out.push(response),
                    Err(e) => {
                        self.shared.lock().recorder.errors += 1;
                        session.fail(&self.shared);
                        out.push(Response::Error(Box::new(error_info(&e))));
                    }
                }
                break;
            }
            if let Some(copy) = sql::copy::copy_out(stmt) {
                // Its data goes to the client now: the COPY must be the query's only statement.
                let copy = copy.and_then(|c| match n {
                    1 => Ok(c),
                    _ => Err(SqlError::unsupported(
                        "COPY … TO STDOUT among other statements",
                    )),
                });
                out.push(self.copy_out(client, session, copy, &text).await?);
                break;
            }
            let (result, effect) = session.run(&self.shared, stmt, &text, &[], &[]).await;
            match result {
                Ok(outcome) => out.push(response(outcome, effect, &Format::UnifiedText)),
                Err(e) => {
                    out.push(Response::Error(Box::new(error_info(&e))));
                    break;
                }
            }
        }
        self.note_state(session);
        if out.is_empty() {
            out.push(Response::EmptyQuery);
        }
        Ok(out)
    }
}

/// A statement prepared by Parse: its text and parsed form (none: an empty query).
#[derive(Debug, Clone)]
pub struct Prepared {
    text: String,
    stmt: Option<Statement>,
}

/// Parses a connection's statements (simple queries and Parse messages), through its parse
/// cache.
#[derive(Default)]
pub struct Parse {
    cache: std::sync::Mutex<ParseCache>,
}

impl Parse {
    /// The statements of `text` (syntax errors: `42601`).
    fn statements(&self, text: &str) -> Result<Vec<Statement>, SqlError> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .parse(text)
    }
}

#[async_trait]
impl QueryParser for Parse {
    type Statement = Prepared;

    async fn parse_sql<C>(&self, _client: &C, sql: &str, _types: &[Type]) -> PgWireResult<Prepared>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let mut stmts = self
            .statements(sql)
            .map_err(|e| PgWireError::UserError(Box::new(error_info(&e))))?;
        if stmts.len() > 1 {
            return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "ERROR".into(),
                "42601".into(),
                "cannot insert multiple commands into a prepared statement".into(),
            ))));
        }
        Ok(Prepared {
            text: sql.trim().trim_end_matches(';').trim().to_string(),
            stmt: stmts.pop(),
        })
    }
}

/// The highest `$n` in a statement's text.
fn placeholder_count(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut max = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if let Ok(n) = text[start..j].parse::<usize>() {
                max = max.max(n);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    max
}

impl Connection {
    /// The answer to a Describe of a portal named after one of the session's SQL cursors
    /// (psycopg describes its named cursors so; PostgreSQL keeps a cursor as a portal of that
    /// name): the cursor's row description, or NoData for one without columns. `None` when no
    /// cursor has that name.
    pub async fn cursor_description<C: ClientInfo + Sync>(
        &self,
        client: &C,
        name: &str,
    ) -> Option<PgWireBackendMessage> {
        use pgwire::messages::data::{NoData, RowDescription};
        let cursor = sqlparser::ast::Ident::with_quote('"', name);
        let fields = self
            .with_session(client)
            .await
            .as_mut()?
            .cursor_fields(&cursor)
            .ok()?;
        if fields.is_empty() {
            return Some(PgWireBackendMessage::NoData(NoData::new()));
        }
        let infos = field_infos(&fields, &Format::UnifiedText);
        Some(PgWireBackendMessage::RowDescription(RowDescription::new(
            infos.iter().map(Into::into).collect(),
        )))
    }

    /// The fields a statement returns, without running it (Describe): a data statement's from
    /// the catalog, chatter's from answering it on a copy of the session's settings.
    async fn fields_of<C: ClientInfo + Sync>(
        &self,
        client: &C,
        stmt: &Statement,
    ) -> PgWireResult<Vec<Field>> {
        let fields = match sql::kind(stmt) {
            sql::Kind::Data => exec::describe(&self.shared.lock().catalog, stmt),
            sql::Kind::Chatter => {
                let mut settings = self
                    .with_session(client)
                    .await
                    .as_ref()
                    .map(|s| s.settings.clone())
                    .unwrap_or_default();
                let mut zero = |_t: usize| 0;
                let db = self.shared.lock();
                chatter::answer(stmt, &mut settings, &db.catalog, &mut zero).map(|o| match o {
                    Outcome::Rows { fields, .. } => fields,
                    Outcome::Done(_) => Vec::new(),
                })
            }
            sql::Kind::Cursor => match stmt {
                Statement::Fetch { name, .. } => match self.with_session(client).await.as_mut() {
                    Some(session) => session.cursor_fields(name),
                    None => Ok(Vec::new()),
                },
                _ => Ok(Vec::new()),
            },
            _ => Ok(Vec::new()),
        };
        fields.map_err(|e| PgWireError::UserError(Box::new(error_info(&e))))
    }

    /// The bound parameters as values and as text (for the recording).
    fn parameters(portal: &Portal<Prepared>) -> PgWireResult<(Vec<Value>, Vec<Option<String>>)> {
        let mut values = Vec::with_capacity(portal.parameter_len());
        let mut texts = Vec::with_capacity(portal.parameter_len());
        for i in 0..portal.parameter_len() {
            let ty = portal
                .statement
                .parameter_types
                .get(i)
                .cloned()
                .unwrap_or(Type::UNKNOWN);
            let binary = matches!(format_at(&portal.parameter_format, i), FieldFormat::Binary);
            let v = if portal.parameters[i].is_none() {
                Value::Null
            } else if !binary {
                let bytes = portal.parameters[i].as_deref().unwrap_or_default();
                Value::text(&String::from_utf8_lossy(bytes))
            } else if ty == Type::INT2 {
                portal
                    .parameter::<i16>(i, &ty)?
                    .map_or(Value::Null, |x| Value::Int(x as i64))
            } else if ty == Type::INT4 {
                portal
                    .parameter::<i32>(i, &ty)?
                    .map_or(Value::Null, |x| Value::Int(x as i64))
            } else if ty == Type::INT8 {
                portal
                    .parameter::<i64>(i, &ty)?
                    .map_or(Value::Null, Value::Int)
            } else if ty == Type::FLOAT4 {
                portal
                    .parameter::<f32>(i, &ty)?
                    .map_or(Value::Null, |x| Value::Real(x as f64))
            } else if ty == Type::FLOAT8 {
                portal
                    .parameter::<f64>(i, &ty)?
                    .map_or(Value::Null, Value::Real)
            } else if ty == Type::BOOL {
                portal
                    .parameter::<bool>(i, &ty)?
                    .map_or(Value::Null, Value::Bool)
            } else if ty == Type::TEXT || ty == Type::VARCHAR || ty == Type::UNKNOWN {
                portal
                    .parameter::<String>(i, &ty)?
                    .map_or(Value::Null, |s| Value::text(&s))
            } else {
                return Err(PgWireError::UserError(Box::new(error_info(
                    &SqlError::unsupported(format!("a binary parameter of type {ty}")),
                ))));
            };
            texts.push(match &v {
                Value::Null => None,
                other => Some(plain(other)),
            });
            values.push(v);
        }
        Ok((values, texts))
    }
}

#[async_trait]
impl ExtendedQueryHandler for Connection {
    type Statement = Prepared;
    type QueryParser = Parse;

    fn query_parser(&self) -> Arc<Parse> {
        self.parser.clone()
    }

    async fn do_describe_statement<C>(
        &self,
        client: &mut C,
        target: &StoredStatement<Prepared>,
    ) -> PgWireResult<DescribeStatementResponse>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let n = placeholder_count(&target.statement.text).max(target.parameter_types.len());
        let params: Vec<Type> = (0..n)
            .map(|i| match target.parameter_types.get(i) {
                Some(t) if *t != Type::UNKNOWN && t.oid() != 0 => t.clone(),
                _ => Type::TEXT,
            })
            .collect();
        let fields = match &target.statement.stmt {
            None => Vec::new(),
            Some(stmt) => self.fields_of(client, stmt).await?,
        };
        Ok(DescribeStatementResponse::new(
            params,
            field_infos(&fields, &Format::UnifiedText),
        ))
    }

    async fn do_describe_portal<C>(
        &self,
        client: &mut C,
        portal: &Portal<Prepared>,
    ) -> PgWireResult<DescribePortalResponse>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let fields = match &portal.statement.statement.stmt {
            None => Vec::new(),
            Some(stmt) => self.fields_of(client, stmt).await?,
        };
        Ok(DescribePortalResponse::new(field_infos(
            &fields,
            &portal.result_column_format,
        )))
    }

    async fn do_query<'a, C>(
        &self,
        client: &mut C,
        portal: &Portal<Prepared>,
        _max_rows: usize,
    ) -> PgWireResult<Response<'a>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let prepared = &portal.statement.statement;
        let Some(stmt) = &prepared.stmt else {
            return Ok(Response::EmptyQuery);
        };
        if matches!(stmt, Statement::Copy { .. }) {
            return Err(user_error(&SqlError::unsupported(
                "COPY in the extended query protocol (send it as a simple query)",
            )));
        }
        let (values, texts) = Self::parameters(portal)?;
        let mut guard = self.with_session(client).await;
        let session = guard.as_mut().expect("the session was opened");
        let (result, effect) = session
            .run(&self.shared, stmt, &prepared.text, &values, &texts)
            .await;
        self.note_state(session);
        match result {
            Ok(outcome) => Ok(response(outcome, effect, &portal.result_column_format)),
            Err(e) => Err(PgWireError::UserError(Box::new(error_info(&e)))),
        }
    }
}

/// Server parameters reported at startup (drivers read them).
struct Parameters;

impl ServerParameterProvider for Parameters {
    fn server_parameters<C>(&self, _client: &C) -> Option<std::collections::HashMap<String, String>>
    where
        C: ClientInfo,
    {
        let mut p = std::collections::HashMap::new();
        for (k, v) in [
            ("server_version", SERVER_VERSION),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
            ("TimeZone", "UTC"),
            ("IntervalStyle", "postgres"),
            ("is_superuser", "on"),
            ("session_authorization", "postgres"),
        ] {
            p.insert(k.to_string(), v.to_string());
        }
        Some(p)
    }
}

#[async_trait]
impl StartupHandler for Connection {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        use futures::SinkExt;
        match message {
            PgWireFrontendMessage::Startup(ref startup) => {
                save_startup_parameters_to_metadata(client, startup);
                if self.password.is_some() {
                    client.set_state(PgWireConnectionState::AuthenticationInProgress);
                    client
                        .send(PgWireBackendMessage::Authentication(
                            Authentication::CleartextPassword,
                        ))
                        .await?;
                } else {
                    finish_authentication(client, &Parameters).await?;
                    // The session opens with the connection: which connections had closed
                    // by then is a fact of real time the recording keeps.
                    let name = client.metadata().get("application_name").cloned();
                    drop(self.session_named(name).await);
                }
            }
            PgWireFrontendMessage::PasswordMessageFamily(pwd) => {
                let given = pwd.into_password()?;
                if Some(given.password.as_str()) == self.password.as_deref() {
                    finish_authentication(client, &Parameters).await?;
                    let name = client.metadata().get("application_name").cloned();
                    drop(self.session_named(name).await);
                } else {
                    let user = client.metadata().get("user").cloned().unwrap_or_default();
                    return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                        "FATAL".into(),
                        "28P01".into(),
                        format!("password authentication failed for user \"{user}\""),
                    ))));
                }
            }
            _ => {}
        }
        Ok(())
    }
}
