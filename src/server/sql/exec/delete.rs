//! DELETE (one membership delete per matching row; with `USING`, the rows found as UPDATE …
//! FROM finds them) and TRUNCATE (a DELETE without WHERE of each table).

use sqlparser::ast::{Delete, FromTable, Truncate, TruncateIdentityOption};

use super::project::{projection_items, returning_rows};
use super::rows::matching_rows;
use super::update::target_rows;
use super::{source_of, table_of, Exec, RowState, Source};
use crate::server::locks::Mode;
use crate::server::sql::eval::object_name;
use crate::server::sql::{Outcome, SqlError};
use crate::store::{KeyRef, KvWrite};

pub(super) fn delete(x: &mut Exec<'_, '_>, d: &Delete) -> Result<Outcome, SqlError> {
    let tables = match &d.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    let [twj] = tables.as_slice() else {
        return Err(SqlError::unsupported("DELETE from several tables"));
    };
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("DELETE with a join"));
    }
    let source = source_of(x.catalog, &twj.relation)?;
    let table = source.table;
    let using = d.using.as_deref();
    let (targets, mut matched) = target_rows(x, source, using, d.selection.as_ref())?;
    let sources = targets.sources();
    let returning = match &d.returning {
        Some(items) => Some(projection_items(x.catalog, sources, items)?),
        None => None,
    };
    let rows = match &returning {
        Some(items) => returning_rows(x, sources, items, &mut matched)?,
        None => Vec::new(),
    };
    delete_rows(x, table, &matched);
    let count = matched.len();
    match returning {
        Some(items) => Ok(Outcome::Rows {
            fields: items.into_iter().map(|i| i.field).collect(),
            rows,
            tag: "DELETE",
            count,
        }),
        None => Ok(Outcome::Done(format!("DELETE {count}"))),
    }
}

/// Deletes the rows of `table` in `matched` (one membership delete each).
pub(super) fn delete_rows(x: &mut Exec<'_, '_>, table: usize, matched: &[Vec<RowState>]) {
    let set = x.catalog.get(table).set;
    for combo in matched {
        let (_, elem, _) = x.catalog.find_row(table, &combo[0].key);
        x.tx.set_delete(set, elem);
        x.notes.writes.insert(KeyRef::Member { set, elem });
    }
}

/// `TRUNCATE t, …` as `DELETE FROM t` of each table, in the transaction (PostgreSQL's
/// TRUNCATE is transactional too): a scan, the whole table locked, every present row deleted.
pub(super) fn truncate(x: &mut Exec<'_, '_>, t: &Truncate) -> Result<Outcome, SqlError> {
    if matches!(t.identity, Some(TruncateIdentityOption::Restart)) {
        return Err(SqlError::unsupported("TRUNCATE … RESTART IDENTITY"));
    }
    let mut sources = Vec::with_capacity(t.table_names.len());
    for target in &t.table_names {
        sources.push(Source::table(
            table_of(x.catalog, &target.name)?,
            object_name(&target.name)?,
        ));
    }
    for source in &sources {
        let matched = matching_rows(x, source, None, Mode::Exclusive)?;
        delete_rows(x, source.table, &matched);
    }
    Ok(Outcome::Done("TRUNCATE TABLE".into()))
}
