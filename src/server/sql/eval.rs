//! Evaluating scalar SQL expressions over a row: columns (read through the caller, which
//! records each cell read), parameters (`$1`), constants, arithmetic, comparisons, AND/OR/NOT,
//! `IN`, `BETWEEN`, `IS [NOT] NULL`, casts and a few functions. NULL follows SQL's
//! three-valued logic: a comparison with NULL is NULL, and a WHERE clause keeps a row only
//! when its condition is true. Subqueries (`EXISTS`, `IN (SELECT …)`, `= ANY (SELECT …)`, a
//! scalar `(SELECT …)`) and aggregate calls are answered by the caller's [`Columns`], which
//! runs them for the row (or its group) at hand.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::rc::Rc;

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
    Ident, ObjectName, ObjectNamePart, Query, UnaryOperator, Value as SqlValue,
};

mod functions;

use super::catalog::SqlType;
use super::SqlError;
use crate::store::Value;
use functions::{function, special_form};

/// The server version `SELECT version()` and `server_version` report.
pub const SERVER_VERSION: &str = "15.0";

/// Where an expression's columns come from.
pub trait Columns {
    /// The value of column `name` (qualified by a table name or alias, or not).
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> Result<Value, SqlError>;

    /// A function that needs the server's state (the sequences' `nextval`, …): its value, or
    /// `None` when `name` is no such function or this context has none.
    fn call(&mut self, _name: &str, _args: &[Value]) -> Option<Result<Value, SqlError>> {
        None
    }

    /// The rows subquery `q` returns for the row at hand (`one_column`: used as a value or an
    /// `IN` list, so it must return one column), or `None` when this context runs no
    /// subqueries.
    fn subquery(
        &mut self,
        _q: &Query,
        _one_column: bool,
    ) -> Option<Result<Rc<[Vec<Value>]>, SqlError>> {
        None
    }

    /// The value of the aggregate call `call` (`sum(x)`, …) over the group at hand, or `None`
    /// when this context computes no aggregates.
    fn aggregate(&mut self, _call: &Expr) -> Option<Value> {
        None
    }
}

/// The rows of subquery `q` for the row at hand, or `0A000` where the context runs none.
fn subquery_rows(
    cols: &mut dyn Columns,
    q: &Query,
    one_column: bool,
) -> Result<Rc<[Vec<Value>]>, SqlError> {
    match cols.subquery(q, one_column) {
        Some(rows) => rows,
        None => Err(SqlError::unsupported(format!("a subquery here ({q})"))),
    }
}

/// A scalar subquery's value: its one row's value, NULL without rows, `21000` with more.
fn scalar_subquery(cols: &mut dyn Columns, q: &Query) -> Result<Value, SqlError> {
    let rows = subquery_rows(cols, q, true)?;
    match &rows[..] {
        [] => Ok(Value::Null),
        [row] => Ok(row.first().cloned().unwrap_or(Value::Null)),
        _ => Err(SqlError::new(
            "21000",
            "more than one row returned by a subquery used as an expression",
        )),
    }
}
/// No columns: expressions without FROM.
pub struct NoColumns;

impl Columns for NoColumns {
    fn column(&mut self, _qualifier: Option<&str>, name: &str) -> Result<Value, SqlError> {
        Err(SqlError::undefined_column(name))
    }
}

/// `EXISTS (…)`, a scalar `(SELECT …)`, `v op ANY/ALL (SELECT …)`.
fn subquery_expr(e: &Expr, cols: &mut dyn Columns, params: &[Value]) -> Result<Value, SqlError> {
    Ok(match e {
        Expr::Exists { subquery, negated } => {
            Value::Bool(subquery_rows(cols, subquery, false)?.is_empty() == *negated)
        }
        Expr::Subquery(q) => scalar_subquery(cols, q)?,
        Expr::AnyOp {
            left,
            compare_op,
            right,
            ..
        }
        | Expr::AllOp {
            left,
            compare_op,
            right,
        } => {
            let Expr::Subquery(q) = right.as_ref() else {
                return Err(SqlError::unsupported(format!("the expression {e}")));
            };
            let all = matches!(e, Expr::AllOp { .. });
            let v = eval(left, cols, params)?;
            let rows = subquery_rows(cols, q, true)?;
            quantified(compare_op, &v, rows.iter().map(|r| &r[0]), all)?
        }
        other => return Err(SqlError::unsupported(format!("the expression {other}"))),
    })
}

/// An identifier as PostgreSQL folds it: unquoted identifiers are lower case.
pub fn ident(i: &Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// The last part of an object name (`public.acct` → `acct`).
pub fn object_name(n: &ObjectName) -> Result<String, SqlError> {
    match n.0.last() {
        Some(ObjectNamePart::Identifier(i)) => Ok(ident(i)),
        _ => Err(SqlError::unsupported(format!("the name {n}"))),
    }
}

/// An identifier as PostgreSQL folds it, borrowed when folding leaves it as it is (quoted, or
/// lower-case ASCII already: no allocation on the usual path).
pub fn folded(i: &Ident) -> Cow<'_, str> {
    if i.quote_style.is_some()
        || i.value
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(&i.value)
    } else {
        Cow::Owned(i.value.to_lowercase())
    }
}

/// A column reference's qualifier (if any) and name, folded.
pub type ColumnRef<'e> = (Option<Cow<'e, str>>, Cow<'e, str>);

/// The column an expression names (`c` or `t.c`), if it is a plain column reference.
pub fn column_ref(e: &Expr) -> Option<ColumnRef<'_>> {
    match e {
        Expr::Identifier(i) => Some((None, folded(i))),
        Expr::CompoundIdentifier(parts) if parts.len() >= 2 => Some((
            Some(folded(&parts[parts.len() - 2])),
            folded(&parts[parts.len() - 1]),
        )),
        Expr::Nested(e) => column_ref(e),
        _ => None,
    }
}

/// A literal's value.
pub fn literal(v: &SqlValue, params: &[Value]) -> Result<Value, SqlError> {
    Ok(match v {
        SqlValue::Number(n, _) => number(n)?,
        SqlValue::SingleQuotedString(s)
        | SqlValue::DoubleQuotedString(s)
        | SqlValue::EscapedStringLiteral(s)
        | SqlValue::NationalStringLiteral(s) => Value::text(s),
        SqlValue::Boolean(b) => Value::Bool(*b),
        SqlValue::Null => Value::Null,
        SqlValue::Placeholder(p) => {
            let n: usize = p
                .trim_start_matches('$')
                .parse()
                .map_err(|_| SqlError::unsupported(format!("the placeholder {p}")))?;
            match n.checked_sub(1).and_then(|i| params.get(i)) {
                Some(v) => v.clone(),
                None => {
                    return Err(SqlError::new(
                        "08P01",
                        format!("there is no parameter {p} ({} bound)", params.len()),
                    ))
                }
            }
        }
        other => return Err(SqlError::unsupported(format!("the literal {other}"))),
    })
}

fn number(n: &str) -> Result<Value, SqlError> {
    if let Ok(i) = n.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    n.parse::<f64>()
        .map(Value::Real)
        .map_err(|_| SqlError::new("22P02", format!("invalid number {n}")))
}

/// `v` as a value of type `ty` (a text parameter bound to an integer column becomes an
/// integer), or an error naming the value.
pub fn coerce(v: Value, ty: SqlType) -> Result<Value, SqlError> {
    let bad = |v: &Value| {
        SqlError::new(
            "22P02",
            format!("invalid input syntax for type {}: \"{v}\"", type_name(ty)),
        )
    };
    Ok(match (ty, v) {
        (_, Value::Null) => Value::Null,
        (t, Value::Int(i)) if t.is_integer() => Value::Int(i),
        (t, Value::Real(r)) if t.is_integer() => Value::Int(r.round() as i64),
        (t, Value::Text(s)) if t.is_integer() => match s.trim().parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => return Err(bad(&Value::Text(s))),
        },
        (SqlType::Numeric | SqlType::Float8, Value::Int(i)) => Value::Real(i as f64),
        (SqlType::Numeric | SqlType::Float8, Value::Real(r)) => Value::Real(r),
        (SqlType::Numeric | SqlType::Float8, Value::Text(s)) => match s.trim().parse::<f64>() {
            Ok(r) => Value::Real(r),
            Err(_) => return Err(bad(&Value::Text(s))),
        },
        (SqlType::Bool, Value::Bool(b)) => Value::Bool(b),
        (SqlType::Bool, Value::Text(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "1" | "yes" | "on" => Value::Bool(true),
            "f" | "false" | "0" | "no" | "off" => Value::Bool(false),
            _ => return Err(bad(&Value::Text(s))),
        },
        (SqlType::Text | SqlType::Timestamp, Value::Text(s)) => Value::Text(s),
        (SqlType::Text | SqlType::Timestamp, v) => Value::text(&v.to_string()),
        (_, v) => return Err(bad(&v)),
    })
}

/// The type's SQL name, for messages.
pub fn type_name(ty: SqlType) -> &'static str {
    match ty {
        SqlType::Int2 => "smallint",
        SqlType::Int4 => "integer",
        SqlType::Int8 => "bigint",
        SqlType::Numeric => "numeric",
        SqlType::Float8 => "double precision",
        SqlType::Text => "text",
        SqlType::Bool => "boolean",
        SqlType::Timestamp => "timestamp",
    }
}

/// The column type a declared SQL type maps to (`None`: not supported).
pub fn sql_type(t: &DataType) -> Option<(SqlType, bool)> {
    use DataType as D;
    let name = t.to_string().to_lowercase();
    let base = name.split('(').next().unwrap_or("").trim().to_string();
    Some(match base.as_str() {
        "serial" | "serial4" => (SqlType::Int4, true),
        "bigserial" | "serial8" => (SqlType::Int8, true),
        "smallserial" | "serial2" => (SqlType::Int2, true),
        _ => match t {
            D::SmallInt(_) | D::Int2(_) => (SqlType::Int2, false),
            D::Int(_) | D::Integer(_) | D::Int4(_) => (SqlType::Int4, false),
            D::BigInt(_) | D::Int8(_) => (SqlType::Int8, false),
            D::Numeric(_) | D::Decimal(_) | D::Dec(_) => (SqlType::Numeric, false),
            D::Real | D::Float4 | D::Float8 | D::Double(_) | D::DoublePrecision | D::Float(_) => {
                (SqlType::Float8, false)
            }
            D::Text
            | D::Varchar(_)
            | D::CharVarying(_)
            | D::CharacterVarying(_)
            | D::Char(_)
            | D::Character(_)
            | D::String(_) => (SqlType::Text, false),
            D::Boolean | D::Bool => (SqlType::Bool, false),
            D::Timestamp(_, _) | D::Datetime(_) | D::Date => (SqlType::Timestamp, false),
            _ => return None,
        },
    })
}

/// The SQL truth of a value (NULL is not true).
pub fn is_true(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// SQL comparison: numbers numerically (a text that parses as a number compares as one with a
/// number), texts as texts; `None` when either side is NULL.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Text(x), Value::Text(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Text(_)) => coerce(b.clone(), SqlType::Bool)
            .ok()
            .and_then(|y| compare(&Value::Bool(*x), &y)),
        (Value::Text(_), Value::Bool(_)) => compare(b, a).map(Ordering::reverse),
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => Some(a.to_string().cmp(&b.to_string())),
        },
    }
}

fn arith(op: &BinaryOperator, a: Value, b: Value) -> Result<Value, SqlError> {
    if matches!(a, Value::Null) || matches!(b, Value::Null) {
        return Ok(Value::Null);
    }
    if let BinaryOperator::StringConcat = op {
        return Ok(Value::text(&format!("{}{}", plain(&a), plain(&b))));
    }
    let as_int = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        Value::Text(t) => t.trim().parse().ok(),
        _ => None,
    };
    let overflow = || SqlError::new("22003", "integer out of range");
    if let (Some(x), Some(y)) = (as_int(&a), as_int(&b)) {
        if !matches!((&a, &b), (Value::Real(_), _) | (_, Value::Real(_))) {
            return Ok(Value::Int(match op {
                BinaryOperator::Plus => x.checked_add(y).ok_or_else(overflow)?,
                BinaryOperator::Minus => x.checked_sub(y).ok_or_else(overflow)?,
                BinaryOperator::Multiply => x.checked_mul(y).ok_or_else(overflow)?,
                BinaryOperator::Divide | BinaryOperator::Modulo if y == 0 => {
                    return Err(SqlError::new("22012", "division by zero"))
                }
                BinaryOperator::Divide => x / y,
                BinaryOperator::Modulo => x % y,
                other => return Err(SqlError::unsupported(format!("the operator {other}"))),
            }));
        }
    }
    let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
        return Err(SqlError::new(
            "42883",
            format!("operator {op} cannot be applied to {a} and {b}"),
        ));
    };
    Ok(Value::Real(match op {
        BinaryOperator::Plus => x + y,
        BinaryOperator::Minus => x - y,
        BinaryOperator::Multiply => x * y,
        BinaryOperator::Divide if y == 0.0 => {
            return Err(SqlError::new("22012", "division by zero"))
        }
        BinaryOperator::Divide => x / y,
        BinaryOperator::Modulo => x % y,
        other => return Err(SqlError::unsupported(format!("the operator {other}"))),
    }))
}

/// A value as text without quotes (what a client shows).
pub fn plain(v: &Value) -> String {
    match v {
        Value::Text(t) => t.to_string(),
        Value::Bool(true) => "t".to_string(),
        Value::Bool(false) => "f".to_string(),
        other => other.to_string(),
    }
}

fn cmp_op(op: &BinaryOperator, a: &Value, b: &Value) -> Value {
    let Some(o) = compare(a, b) else {
        return Value::Null;
    };
    Value::Bool(match op {
        BinaryOperator::Eq => o == Ordering::Equal,
        BinaryOperator::NotEq => o != Ordering::Equal,
        BinaryOperator::Lt => o == Ordering::Less,
        BinaryOperator::LtEq => o != Ordering::Greater,
        BinaryOperator::Gt => o == Ordering::Greater,
        BinaryOperator::GtEq => o != Ordering::Less,
        _ => unreachable!("not a comparison"),
    })
}

/// Evaluates `e` with columns from `cols` and parameters `params`.
pub fn eval(e: &Expr, cols: &mut dyn Columns, params: &[Value]) -> Result<Value, SqlError> {
    Ok(match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            let (q, c) = column_ref(e).expect("a column reference");
            cols.column(q.as_deref(), &c)?
        }
        Expr::Value(v) => literal(&v.value, params)?,
        Expr::Nested(e) => eval(e, cols, params)?,
        Expr::BinaryOp { left, op, right } => binary(left, op, right, cols, params)?,
        Expr::UnaryOp { op, expr } => {
            let v = eval(expr, cols, params)?;
            match (op, v) {
                (_, Value::Null) => Value::Null,
                (UnaryOperator::Not, Value::Bool(b)) => Value::Bool(!b),
                (UnaryOperator::Minus, Value::Int(i)) => Value::Int(-i),
                (UnaryOperator::Minus, Value::Real(r)) => Value::Real(-r),
                (UnaryOperator::Plus, v @ (Value::Int(_) | Value::Real(_))) => v,
                (op, v) => {
                    return Err(SqlError::new(
                        "42883",
                        format!("operator {op} cannot be applied to {v}"),
                    ))
                }
            }
        }
        Expr::IsNull(e) => Value::Bool(matches!(eval(e, cols, params)?, Value::Null)),
        Expr::IsNotNull(e) => Value::Bool(!matches!(eval(e, cols, params)?, Value::Null)),
        Expr::IsTrue(e) => Value::Bool(is_true(&eval(e, cols, params)?)),
        Expr::IsFalse(e) => Value::Bool(matches!(eval(e, cols, params)?, Value::Bool(false))),
        Expr::In {
            expr,
            target,
            negated,
            ..
        } => in_list(e, expr, target, *negated, cols, params)?,
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let v = eval(expr, cols, params)?;
            let lo = eval(low, cols, params)?;
            let hi = eval(high, cols, params)?;
            match (compare(&v, &lo), compare(&v, &hi)) {
                (Some(a), Some(b)) => {
                    Value::Bool((a != Ordering::Less && b != Ordering::Greater) != *negated)
                }
                _ => Value::Null,
            }
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            ..
        } => {
            let v = eval(expr, cols, params)?;
            match sql_type(data_type) {
                Some((ty, _)) => coerce(v, ty)?,
                None => {
                    let name = data_type.to_string().to_lowercase();
                    // Casts to catalog types (regclass, oid, name) keep the value.
                    if ["regclass", "oid", "name", "regtype"].contains(&name.as_str()) {
                        v
                    } else {
                        return Err(SqlError::unsupported(format!("the type {data_type}")));
                    }
                }
            }
        }
        Expr::TypedString(t) => {
            let v = literal(&t.value.value, params)?;
            match sql_type(&t.data_type) {
                Some((ty, _)) => coerce(v, ty)?,
                None => return Err(SqlError::unsupported(format!("the type {}", t.data_type))),
            }
        }
        Expr::Exists { .. } | Expr::Subquery(_) | Expr::AnyOp { .. } | Expr::AllOp { .. } => {
            subquery_expr(e, cols, params)?
        }
        Expr::Function(f) => {
            if let Some(v) = cols.aggregate(e) {
                return Ok(v);
            }
            let name = object_name(&f.name)?;
            let args: Vec<&Expr> = match &f.args {
                FunctionArguments::None => Vec::new(),
                FunctionArguments::List(l) => l
                    .args
                    .iter()
                    .map(|a| match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                        _ => Err(SqlError::unsupported(format!("the call {e}"))),
                    })
                    .collect::<Result<_, _>>()?,
                FunctionArguments::Subquery(_) => {
                    return Err(SqlError::unsupported(format!("the call {e}")))
                }
            };
            let mut values = Vec::with_capacity(args.len());
            for a in &args {
                values.push(eval(a, cols, params)?);
            }
            match cols.call(&name, &values) {
                Some(v) => v?,
                None => function(&name, values, e)?,
            }
        }
        Expr::Like { .. }
        | Expr::ILike { .. }
        | Expr::IsDistinctFrom(..)
        | Expr::IsNotDistinctFrom(..)
        | Expr::Substring { .. }
        | Expr::Trim { .. }
        | Expr::Position { .. }
        | Expr::Ceil { .. }
        | Expr::Floor { .. } => special_form(e, cols, params)?,
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let op = match operand {
                Some(o) => Some(eval(o, cols, params)?),
                None => None,
            };
            for w in conditions {
                let c = eval(&w.condition, cols, params)?;
                let hit = match &op {
                    Some(o) => compare(o, &c) == Some(Ordering::Equal),
                    None => is_true(&c),
                };
                if hit {
                    return eval(&w.result, cols, params);
                }
            }
            match else_result {
                Some(e) => eval(e, cols, params)?,
                None => Value::Null,
            }
        }
        other => return Err(SqlError::unsupported(format!("the expression {other}"))),
    })
}

/// A binary operator: AND and OR with SQL's three-valued logic (the right side not evaluated
/// when the left decides), comparisons, arithmetic and `||`.
fn binary(
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<Value, SqlError> {
    Ok(match op {
        BinaryOperator::And => {
            let l = eval(left, cols, params)?;
            if matches!(l, Value::Bool(false)) {
                return Ok(l);
            }
            let r = eval(right, cols, params)?;
            match (l, r) {
                (_, Value::Bool(false)) => Value::Bool(false),
                (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
                _ => Value::Null,
            }
        }
        BinaryOperator::Or => {
            let l = eval(left, cols, params)?;
            if matches!(l, Value::Bool(true)) {
                return Ok(l);
            }
            let r = eval(right, cols, params)?;
            match (l, r) {
                (_, Value::Bool(true)) => Value::Bool(true),
                (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
                _ => Value::Null,
            }
        }
        BinaryOperator::Eq
        | BinaryOperator::NotEq
        | BinaryOperator::Lt
        | BinaryOperator::LtEq
        | BinaryOperator::Gt
        | BinaryOperator::GtEq => {
            let l = eval(left, cols, params)?;
            let r = eval(right, cols, params)?;
            cmp_op(op, &l, &r)
        }
        BinaryOperator::Plus
        | BinaryOperator::Minus
        | BinaryOperator::Multiply
        | BinaryOperator::Divide
        | BinaryOperator::Modulo
        | BinaryOperator::StringConcat => {
            let l = eval(left, cols, params)?;
            let r = eval(right, cols, params)?;
            arith(op, l, r)?
        }
        other => return Err(SqlError::unsupported(format!("the operator {other}"))),
    })
}

/// `expr [NOT] IN (list)` or `expr [NOT] IN (SELECT …)`: true on an equal item, null when
/// none is equal but one compares as unknown (SQL's rule), else false.
fn in_list(
    e: &Expr,
    expr: &Expr,
    target: &sqlparser::ast::InTarget,
    negated: bool,
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<Value, SqlError> {
    let v = eval(expr, cols, params)?;
    let found = match target {
        sqlparser::ast::InTarget::List(list) => {
            let mut result = Value::Bool(false);
            for item in list {
                let x = eval(item, cols, params)?;
                match compare(&v, &x) {
                    Some(Ordering::Equal) => {
                        result = Value::Bool(true);
                        break;
                    }
                    None => result = Value::Null,
                    _ => {}
                }
            }
            result
        }
        sqlparser::ast::InTarget::Subquery(q) => {
            let rows = subquery_rows(cols, q, true)?;
            quantified(&BinaryOperator::Eq, &v, rows.iter().map(|r| &r[0]), false)?
        }
        _ => return Err(SqlError::unsupported(format!("the IN form {e}"))),
    };
    Ok(match (found, negated) {
        (Value::Bool(b), true) => Value::Bool(!b),
        (r, _) => r,
    })
}

/// `v op ANY (items)` (`all`: `v op ALL (items)`) with SQL's three-valued logic: ANY is true
/// when one comparison is true, else null when one is unknown, else false; ALL the dual.
fn quantified<'v>(
    op: &BinaryOperator,
    v: &Value,
    items: impl Iterator<Item = &'v Value>,
    all: bool,
) -> Result<Value, SqlError> {
    if !matches!(
        op,
        BinaryOperator::Eq
            | BinaryOperator::NotEq
            | BinaryOperator::Lt
            | BinaryOperator::LtEq
            | BinaryOperator::Gt
            | BinaryOperator::GtEq
    ) {
        return Err(SqlError::unsupported(format!(
            "the operator {op} with ANY/ALL"
        )));
    }
    let mut result = Value::Bool(all);
    for x in items {
        match cmp_op(op, v, x) {
            Value::Bool(b) if b != all => return Ok(Value::Bool(b)),
            Value::Bool(_) => {}
            _ => result = Value::Null,
        }
    }
    Ok(result)
}

/// The current UTC time as PostgreSQL prints a timestamp.
pub fn timestamp_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:06}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn eval_str(s: &str, params: &[Value]) -> Result<Value, SqlError> {
        let e = Parser::new(&PostgreSqlDialect {})
            .try_with_sql(s)
            .unwrap()
            .parse_expr()
            .unwrap();
        eval(&e, &mut NoColumns, params)
    }

    #[test]
    fn arithmetic_comparisons_and_three_valued_logic() {
        assert_eq!(eval_str("1 + 2 * 3", &[]).unwrap(), Value::Int(7));
        assert_eq!(
            eval_str("$1 + 1", &[Value::text("41")]).unwrap(),
            Value::Int(42)
        );
        assert_eq!(
            eval_str("2 BETWEEN 1 AND 3", &[]).unwrap(),
            Value::Bool(true)
        );
        assert_eq!(eval_str("2 IN (1, NULL)", &[]).unwrap(), Value::Null);
        assert_eq!(
            eval_str("NULL = 1 OR true", &[]).unwrap(),
            Value::Bool(true)
        );
        assert_eq!(eval_str("'a' || 'b'", &[]).unwrap(), Value::text("ab"));
        assert_eq!(eval_str("1.5::integer", &[]).unwrap(), Value::Int(2));
        assert_eq!(eval_str("1 / 0", &[]).unwrap_err().code, "22012");
        assert_eq!(eval_str("$2", &[Value::Int(1)]).unwrap_err().code, "08P01");
        assert_eq!(
            eval_str("9223372036854775807 + 1", &[]).unwrap_err().code,
            "22003"
        );
    }

    #[test]
    fn like_conditionals_and_string_functions_as_postgresql_gives_them() {
        let t = |s: &str| eval_str(s, &[]).unwrap();
        assert_eq!(t("'alice' LIKE 'a%'"), Value::Bool(true));
        assert_eq!(t("'Alice' ILIKE 'a%'"), Value::Bool(true));
        assert_eq!(t("'a' NOT LIKE 'b'"), Value::Bool(true));
        assert_eq!(t("NULL LIKE 'a'"), Value::Null);
        assert_eq!(t("NULLIF(1, 1)"), Value::Null);
        assert_eq!(t("GREATEST(1, NULL, 3)"), Value::Int(3));
        assert_eq!(t("LEAST(2, 1)"), Value::Int(1));
        assert_eq!(t("SUBSTRING('hello' FROM 2 FOR 3)"), Value::text("ell"));
        assert_eq!(t("substr('hello', 2)"), Value::text("ello"));
        assert_eq!(t("TRIM(BOTH 'x' FROM 'xxhixx')"), Value::text("hi"));
        assert_eq!(t("trim('  a ')"), Value::text("a"));
        assert_eq!(t("POSITION('l' IN 'hello')"), Value::Int(3));
        assert_eq!(t("CEIL(1.2)::integer"), Value::Int(2));
        assert_eq!(t("FLOOR(-1.2)::integer"), Value::Int(-2));
        assert_eq!(t("concat('a', NULL, 1)"), Value::text("a1"));
        assert_eq!(t("lower(NULL)"), Value::Null);
        assert_eq!(t("1 IS DISTINCT FROM NULL"), Value::Bool(true));
        assert_eq!(t("NULL IS NOT DISTINCT FROM NULL"), Value::Bool(true));
        assert_eq!(
            t("date_trunc('day', '2024-05-06 13:14:15')"),
            Value::text("2024-05-06 00:00:00")
        );
        assert_eq!(
            eval_str("EXISTS (SELECT 1)", &[]).unwrap_err().code,
            "0A000"
        );
    }

    #[test]
    fn timestamps_look_like_postgresql_ones() {
        let t = timestamp_now();
        assert_eq!(t.len(), 26, "{t}");
        assert_eq!(&t[4..5], "-");
    }
}
