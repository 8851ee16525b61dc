//! `SELECT … FROM UNNEST(array, …)`, as the source of an INSERT: the arrays' elements side by
//! side as constant rows, read from nothing (no events), as PostgreSQL's multi-argument
//! `unnest` in FROM gives them (a shorter array is padded with NULLs). Django's `bulk_create`
//! sends it: `INSERT INTO t (a, b) SELECT * FROM UNNEST(('{x,y}')::varchar[],
//! ('{1,2}'::int2[])::integer[]) RETURNING t.id`.
//!
//! An array is an array literal (`'{a,"b c",NULL}'`, a constant or a parameter) cast to an
//! array type, whose element type converts each element; one-dimensional arrays only.

use sqlparser::ast::{DataType, Expr, Query, Select, SelectItem, SetExpr, TableFactor};

use super::values::constant_rows_select;
use super::{Exec, NoRow};
use crate::server::sql::catalog::SqlType;
use crate::server::sql::eval::{self, eval, ident};
use crate::server::sql::{Field, Outcome, SqlError};
use crate::store::Value;

/// The SELECT of `q` and its UNNEST, when `q` is `SELECT … FROM UNNEST(…) [AS t(…)]` alone.
fn unnest_of(q: &Query) -> Option<(&Select, &TableFactor)> {
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    match sel.from.as_slice() {
        [t] if t.joins.is_empty() && matches!(t.relation, TableFactor::UNNEST { .. }) => {
            Some((sel, &t.relation))
        }
        _ => None,
    }
}

/// Runs `q` if it is a SELECT over UNNEST (see the module documentation); `None` otherwise.
pub(super) fn unnest_select(x: &mut Exec<'_, '_>, q: &Query) -> Option<Result<Outcome, SqlError>> {
    let (sel, relation) = unnest_of(q)?;
    let TableFactor::UNNEST {
        alias,
        array_exprs,
        with_offset,
        with_ordinality,
        ..
    } = relation
    else {
        return None;
    };
    Some(run(
        x,
        q,
        sel,
        alias.as_ref(),
        array_exprs,
        *with_offset || *with_ordinality,
    ))
}

fn run(
    x: &mut Exec<'_, '_>,
    q: &Query,
    sel: &Select,
    alias: Option<&sqlparser::ast::TableAlias>,
    arrays: &[Expr],
    numbered: bool,
) -> Result<Outcome, SqlError> {
    let grouped =
        !matches!(&sel.group_by, sqlparser::ast::GroupByExpr::Expressions(e, _) if e.is_empty());
    if numbered || sel.selection.is_some() || grouped || sel.distinct.is_some() {
        return Err(SqlError::unsupported(
            "WITH ORDINALITY, WHERE, GROUP BY or DISTINCT over UNNEST in FROM",
        ));
    }
    let columns = arrays
        .iter()
        .map(|e| array_elements(x, e))
        .collect::<Result<Vec<_>, _>>()?;
    let height = columns.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    let rows: Vec<Vec<Value>> = (0..height)
        .map(|r| {
            columns
                .iter()
                .map(|(_, c)| c.get(r).cloned().unwrap_or(Value::Null))
                .collect()
        })
        .collect();
    let star = matches!(sel.projection.as_slice(), [SelectItem::Wildcard(_)]);
    if star && q.order_by.is_none() && q.limit_clause.is_none() && alias.is_none() {
        // PostgreSQL names every column `unnest`.
        let fields = columns
            .iter()
            .map(|(ty, _)| Field {
                name: "unnest".into(),
                ty: *ty,
            })
            .collect();
        return Ok(Outcome::select(fields, rows));
    }
    let table = alias.map_or_else(|| "unnest".to_string(), |a| ident(&a.name));
    let mut names: Vec<String> = alias
        .map(|a| a.columns.iter().map(|c| ident(&c.name)).collect())
        .unwrap_or_default();
    if names.len() < columns.len() {
        if columns.len() > 1 {
            return Err(SqlError::unsupported(
                "UNNEST of several arrays without column names (AS t(a, b)) except in SELECT *",
            ));
        }
        names.push("unnest".into());
    }
    constant_rows_select(x, q, sel, &table, &names, &rows)
}

/// The element type and elements of array expression `e`: an array literal (constant or
/// parameter) cast to an array type, possibly cast again (`('{1,2}'::int2[])::integer[]`: the
/// outermost cast decides the elements' type).
fn array_elements(x: &mut Exec<'_, '_>, e: &Expr) -> Result<(SqlType, Vec<Value>), SqlError> {
    let mut element: Option<SqlType> = None;
    let mut inner = e;
    loop {
        match inner {
            Expr::Nested(n) => inner = n,
            Expr::Cast {
                expr, data_type, ..
            } => {
                if element.is_none() {
                    let DataType::Array(def) = data_type else {
                        return Err(SqlError::unsupported(format!("UNNEST of {e}")));
                    };
                    let ty = array_element_type(def).ok_or_else(|| {
                        SqlError::unsupported(format!("the array type {data_type}"))
                    })?;
                    element = Some(ty);
                }
                inner = expr;
            }
            _ => break,
        }
    }
    let ty = element.ok_or_else(|| {
        SqlError::unsupported(format!(
            "UNNEST of {e} (an array literal cast to an array type is)"
        ))
    })?;
    let mut no_row = NoRow {
        catalog: &mut *x.catalog,
        session: x.tx.session(),
    };
    let literal = match eval(inner, &mut no_row, x.params)? {
        Value::Null => return Ok((ty, Vec::new())),
        Value::Text(t) => t,
        other => {
            return Err(SqlError::new(
                "22P02",
                format!("malformed array literal: \"{other}\""),
            ))
        }
    };
    let elements = parse_array_literal(&literal)?
        .into_iter()
        .map(|el| match el {
            None => Ok(Value::Null),
            Some(text) => element_value(ty, &text),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((ty, elements))
}

/// The element type of an array type (`varchar[]`: text).
fn array_element_type(def: &sqlparser::ast::ArrayElemTypeDef) -> Option<SqlType> {
    use sqlparser::ast::ArrayElemTypeDef as A;
    let inner = match def {
        A::SquareBracket(t, _) | A::AngleBracket(t) | A::Parenthesis(t) => t,
        _ => return None,
    };
    match eval::sql_type(inner) {
        Some((ty, false)) => Some(ty),
        _ => None,
    }
}

/// An element's text as a value of type `ty` (`22P02` when it is not one).
fn element_value(ty: SqlType, text: &str) -> Result<Value, SqlError> {
    let invalid = || {
        SqlError::new(
            "22P02",
            format!("invalid input syntax for type {ty:?}: \"{text}\""),
        )
    };
    Ok(match ty {
        t if t.is_integer() => Value::Int(text.trim().parse().map_err(|_| invalid())?),
        SqlType::Numeric | SqlType::Float8 => {
            Value::Real(text.trim().parse().map_err(|_| invalid())?)
        }
        SqlType::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "yes" | "on" | "1" => Value::Bool(true),
            "f" | "false" | "no" | "off" | "0" => Value::Bool(false),
            _ => return Err(invalid()),
        },
        _ => Value::text(text),
    })
}

/// The elements of a one-dimensional array literal `{a,"b c",NULL}`: `None` for an unquoted
/// NULL; quoted elements with backslash escapes; unquoted ones trimmed.
pub fn parse_array_literal(text: &str) -> Result<Vec<Option<String>>, SqlError> {
    let malformed = |why: &str| {
        SqlError::new(
            "22P02",
            format!("malformed array literal: \"{text}\" ({why})"),
        )
    };
    let body = text
        .trim()
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(|| malformed("an array literal is {…}"))?;
    if body.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let element = if chars.peek() == Some(&'"') {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => s.push(chars.next().ok_or_else(|| malformed("unfinished"))?),
                    Some(c) => s.push(c),
                    None => return Err(malformed("an unterminated quote")),
                }
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            Some(s)
        } else {
            let mut s = String::new();
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if c == '{' || c == '}' || c == '"' {
                    return Err(malformed("nested arrays are not supported"));
                }
                if c == '\\' {
                    chars.next();
                    s.push(chars.next().ok_or_else(|| malformed("unfinished"))?);
                    continue;
                }
                s.push(c);
                chars.next();
            }
            let s = s.trim().to_string();
            if s.is_empty() {
                return Err(malformed("an empty element"));
            }
            (!s.eq_ignore_ascii_case("null")).then_some(s)
        };
        out.push(element);
        match chars.next() {
            Some(',') => continue,
            None => break,
            Some(_) => return Err(malformed("expected a comma")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_array_literal;

    #[test]
    fn array_literals_are_split_as_postgresql_splits_them() {
        let got = parse_array_literal(r#"{"Can add permission",b , NULL,"NULL","a\"b",c\,d}"#);
        let want: Vec<Option<String>> = vec![
            Some("Can add permission".into()),
            Some("b".into()),
            None,
            Some("NULL".into()),
            Some("a\"b".into()),
            Some("c,d".into()),
        ];
        assert_eq!(got.unwrap(), want);
        assert_eq!(
            parse_array_literal("{}").unwrap(),
            Vec::<Option<String>>::new()
        );
        for bad in ["1,2", "{{1},{2}}", "{\"a}", "{1,,2}"] {
            let e = parse_array_literal(bad).unwrap_err();
            assert_eq!(e.code, "22P02", "{bad}");
        }
    }
}
