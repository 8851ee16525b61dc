//! The reproducer files of a [`Minimized`] anomaly: a PostgreSQL isolationtester spec (the
//! format of PostgreSQL's src/test/isolation suite: `setup` / `teardown` SQL, one `session`
//! block per session with named `step`s, one `permutation`; notes/isolationtester.md §2, §8),
//! one plain SQL file per session with the waits as comments, and a README.
//!
//! The data: one table, `isopredict_repro(k text PRIMARY KEY, written_by text)`, one row per
//! key of the anomaly, named as the application names it. Every write stores its
//! transaction's name in `written_by`, so every read prints which transaction's write it saw
//! — the anomalous reads are visible in the output as they are. The setup loads each row as
//! the version the anomaly's transactions read first (`initial`, or the name of a transaction
//! left out of the reproducer whose write they saw).

use std::fmt::Write as _;

use super::minimize::Minimized;
use super::schedule::StepKind;
use crate::history::{History, OpKind, INITIAL_TXN};
use crate::store::Isolation;

/// The table the reproducer creates.
pub const TABLE: &str = "isopredict_repro";

/// What the README says about the anomaly, beyond the transactions.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The workload (or history) it came from, e.g. `smallbank-full (seed 1, large)`.
    pub origin: String,
    /// The anomaly's engineer's name, e.g. `write skew`.
    pub anomaly: Option<String>,
    /// What happens in it, in terms of the transactions and keys.
    pub anomaly_description: Option<String>,
    /// Per transaction label of the original history: the application call it ran.
    pub calls: Vec<(String, String)>,
    /// Invariants the reproduced run broke, in words.
    pub broken_invariants: Vec<String>,
    /// Where it was reproduced, e.g. `PostgreSQL 15.18 at REPEATABLE READ`.
    pub reproduced_on: Option<String>,
}

/// One step of the spec: its name, session, SQL and the writer a read must print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecStep {
    /// The step's name (`s1_3`).
    pub name: String,
    /// Its session (0-based).
    pub session: usize,
    /// Its SQL.
    pub sql: String,
    /// For a read: the `written_by` it must print.
    pub expect: Option<String>,
}

/// The steps of the spec in permutation order.
pub fn spec_steps(m: &Minimized, original: &History) -> Vec<SpecStep> {
    let h = &m.history;
    let label = |t: u32| -> String {
        if t == INITIAL_TXN {
            "initial".to_string()
        } else {
            original.txn_label(m.origin[t as usize])
        }
    };
    let initial_label = |k: u32| -> String {
        match m.initial_writer[k as usize] {
            Some(w) => original.txn_label(w),
            None => "initial".to_string(),
        }
    };
    let isolation = m.schedule.isolation;
    let mut count = vec![0usize; h.sessions().len()];
    let mut out = Vec::new();
    for &step in &m.schedule.steps {
        let tx = h.txn(step.txn);
        let s = tx.session as usize;
        count[s] += 1;
        let (sql, expect) = match step.kind {
            StepKind::Op(i) => {
                let o = tx.ops().start + i;
                let op = h.op(o);
                let key = literal(h.key_name(op.key));
                match op.kind {
                    OpKind::Read => {
                        let writer = h.writer_txn(o).unwrap_or(INITIAL_TXN);
                        let expect = if writer == INITIAL_TXN {
                            initial_label(op.key)
                        } else {
                            label(writer)
                        };
                        (
                            format!("SELECT k, written_by FROM {TABLE} WHERE k = {key};"),
                            Some(expect),
                        )
                    }
                    OpKind::Write => (
                        format!(
                            "UPDATE {TABLE} SET written_by = {} WHERE k = {key};",
                            literal(&label(step.txn))
                        ),
                        None,
                    ),
                }
            }
            StepKind::End => {
                let end = if tx.is_committed() {
                    "COMMIT;"
                } else {
                    "ROLLBACK;"
                };
                let last = h.sessions()[s].txns().end - 1 == step.txn;
                if last {
                    (end.to_string(), None)
                } else {
                    (
                        format!("{end} BEGIN ISOLATION LEVEL {};", isolation.sql()),
                        None,
                    )
                }
            }
        };
        out.push(SpecStep {
            name: format!("s{}_{}", s + 1, count[s]),
            session: s,
            sql,
            expect,
        });
    }
    out
}

/// A SQL string literal of `s` (quotes doubled; `{`/`}`, which an isolationtester step cannot
/// hold, replaced by parentheses).
fn literal(s: &str) -> String {
    format!(
        "'{}'",
        s.replace('\'', "''").replace('{', "(").replace('}', ")")
    )
}

/// The setup SQL: the table and one row per key at its initial version.
fn setup_sql(m: &Minimized, original: &History) -> String {
    let h = &m.history;
    let rows: Vec<String> = (0..h.key_count() as u32)
        .map(|k| {
            let by = match m.initial_writer[k as usize] {
                Some(w) => original.txn_label(w),
                None => "initial".to_string(),
            };
            format!("({}, {})", literal(h.key_name(k)), literal(&by))
        })
        .collect();
    format!(
        "DROP TABLE IF EXISTS {TABLE};\n  CREATE TABLE {TABLE} (k text PRIMARY KEY, written_by text NOT NULL);\n  INSERT INTO {TABLE} VALUES\n    {};",
        rows.join(",\n    ")
    )
}

/// The isolationtester spec.
pub fn spec(m: &Minimized, original: &History, ctx: &Context) -> String {
    let h = &m.history;
    let isolation = m.schedule.isolation;
    let steps = spec_steps(m, original);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# isopredict reproducer: {} at {}",
        ctx.anomaly
            .as_deref()
            .unwrap_or("an unserializable execution"),
        isolation.sql()
    );
    if !ctx.origin.is_empty() {
        let _ = writeln!(out, "# from {}", ctx.origin);
    }
    let _ = writeln!(
        out,
        "# Run: isolationtester \"host=... port=... dbname=... user=...\" < reproducer.spec\n\
         # Every write stores its transaction's name in written_by; every read prints the\n\
         # written_by it saw (see README.md for the reads that make it an anomaly).\n"
    );
    let _ = writeln!(out, "setup\n{{\n  {}\n}}\n", setup_sql(m, original));
    let _ = writeln!(out, "teardown\n{{\n  DROP TABLE {TABLE};\n}}\n");
    for s in 0..h.sessions().len() {
        let mine: Vec<&SpecStep> = steps.iter().filter(|st| st.session == s).collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(out, "session s{}", s + 1);
        let _ = writeln!(
            out,
            "setup {{ BEGIN ISOLATION LEVEL {}; }}",
            isolation.sql()
        );
        for st in mine {
            let _ = writeln!(out, "step {} {{ {} }}", st.name, st.sql);
        }
        // Every session's last step ends its transaction: no teardown needed.
        out.push('\n');
    }
    let _ = writeln!(out, "session check");
    let _ = writeln!(
        out,
        "step final_state {{ SELECT k, written_by FROM {TABLE} ORDER BY k; }}\n"
    );
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    let _ = writeln!(out, "permutation {} final_state", names.join(" "));
    out
}

/// One plain SQL file per session: its statements in order, each wait as a comment.
pub fn session_files(m: &Minimized, original: &History) -> Vec<(String, String)> {
    let h = &m.history;
    let isolation = m.schedule.isolation;
    let steps = spec_steps(m, original);
    let mut files = Vec::new();
    for s in 0..h.sessions().len() {
        if !steps.iter().any(|st| st.session == s) {
            continue;
        }
        let mut out = format!(
            "-- Session s{} of the isopredict reproducer ({}). Run the statements in order in one\n\
             -- connection; before each, wait until the statement named in its comment has completed\n\
             -- in the other session. Setup: see reproducer.spec.\n\
             BEGIN ISOLATION LEVEL {};\n",
            s + 1,
            isolation.sql(),
            isolation.sql()
        );
        for (i, st) in steps.iter().enumerate() {
            if st.session != s {
                continue;
            }
            let prev = i.checked_sub(1).map(|j| &steps[j]);
            let mut comment = format!("-- step {} ({})", i + 1, st.name);
            if let Some(p) = prev.filter(|p| p.session != s) {
                let _ = write!(
                    comment,
                    ": wait until s{} has run step {} ({})",
                    p.session + 1,
                    i,
                    p.name
                );
            }
            if let Some(e) = &st.expect {
                let _ = write!(comment, "; must print written_by = {e}");
            }
            let _ = writeln!(out, "{comment}\n{}", st.sql);
        }
        files.push((format!("session-s{}.sql", s + 1), out));
    }
    files
}

/// The README.
pub fn readme(m: &Minimized, original: &History, ctx: &Context) -> String {
    let h = &m.history;
    let isolation = m.schedule.isolation;
    let steps = spec_steps(m, original);
    let mut out = format!(
        "# Reproducer: {} at {}\n\n",
        ctx.anomaly
            .as_deref()
            .unwrap_or("an unserializable execution"),
        isolation.sql()
    );
    if let Some(on) = &ctx.reproduced_on {
        let _ = writeln!(out, "Reproduced on {on} by `isopredict reproduce`.\n");
    }
    if !ctx.origin.is_empty() {
        let _ = writeln!(out, "Predicted from {}.\n", ctx.origin);
    }
    if let (Some(name), Some(what)) = (&ctx.anomaly, &ctx.anomaly_description) {
        let name = crate::history::anomalies::markdown_label_of(name);
        let _ = writeln!(out, "{name}: {what}.\n");
    }
    let labels: Vec<String> = m.origin[1..]
        .iter()
        .map(|&t| original.txn_label(t))
        .collect();
    let _ = writeln!(
        out,
        "## The transactions\n\nThe anomaly needs {} transactions ({}); every other transaction of the run was left out (its effect, where read, is loaded as initial data).\n",
        labels.len(),
        labels.join(", ")
    );
    for l in &labels {
        if let Some((_, call)) = ctx.calls.iter().find(|(t, _)| t == l) {
            let _ = writeln!(out, "- {l}: {call}");
        }
    }
    let _ = writeln!(out, "\n## The reads that make it an anomaly\n");
    for st in steps.iter().filter(|s| s.expect.is_some()) {
        let key = st
            .sql
            .rsplit("WHERE k = ")
            .next()
            .unwrap_or("")
            .trim_end_matches(';')
            .trim_matches('\'');
        let seen = match st.expect.as_deref() {
            Some("initial") | None => "the initial data (written_by = initial)".to_string(),
            Some(t) => format!("the write of {t} (written_by = {t})"),
        };
        let _ = writeln!(out, "- step {} reads {key}: it must see {seen}", st.name);
    }
    let _ = writeln!(
        out,
        "\nNo serial order of these transactions gives every read the write it sees."
    );
    if !ctx.broken_invariants.is_empty() {
        let _ = writeln!(out, "\n## Invariants it broke\n");
        for i in &ctx.broken_invariants {
            let _ = writeln!(out, "- {i}");
        }
    }
    out.push_str(&allowed_or_bug(isolation));
    let _ = writeln!(
        out,
        "\n## How to run it\n\n```sh\nisolationtester \"host=HOST port=PORT dbname=DB user=USER\" < reproducer.spec\n```\n\n\
         `isolationtester` ships with PostgreSQL's client programs (Debian: the package \
         postgresql-client-NN, under /usr/lib/postgresql/NN/lib/pgxs/src/test/isolation/). \
         Each `step` line of its output is followed by the rows a read printed: compare each \
         read's `written_by` with the list above. By hand: run `session-s*.sql` in {} \
         connections after the spec's setup, each statement only when its comment says.\n\n\
         The statements run in the one order of the `permutation` line; none of them waits for a \
         lock, so the outcome is the same every time. At SERIALIZABLE the same permutation fails \
         with a serialization failure (the control).",
        h.sessions().iter().filter(|s| !s.txns().is_empty()).count()
    );
    out
}

/// The paragraph a person about to file a bug needs: whether the isolation level allows this
/// behaviour (so it is the application's to prevent, not a database bug), and the fixes.
pub(crate) fn allowed_or_bug(isolation: Isolation) -> String {
    let fixes = "- run these transactions at SERIALIZABLE and retry the ones that fail with \
                 SQLSTATE 40001 (serialization_failure);\n\
                 - or lock what the decision depends on: `SELECT … FOR UPDATE` on the rows a \
                 transaction reads and then writes or relies on;\n\
                 - or let the database compute the write in one statement (`UPDATE t SET c = c \
                 + $1 WHERE …` instead of reading `c` and writing a value computed by the \
                 client);\n\
                 - or state the invariant as a constraint (`CHECK`, `UNIQUE`, a foreign key) so \
                 that a violating commit fails instead of being kept.\n";
    match isolation {
        Isolation::ReadCommitted => format!(
            "\n## Is this a PostgreSQL bug?\n\nNo. This behaviour is **allowed at READ \
             COMMITTED** by the SQL standard and by PostgreSQL's documentation (\"Transaction \
             Isolation\"): each statement sees the data committed before it began, so another \
             transaction's commit can come between a transaction's read and its write. It is \
             the application's to prevent. Fixes, any one of:\n\n\
             - run these transactions at REPEATABLE READ (a second update of a row another \
             transaction updated since the snapshot fails with SQLSTATE 40001 and must be \
             retried; this stops lost updates, not every anomaly: write skew needs \
             SERIALIZABLE);\n{fixes}"
        ),
        Isolation::RepeatableRead => format!(
            "\n## Is this a PostgreSQL bug?\n\nNo. This behaviour is **allowed at REPEATABLE \
             READ**, which PostgreSQL implements as snapshot isolation: two transactions that \
             read overlapping data and write different rows both commit (write skew), as \
             PostgreSQL's documentation (\"Transaction Isolation\") describes. It is the \
             application's to prevent. Fixes, any one of:\n\n{fixes}"
        ),
        Isolation::Serializable => "\n## Is this a PostgreSQL bug?\n\nSERIALIZABLE promises \
             that every committed execution is equivalent to a serial one. If this spec \
             commits every transaction and its reads print the writers listed above, the \
             database broke that promise: that would be a bug worth reporting, with this \
             folder attached.\n"
            .to_string(),
    }
}

/// What isolationtester printed for each read step of `reads` (step name, expected
/// `written_by`): (step name, expected, printed).
pub fn reads_in_output(
    output: &str,
    reads: &[(String, String)],
) -> Vec<(String, String, Option<String>)> {
    let lines: Vec<&str> = output.lines().collect();
    reads
        .iter()
        .map(|(name, expect)| {
            let head = format!("step {name}: ");
            let printed = lines
                .iter()
                .position(|l| l.starts_with(&head))
                .and_then(|i| {
                    // The header, the dashes, then the row `k|written_by`.
                    lines
                        .get(i + 3)
                        .and_then(|row| row.rsplit('|').next())
                        .map(|w| w.trim().to_string())
                });
            (name.clone(), expect.clone(), printed)
        })
        .collect()
}

/// Whether `isolation` is one the files can be written for.
pub fn supported(isolation: Isolation) -> bool {
    isolation != Isolation::Serializable
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 item 12: the README says whether the level allows the behaviour (no bug) and
    /// how to prevent it; at SERIALIZABLE, that it would be a bug.
    #[test]
    fn the_readme_says_whether_the_level_allows_it() {
        let rc = allowed_or_bug(Isolation::ReadCommitted);
        assert!(
            rc.contains("No. This behaviour is **allowed at READ COMMITTED**"),
            "{rc}"
        );
        assert!(
            rc.contains("REPEATABLE READ") && rc.contains("FOR UPDATE"),
            "{rc}"
        );
        assert!(rc.contains("CHECK"), "{rc}");
        let rr = allowed_or_bug(Isolation::RepeatableRead);
        assert!(
            rr.contains("allowed at REPEATABLE READ") && rr.contains("write skew"),
            "{rr}"
        );
        assert!(
            !rr.contains("run these transactions at REPEATABLE READ"),
            "{rr}"
        );
        let ser = allowed_or_bug(Isolation::Serializable);
        assert!(ser.contains("would be a bug"), "{ser}");
    }
}
