//! Naming store keys by table, column and row for reports: the inverse of the [`Table`]
//! layer's key layout (MonkeyDB's, OOPSLA'21; notes/workloads.md §1.4).
//!
//! Keys are hashes, so the directory is built forward: for each table, its three metadata
//! keys; for each row id that appears in the table's membership set among a history's keys,
//! the key of every cell of that row. A row is named by its primary-key values read from a
//! state (e.g. the final state of the run), `CHECKING[custid=3]`; a table without a key by its
//! first column; a row whose key cells cannot be read by its row id.

use rustc_hash::FxHashMap;

use super::access::KvRead;
use super::key::KeyRef;
use super::table::Table;
use crate::history::History;

/// Key names → `TABLE.column[key=value]` descriptions.
#[derive(Debug, Clone, Default)]
pub struct KeyDirectory {
    names: FxHashMap<KeyRef, String>,
}

impl KeyDirectory {
    /// The directory of `history`'s keys over `tables`, naming rows by their key cells in
    /// `state`.
    pub fn new(
        tables: &[Table],
        history: &History,
        state: &mut (impl KvRead + ?Sized),
    ) -> KeyDirectory {
        let mut names = FxHashMap::default();
        let mut by_set: FxHashMap<u64, usize> = FxHashMap::default();
        for (i, t) in tables.iter().enumerate() {
            by_set.insert(t.set_id(), i);
            let name = t.name();
            names.insert(
                KeyRef::Plain(t.columns_key()),
                format!("{name}.<columns metadata>"),
            );
            names.insert(
                KeyRef::Plain(t.primary_key_key()),
                format!("{name}.<primary key metadata>"),
            );
            names.insert(
                KeyRef::Plain(t.last_primary_key_key()),
                format!("{name}.<last primary key>"),
            );
        }
        let mut rows: Vec<(usize, u64)> = history
            .key_names()
            .iter()
            .filter_map(|k| match KeyRef::parse(k) {
                Some(KeyRef::Member { set, elem }) => by_set.get(&set).map(|&i| (i, elem)),
                _ => None,
            })
            .collect();
        rows.sort_unstable();
        rows.dedup();
        for (i, row) in rows {
            let t = &tables[i];
            let label = row_label(t, row, state);
            names.insert(
                KeyRef::Member {
                    set: t.set_id(),
                    elem: row,
                },
                format!("row {label} exists"),
            );
            let (table, columns) = (t.name(), t.columns());
            for (c, column) in columns.iter().enumerate() {
                let mut cell = format!("{table}.{column}");
                if let Some(rest) = label.strip_prefix(table) {
                    cell.push_str(rest);
                }
                names.insert(KeyRef::Plain(t.cell_key(c, row)), cell);
            }
        }
        KeyDirectory { names }
    }

    /// What the key named `key` (a History key name) is, if the directory knows it.
    pub fn describe(&self, key: &str) -> Option<&str> {
        KeyRef::parse(key).and_then(|k| self.names.get(&k).map(String::as_str))
    }

    /// `key` followed by its description in parentheses, or `key` alone.
    pub fn name_with_description(&self, key: &str) -> String {
        match self.describe(key) {
            Some(d) => format!("{d} (key {key})"),
            None => key.to_string(),
        }
    }

    /// `history`'s key names as the application names them (`CHECKING.bal[custid=1]`,
    /// `row CHECKING[custid=1] exists`), one per key; a key the directory does not know keeps
    /// its store name, and a description two keys share gets each key's store name appended,
    /// so the names stay distinct.
    pub fn application_names(&self, history: &History) -> Vec<String> {
        let mut count: FxHashMap<&str, usize> = FxHashMap::default();
        for k in history.key_names() {
            if let Some(d) = self.describe(k) {
                *count.entry(d).or_default() += 1;
            }
        }
        let taken: rustc_hash::FxHashSet<&str> =
            history.key_names().iter().map(String::as_str).collect();
        history
            .key_names()
            .iter()
            .map(|k| match self.describe(k) {
                Some(d) if count[d] == 1 && (d == k || !taken.contains(d)) => d.to_string(),
                Some(d) => format!("{d} (key {k})"),
                None => k.clone(),
            })
            .collect()
    }

    /// `history` with its keys named as the application names them
    /// ([`KeyDirectory::application_names`]): what native JSON histories of a run hold, so
    /// `check` and `predict` on them speak the application's terms. Hashes stay in IsoPredict
    /// trace files, whose format needs them.
    pub fn rename(&self, history: &History) -> History {
        history
            .with_key_names(self.application_names(history))
            .unwrap_or_else(|_| history.clone())
    }

    /// Number of keys named.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no key is named.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// `TABLE[col=value, …]` from the key cells (or the first column) of `row` in `state`;
/// `TABLE[row id N]` when they cannot be read.
fn row_label(t: &Table, row: u64, state: &mut (impl KvRead + ?Sized)) -> String {
    let first = [0usize];
    let cols: &[usize] = match t.primary_key_columns() {
        Some(pk) if !pk.is_empty() => pk,
        _ => &first,
    };
    let mut parts = Vec::with_capacity(cols.len());
    for &c in cols {
        match state.get(t.cell_key(c, row)) {
            Some(v) => parts.push(format!("{}={v}", t.columns()[c])),
            None => return format!("{}[row id {row}]", t.name()),
        }
    }
    format!("{}[{}]", t.name(), parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{KvRead, ReadPolicy, Store, Value};

    #[test]
    fn cells_rows_and_metadata_are_named() {
        let accounts = Table::new("ACCOUNTS", &["id", "bal"], Some(&["id"]));
        let votes = Table::new("VOTES", &["vote_id", "phone"], None);
        let mut store = Store::new(ReadPolicy::Latest).unwrap();
        {
            let mut l = store.loader();
            accounts.create(&mut l);
            votes.create(&mut l);
            accounts.insert(&mut l, &[("id", Value::Int(7)), ("bal", Value::Int(10))]);
        }
        let s = store.open_session(1);
        let mut tx = store.begin(s);
        let bal = tx.get(accounts.cell_key(1, accounts.row_id(&[Value::Int(7)])));
        assert_eq!(bal, Some(Value::Int(10)));
        votes.insert(
            &mut tx,
            &[("vote_id", Value::Int(0)), ("phone", Value::Int(5))],
        );
        tx.commit();
        let h = store.history("t").unwrap();
        let dir = KeyDirectory::new(
            &[accounts.clone(), votes.clone()],
            &h,
            &mut store.snapshot(),
        );
        let row = accounts.row_id(&[Value::Int(7)]);
        let name = |k: KeyRef| dir.describe(&k.name()).map(str::to_string);
        assert_eq!(
            name(KeyRef::Plain(accounts.cell_key(1, row))).as_deref(),
            Some("ACCOUNTS.bal[id=7]")
        );
        assert_eq!(
            name(KeyRef::Member {
                set: accounts.set_id(),
                elem: row
            })
            .as_deref(),
            Some("row ACCOUNTS[id=7] exists")
        );
        assert_eq!(
            name(KeyRef::Plain(accounts.last_primary_key_key())).as_deref(),
            Some("ACCOUNTS.<last primary key>")
        );
        // The vote row (no key) is named by its first column.
        let vote_keys: Vec<String> = h
            .key_names()
            .iter()
            .filter_map(|k| dir.describe(k))
            .filter(|d| d.starts_with("VOTES.phone"))
            .map(str::to_string)
            .collect();
        assert_eq!(vote_keys, vec!["VOTES.phone[vote_id=0]".to_string()]);
        assert_eq!(dir.describe("12345"), None);
        assert_eq!(
            dir.name_with_description("12345"),
            "12345".to_string(),
            "unknown keys stay as they are"
        );
    }
}
