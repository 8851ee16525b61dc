//! What drivers and tools send besides the application's own statements, answered minimally
//! and recorded as nothing: `SET`/`SHOW`/`RESET`/`DISCARD`/`DEALLOCATE`, `VACUUM`/`ANALYZE`
//! (nothing to maintain), queries without
//! FROM (`SELECT version()`, `SELECT 1`), queries of the system catalogs (`pg_catalog.*`,
//! `information_schema.*`: psql's `\d`, pgbench's partitioning query, driver type lookups),
//! and pgbench's scale query `select count(*) from pgbench_branches`.
//!
//! psql's `\dt` and `\d` (without a pattern) list the tables serve has; `\d TABLE` describes
//! one ([`super::psql_describe`]). Django's table list (its introspection's `pg_class` query,
//! which a migration run and a test database flush ask) lists them too.
//!
//! `SELECT set_config(name, value, false)` sets a session setting (Django sets its time zone
//! so); `SET CONSTRAINTS … IMMEDIATE|DEFERRED` is answered before parsing: no constraint the
//! server enforces is deferrable, so it changes nothing.
//!
//! pgbench's partitioning query (it joins `pg_class`, `pg_namespace`, `pg_partitioned_table`
//! and `pg_inherits` for `pgbench_accounts`) gets one row saying "not partitioned" when the
//! table exists, none otherwise; other catalog queries get no rows.

use sqlparser::ast::{Expr, ObjectNamePart, SelectItem, SetExpr, Statement, TableFactor};

use super::catalog::{Catalog, SqlType};
use super::eval::{self, ident, object_name, SERVER_VERSION};
use super::psql_describe;
use super::{Field, Outcome, SqlError};
use crate::store::Value;

/// A session's settings (`SET name = value`; `SHOW name`).
#[derive(Debug, Clone)]
pub struct Settings {
    values: Vec<(String, String)>,
}

impl Default for Settings {
    fn default() -> Self {
        let defaults = [
            ("server_version", SERVER_VERSION),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("datestyle", "ISO, MDY"),
            ("timezone", "UTC"),
            ("standard_conforming_strings", "on"),
            ("integer_datetimes", "on"),
            ("transaction_isolation", "read committed"),
            ("default_transaction_isolation", "read committed"),
            ("search_path", "\"$user\", public"),
            ("application_name", ""),
        ];
        Settings {
            values: defaults
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

impl Settings {
    /// The value of setting `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        let name = name.to_lowercase();
        self.values
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: &str, value: &str) {
        let name = name.to_lowercase();
        match self.values.iter_mut().find(|(k, _)| *k == name) {
            Some(entry) => entry.1 = value.to_string(),
            None => self.values.push((name, value.to_string())),
        }
    }
}

fn is_system_table(f: &TableFactor) -> bool {
    match f {
        TableFactor::Table { name, .. } => {
            // Unquoted name parts: a `pg_…` relation, or one in pg_catalog or
            // information_schema (no allocation: every data statement asks).
            fn unquoted(p: &ObjectNamePart) -> Option<&str> {
                match p {
                    ObjectNamePart::Identifier(i) if i.quote_style.is_none() => {
                        Some(i.value.as_str())
                    }
                    _ => None,
                }
            }
            let parts = &name.0;
            let pg_prefixed = parts
                .first()
                .and_then(unquoted)
                .and_then(|v| v.get(..3))
                .is_some_and(|p| p.eq_ignore_ascii_case("pg_"));
            let system_schema = parts[..parts.len().saturating_sub(1)]
                .iter()
                .filter_map(unquoted)
                .any(|v| {
                    v.eq_ignore_ascii_case("pg_catalog")
                        || v.eq_ignore_ascii_case("information_schema")
                });
            pg_prefixed || system_schema
        }
        TableFactor::Derived { subquery, .. } => reads_system_tables(subquery),
        TableFactor::Function { .. } => true,
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            is_system_table(&table_with_joins.relation)
                || table_with_joins
                    .joins
                    .iter()
                    .any(|j| is_system_table(&j.relation))
        }
        _ => false,
    }
}

/// Whether query `q` (its first SELECT, or a CTE of it) reads a catalog table.
fn reads_system_tables(q: &sqlparser::ast::Query) -> bool {
    let in_cte = q
        .with
        .as_ref()
        .is_some_and(|w| w.cte_tables.iter().any(|c| reads_system_tables(&c.query)));
    in_cte
        || leftmost_select(q.body.as_ref()).is_some_and(|sel| {
            sel.from.iter().any(|t| {
                is_system_table(&t.relation) || t.joins.iter().any(|j| is_system_table(&j.relation))
            })
        })
}

/// `VACUUM …` or `ANALYZE …` (as one query): its command tag. Answered before parsing, as
/// sqlparser does not take PostgreSQL's `VACUUM ANALYZE table` (pgbench -i sends it).
pub fn maintenance_tag(query: &str) -> Option<&'static str> {
    let first = query.split_whitespace().next()?;
    let one_statement = !query.trim().trim_end_matches(';').contains(';');
    if first.eq_ignore_ascii_case("vacuum") && one_statement {
        Some("VACUUM")
    } else if first.eq_ignore_ascii_case("analyze") && one_statement {
        Some("ANALYZE")
    } else {
        None
    }
}

/// `SET CONSTRAINTS {ALL | name, …} {IMMEDIATE | DEFERRED}` (as one query): its command tag.
/// Answered before parsing (sqlparser does not take it); it changes nothing here, as the
/// constraints the server enforces (primary keys, NOT NULL) are never deferred and the ones it
/// accepts without enforcing (foreign keys) have nothing to defer.
pub fn set_constraints_tag(query: &str) -> Option<&'static str> {
    let statement = query.trim().trim_end_matches(';');
    if statement.contains(';') {
        return None;
    }
    let words: Vec<&str> = statement.split_whitespace().collect();
    let shaped = words.len() >= 4
        && words[0].eq_ignore_ascii_case("set")
        && words[1].eq_ignore_ascii_case("constraints")
        && ["immediate", "deferred"]
            .iter()
            .any(|w| words[words.len() - 1].eq_ignore_ascii_case(w));
    shaped.then_some("SET CONSTRAINTS")
}

/// Whether a statement is chatter (see the module documentation).
pub fn is_chatter(s: &Statement) -> bool {
    match s {
        Statement::Set(_)
        | Statement::ShowVariable { .. }
        | Statement::Discard { .. }
        | Statement::Deallocate { .. }
        | Statement::Vacuum(_)
        | Statement::Analyze(_) => true,
        Statement::Query(q) => match leftmost_select(q.body.as_ref()) {
            Some(sel) => {
                (sel.from.is_empty() && !calls_sequence_function(sel) && !reads_a_table(sel))
                    || reads_system_tables(q)
                    || is_pgbench_scale_query(s)
            }
            None => false,
        },
        _ => false,
    }
}

/// The SELECT a query body is, or the first of a UNION/INTERSECT/EXCEPT (psql's `\d TABLE`
/// asks the publications of a table with a UNION of catalog queries).
fn leftmost_select(body: &SetExpr) -> Option<&sqlparser::ast::Select> {
    match body {
        SetExpr::Select(sel) => Some(sel),
        SetExpr::SetOperation { left, .. } => leftmost_select(left),
        _ => None,
    }
}

/// Whether a query without FROM reads an application's table through a subquery (`SELECT
/// EXISTS (SELECT 1 FROM t …)`): a data statement then.
fn reads_a_table(sel: &sqlparser::ast::Select) -> bool {
    struct Tables;
    impl sqlparser::ast::Visitor for Tables {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &TableFactor) -> std::ops::ControlFlow<()> {
            if matches!(f, TableFactor::Table { .. }) && !is_system_table(f) {
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    sqlparser::ast::Visit::visit(sel, &mut Tables).is_break()
}

/// Whether a query without FROM calls a sequence function (`SELECT nextval('s')`): a data
/// statement then, run with the sequences ([`super::sequence`]).
fn calls_sequence_function(sel: &sqlparser::ast::Select) -> bool {
    sel.projection.iter().any(|item| {
        let text = item.to_string().to_ascii_lowercase();
        [
            "nextval(",
            "currval(",
            "setval(",
            "lastval(",
            "pg_get_serial_sequence(",
        ]
        .iter()
        .any(|f| text.contains(f))
    })
}

/// pgbench's `select count(*) from pgbench_branches`, asked before a built-in script runs.
pub fn is_pgbench_scale_query(s: &Statement) -> bool {
    // The statement is printed only when it reads pgbench_branches alone.
    let Statement::Query(q) = s else {
        return false;
    };
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return false;
    };
    let branches_only = match sel.from.as_slice() {
        [t] if t.joins.is_empty() => matches!(
            &t.relation,
            TableFactor::Table { name, .. }
                if matches!(name.0.last(), Some(ObjectNamePart::Identifier(i))
                    if i.value.eq_ignore_ascii_case("pgbench_branches"))
        ),
        _ => false,
    };
    branches_only
        && s.to_string()
            .eq_ignore_ascii_case("SELECT count(*) FROM pgbench_branches")
}

/// Answers a chatter statement. `present_rows(table)` counts a table's rows in the latest
/// committed state without recording (for pgbench's scale query).
pub fn answer(
    s: &Statement,
    settings: &mut Settings,
    catalog: &Catalog,
    present_rows: &mut dyn FnMut(usize) -> usize,
) -> Result<Outcome, SqlError> {
    match s {
        Statement::Set(set) => answer_set(set, settings),
        Statement::ShowVariable { variable } => answer_show(variable, settings),
        Statement::Discard { .. } => Ok(Outcome::Done("DISCARD ALL".into())),
        Statement::Deallocate { .. } => Ok(Outcome::Done("DEALLOCATE".into())),
        // Maintenance has nothing to do here (pgbench -i sends it).
        Statement::Vacuum(_) => Ok(Outcome::Done("VACUUM".into())),
        Statement::Analyze(_) => Ok(Outcome::Done("ANALYZE".into())),
        Statement::Query(q) => answer_query(s, q, settings, catalog, present_rows),
        other => Err(SqlError::unsupported(format!("the statement {other}"))),
    }
}

/// `SET name = value`, `SET TIME ZONE …`: the session's setting changed.
fn answer_set(set: &sqlparser::ast::Set, settings: &mut Settings) -> Result<Outcome, SqlError> {
    use sqlparser::ast::Set;
    match set {
        Set::SingleAssignment {
            variable, values, ..
        } => {
            let name = variable.to_string();
            let value = values
                .iter()
                .map(|v| match v {
                    Expr::Value(v) => match &v.value {
                        sqlparser::ast::Value::SingleQuotedString(s) => s.clone(),
                        other => other.to_string(),
                    },
                    Expr::Identifier(i) => i.value.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            settings.set(&name, &value);
            Ok(Outcome::Done("SET".into()))
        }
        Set::SetTimeZone { value, .. } => {
            settings.set("timezone", value.to_string().trim_matches('\''));
            Ok(Outcome::Done("SET".into()))
        }
        _ => Ok(Outcome::Done("SET".into())),
    }
}

/// `SHOW name`: the session's setting, as one row.
fn answer_show(
    variable: &[sqlparser::ast::Ident],
    settings: &Settings,
) -> Result<Outcome, SqlError> {
    let name = variable.iter().map(ident).collect::<Vec<_>>().join(" ");
    let value = match name.as_str() {
        "transaction isolation level" => settings.get("transaction_isolation"),
        "time zone" => settings.get("timezone"),
        n => settings.get(n),
    }
    .ok_or_else(|| {
        SqlError::new(
            "42704",
            format!("unrecognized configuration parameter \"{name}\""),
        )
    })?
    .to_string();
    Ok(Outcome::Rows {
        fields: vec![Field {
            name: name.replace(' ', "_"),
            ty: SqlType::Text,
        }],
        rows: vec![vec![Value::text(&value)]],
        tag: "SHOW",
        count: 0,
    })
}

/// A query no table answers: pgbench's scale query, a `SELECT` of settings or constants
/// without FROM, psql's catalog queries (answered from the server's tables where it lists
/// them, else with no rows).
fn answer_query(
    s: &Statement,
    q: &sqlparser::ast::Query,
    settings: &mut Settings,
    catalog: &Catalog,
    present_rows: &mut dyn FnMut(usize) -> usize,
) -> Result<Outcome, SqlError> {
    let Some(sel) = leftmost_select(q.body.as_ref()) else {
        return Err(SqlError::unsupported("this query"));
    };
    if is_pgbench_scale_query(s) {
        let count = catalog
            .table("pgbench_branches")
            .map(&mut *present_rows)
            .ok_or_else(|| SqlError::undefined_table("pgbench_branches"))?;
        let fields = vec![Field {
            name: "count".into(),
            ty: SqlType::Int8,
        }];
        return Ok(Outcome::select(
            fields,
            vec![vec![Value::Int(count as i64)]],
        ));
    }
    let fields: Vec<Field> = sel
        .projection
        .iter()
        .map(|item| Field {
            name: match item {
                SelectItem::ExprWithAlias { alias, .. } => ident(alias),
                SelectItem::UnnamedExpr(Expr::Function(f)) => {
                    object_name(&f.name).unwrap_or_else(|_| "?column?".into())
                }
                SelectItem::UnnamedExpr(e) => eval::column_ref(e)
                    .map(|(_, c)| c.into_owned())
                    .unwrap_or_else(|| "?column?".into()),
                _ => "?column?".into(),
            },
            ty: SqlType::Text,
        })
        .collect();
    if sel.from.is_empty() {
        return select_without_from(sel, fields, settings);
    }
    let original = s.to_string();
    let text = original.to_lowercase();
    let detail = psql_describe::table_detail(&fields, &original, catalog);
    if let Some(rows) = django_table_list(&fields, &text, catalog) {
        let mut fields = fields;
        fields[1].name = "case".into();
        return Ok(Outcome::select(fields, rows));
    }
    if let Some(rows) = relation_list(&fields, &text, catalog).or(detail) {
        return Ok(Outcome::select(fields, rows));
    }
    if text.contains("pg_partitioned_table") {
        let relname = text
            .split("relname = '")
            .nth(1)
            .and_then(|r| r.split('\'').next())
            .unwrap_or("");
        let rows = if catalog.table(relname).is_some() {
            vec![vec![Value::Int(1), Value::Null, Value::Int(0)]]
        } else {
            Vec::new()
        };
        let mut fields = fields;
        for (f, ty) in fields
            .iter_mut()
            .zip([SqlType::Int4, SqlType::Text, SqlType::Int8])
        {
            f.ty = ty;
        }
        return Ok(Outcome::select(fields, rows));
    }
    Ok(Outcome::select(fields, Vec::new()))
}

/// `SELECT` without FROM: each item a setting (`current_setting(…)`) or a constant expression.
fn select_without_from(
    sel: &sqlparser::ast::Select,
    fields: Vec<Field>,
    settings: &mut Settings,
) -> Result<Outcome, SqlError> {
    let mut row = Vec::new();
    let mut fields = fields;
    for (item, field) in sel.projection.iter().zip(fields.iter_mut()) {
        let e = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            other => return Err(SqlError::unsupported(format!("the select item {other}"))),
        };
        let v = match set_config(e, settings)? {
            Some(v) => v,
            None => current_setting(e, settings)
                .map(Ok)
                .unwrap_or_else(|| eval::eval(e, &mut eval::NoColumns, &[]))?,
        };
        field.ty = match v {
            Value::Int(_) => SqlType::Int4,
            Value::Real(_) => SqlType::Numeric,
            Value::Bool(_) => SqlType::Bool,
            _ => SqlType::Text,
        };
        row.push(v);
    }
    Ok(Outcome::select(fields, vec![row]))
}

/// psql's `\dt` and `\d` without a pattern (a query of `pg_class` with the columns Schema,
/// Name, Type, Owner): one row per table, by name; `None` for any other catalog query.
fn relation_list(fields: &[Field], text: &str, catalog: &Catalog) -> Option<Vec<Vec<Value>>> {
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    if names != ["Schema", "Name", "Type", "Owner"]
        || !text.contains("pg_class")
        || text.contains("relname operator")
    {
        return None;
    }
    Some(
        sorted_table_names(catalog)
            .into_iter()
            .map(|t| {
                vec![
                    Value::text("public"),
                    Value::text(t),
                    Value::text("table"),
                    Value::text("postgres"),
                ]
            })
            .collect(),
    )
}

/// The tables' names, in order (as PostgreSQL's catalog listings sort them).
fn sorted_table_names(catalog: &Catalog) -> Vec<&str> {
    let mut tables: Vec<&str> = catalog.table_names().collect();
    tables.sort_unstable();
    tables
}

/// Django's table list (`DatabaseIntrospection.get_table_list`: `SELECT c.relname, CASE …
/// END, obj_description(c.oid, 'pg_class') FROM pg_catalog.pg_class c LEFT JOIN
/// pg_catalog.pg_namespace n … WHERE c.relkind IN ('f', 'm', 'p', 'r', 'v') AND …
/// pg_table_is_visible(c.oid)`): one row per table, `(name, 't', NULL)`, by name; `None` for
/// any other catalog query.
fn django_table_list(fields: &[Field], text: &str, catalog: &Catalog) -> Option<Vec<Vec<Value>>> {
    let shaped = fields.len() == 3
        && fields[0].name == "relname"
        && text.contains("from pg_catalog.pg_class c")
        && text.contains("relkind in ('f', 'm', 'p', 'r', 'v')")
        && text.contains("obj_description(c.oid, 'pg_class')")
        && text.contains("pg_table_is_visible(c.oid)");
    if !shaped {
        return None;
    }
    Some(
        sorted_table_names(catalog)
            .into_iter()
            .map(|t| vec![Value::text(t), Value::text("t"), Value::Null])
            .collect(),
    )
}

/// `set_config('name', 'value', false)`: the session's setting set, its value returned.
/// `is_local` true (for the transaction only) is refused: settings here last for the session.
fn set_config(e: &Expr, settings: &mut Settings) -> Result<Option<Value>, SqlError> {
    let Expr::Function(f) = e else {
        return Ok(None);
    };
    if object_name(&f.name).ok().as_deref() != Some("set_config") {
        return Ok(None);
    }
    let sqlparser::ast::FunctionArguments::List(list) = &f.args else {
        return Ok(None);
    };
    let mut args = Vec::new();
    for a in &list.args {
        let sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(a)) = a
        else {
            return Err(SqlError::unsupported(format!("the call {e}")));
        };
        args.push(eval::eval(a, &mut eval::NoColumns, &[])?);
    }
    match args.as_slice() {
        [Value::Text(name), Value::Text(value), Value::Bool(false)] => {
            settings.set(name, value);
            Ok(Some(Value::text(value)))
        }
        _ => Err(SqlError::unsupported(format!(
            "the call {e} (set_config(name, value, false) is)"
        ))),
    }
}

/// `current_setting('name')`, answered from the session's settings.
fn current_setting(e: &Expr, settings: &Settings) -> Option<Value> {
    let Expr::Function(f) = e else { return None };
    if object_name(&f.name).ok()? != "current_setting" {
        return None;
    }
    let text = e.to_string();
    let name = text.split('\'').nth(1)?;
    settings.get(name).map(Value::text)
}
