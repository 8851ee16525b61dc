//! The reproducer files of an application's anomaly (`reproduce/app.rs`): a PostgreSQL
//! isolationtester spec whose steps are the application's statements (each reading step first
//! probes the markers of what it reads, so the spec's output shows which transaction's write
//! each read saw), one SQL file per session, and a README that says what the reads must show,
//! which statements' values the application may have computed otherwise, and whether the
//! level allows it (the text the workloads' reproducers share, [`super::files`]).

use std::fmt::Write as _;

use super::app_run::RunPlan;
use super::app_sql::NO_ROW;
use super::Reproduction;

/// The schema the spec creates and drops.
pub const SPEC_SCHEMA: &str = "isopredict_repro";

/// The files: `reproducer.spec`, `session-sN.sql`, `README.md`. None when the statements
/// cannot be written into a spec (an isolationtester block cannot hold braces).
pub fn files(plan: &RunPlan, out: &Reproduction, origin: &str) -> Vec<(String, String)> {
    if out.verdict == super::ReproVerdict::NotReproducible {
        return Vec::new();
    }
    let mut files = Vec::new();
    let all_sql: Vec<String> = (0..plan.steps.len())
        .flat_map(|i| plan.step_sql(i))
        .chain(plan.setup_sql())
        .collect();
    if all_sql.iter().all(|s| !s.contains('{') && !s.contains('}')) {
        files.push(("reproducer.spec".to_string(), spec(plan, out, origin)));
    }
    files.extend(session_files(plan));
    files.push((
        "README.md".to_string(),
        readme(plan, out, origin, files.len() > 1),
    ));
    files
}

fn indent(sql: &[String]) -> String {
    sql.iter()
        .flat_map(|s| s.lines())
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The isolationtester spec.
fn spec(plan: &RunPlan, out: &Reproduction, origin: &str) -> String {
    let mut s =
        format!(
        "# isopredict reproducer: {} at {}, with the application's statements\n# from {origin}\n",
        out.anomaly.as_deref().unwrap_or("an unserializable execution"),
        plan.isolation.sql()
    );
    let _ = writeln!(
        s,
        "# Run: isolationtester \"host=... port=... dbname=... user=...\" < reproducer.spec\n\
         # Triggers store the writing transaction's name in marker columns (isopredict_w*);\n\
         # before each statement that reads, a probe prints k | written_by for what it reads\n\
         # (see README.md for what each must print). Everything lives in schema {SPEC_SCHEMA}.\n"
    );
    let mut setup = vec![format!(
        "DROP SCHEMA IF EXISTS {SPEC_SCHEMA} CASCADE; CREATE SCHEMA {SPEC_SCHEMA}; SET search_path TO {SPEC_SCHEMA};"
    )];
    setup.extend(plan.setup_sql());
    let _ = writeln!(s, "setup\n{{\n{}\n}}\n", indent(&setup));
    let _ = writeln!(
        s,
        "teardown\n{{\n  DROP SCHEMA {SPEC_SCHEMA} CASCADE;\n}}\n"
    );
    for (n, (name, _)) in plan.sessions.iter().enumerate() {
        let _ = writeln!(s, "# {name}\nsession s{}", n + 1);
        let _ = writeln!(s, "setup {{ {} }}", plan.session_setup(n, SPEC_SCHEMA));
        for (i, step) in plan.steps.iter().enumerate() {
            if step.session == n {
                let _ = writeln!(s, "step {} {{ {} }}", step.name, plan.step_sql(i).join(" "));
            }
        }
        s.push('\n');
    }
    let _ = writeln!(s, "session check");
    let _ = writeln!(s, "setup {{ SET search_path TO {SPEC_SCHEMA}; }}");
    let _ = writeln!(s, "step initial_state {{ {} }}", plan.initial_probe());
    let _ = writeln!(s, "step final_state {{ {} }}\n", plan.final_probe());
    let names: Vec<&str> = plan.steps.iter().map(|st| st.name.as_str()).collect();
    let _ = writeln!(
        s,
        "permutation initial_state {} final_state",
        names.join(" ")
    );
    s
}

/// One SQL file per session: its statements in order, each wait as a comment.
fn session_files(plan: &RunPlan) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for (n, (name, _)) in plan.sessions.iter().enumerate() {
        let mut s = format!(
            "-- Session s{} ({name}) of the isopredict reproducer ({}). Run the statements in order\n\
             -- in one connection after the spec's setup; before each step, wait until the step\n\
             -- named in its comment has completed in another session.\n{}\n",
            n + 1,
            plan.isolation.sql(),
            plan.session_setup(n, SPEC_SCHEMA)
        );
        for (i, step) in plan.steps.iter().enumerate() {
            if step.session != n {
                continue;
            }
            let mut comment = format!("-- step {} ({}, {})", i + 1, step.name, step.txn_label);
            if let Some(prev) = i.checked_sub(1).map(|j| &plan.steps[j]) {
                if prev.session != n {
                    let _ = write!(
                        comment,
                        ": wait until {} has run step {i} ({})",
                        plan.sessions[prev.session].0, prev.name
                    );
                }
            }
            for r in &step.reads {
                let _ = write!(comment, "; the probe must print {} | {}", r.key, r.expect);
            }
            let _ = writeln!(s, "{comment}\n{}", plan.step_sql(i).join("\n"));
        }
        files.push((format!("session-s{}.sql", n + 1), s));
    }
    files
}

fn seen_words(expect: &str) -> String {
    if expect == NO_ROW {
        "no row (it does not exist yet)".to_string()
    } else {
        format!("the write of {expect}")
    }
}

/// The README.
fn readme(plan: &RunPlan, out: &Reproduction, origin: &str, spec: bool) -> String {
    let mut s = format!(
        "# Reproducer: {} at {}, with the application's statements\n\n",
        out.anomaly
            .as_deref()
            .unwrap_or("an unserializable execution"),
        plan.isolation.sql()
    );
    let _ = writeln!(s, "**{}**\n\nPredicted from {origin}.\n", out.summary);
    if let (Some(name), Some(what)) = (&out.anomaly, &out.anomaly_description) {
        let name = crate::history::anomalies::markdown_label_of(name);
        let _ = writeln!(s, "{name}: {what}.\n");
    }
    let _ = writeln!(
        s,
        "## The transactions\n\nThe anomaly needs {} transactions ({}); `teller-1/2` names the \
         second transaction of the connection named teller-1. The other transactions of the \
         run are left out; the rows these read are rebuilt first by replaying, in the \
         recording's order, the recorded transactions that wrote them ({}).\n",
        out.transactions.len(),
        out.transactions.join(", "),
        if plan.setup.is_empty() {
            "none".to_string()
        } else {
            plan.setup
                .iter()
                .map(|(l, _)| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    let _ = writeln!(s, "## The reads that make it an anomaly\n");
    for step in &plan.steps {
        for r in &step.reads {
            let _ = writeln!(
                s,
                "- step {} ({}): {} must see {} (the probe prints `{} | {}`){}",
                step.name,
                step.txn_label,
                r.key,
                seen_words(&r.expect),
                r.key,
                r.expect,
                if r.changed {
                    " — the prediction changes this read"
                } else {
                    ""
                }
            );
        }
    }
    let _ = writeln!(
        s,
        "\nNo serial order of these transactions gives every read the write it sees. The \
         `final_state` step prints the writer of each row the anomaly wrote: {}.\n",
        plan.final_writers
            .iter()
            .map(|(k, w)| format!("{} by {w}", plan.initial[*k as usize].0))
            .collect::<Vec<_>>()
            .join(", ")
    );
    parameters_section(&mut s, plan);
    s.push_str(&super::files::allowed_or_bug(plan.isolation));
    let _ = writeln!(
        s,
        "\n## How to run it\n\n{}By hand: run the spec's setup, then `session-s*.sql` in {} \
         connections, each step only when its comment says. None of the statements waits for a \
         lock, so the outcome is the same every time (a lock wait fails after 2 s). The spec \
         creates its own schema ({SPEC_SCHEMA}) and drops it at the end: your tables are not \
         touched.",
        if spec {
            "```sh\nisolationtester \"host=HOST port=PORT dbname=DB user=USER\" < reproducer.spec\n```\n\n\
             `isolationtester` ships with PostgreSQL's client programs (Debian: \
             postgresql-client-NN, under /usr/lib/postgresql/NN/lib/pgxs/src/test/isolation/). \
             Each probe prints `k | written_by` rows: compare them with the list above.\n\n"
        } else {
            "(No isolationtester spec: a statement holds `{` or `}`, which a spec step cannot.)\n\n"
        },
        plan.sessions.len()
    );
    s
}

/// Which parameters the statements send, and which later statements the application may have
/// computed otherwise from the changed reads.
fn parameters_section(s: &mut String, plan: &RunPlan) {
    let _ = writeln!(s, "## The parameters\n");
    if plan.computed.is_empty() {
        let _ = writeln!(
            s,
            "The statements send the parameters recorded in the observed run."
        );
    } else {
        let _ = writeln!(
            s,
            "Where `isopredict test` re-ran the application along the prediction and it \
             followed it, the statements send the parameters the application computed there: {}. \
             The others send the recorded ones.",
            plan.computed.join("; ")
        );
    }
    if plan.later.is_empty() {
        s.push('\n');
        return;
    }
    let _ = writeln!(
        s,
        "\nWhere a read sees another write than in the recorded run, the application's code may \
         compute other values afterwards; the spec sends fixed parameters, so these statements \
         depended on an anomalous read:\n"
    );
    for (txn, read, later) in &plan.later {
        let after = if later.is_empty() {
            "no later statement".to_string()
        } else {
            later.join("; ")
        };
        let _ = writeln!(s, "- {txn} reads {read}; after it: {after}");
    }
    s.push('\n');
}

/// The `k | written_by` rows isolationtester printed for step `step` (its probe's).
pub fn probe_rows_in_output(output: &str, step: &str) -> Vec<(String, String)> {
    let head = format!("step {step}: ");
    let lines: Vec<&str> = output.lines().collect();
    let Some(start) = lines.iter().position(|l| l.starts_with(&head)) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    let mut in_rows = false;
    for l in &lines[start + 1..] {
        if l.starts_with("step ") {
            break;
        }
        if l.starts_with("---") {
            in_rows = true;
            continue;
        }
        if l.starts_with('(') || l.trim().is_empty() {
            if in_rows {
                break;
            }
            continue;
        }
        if in_rows {
            if let Some((k, w)) = l.split_once('|') {
                rows.push((k.trim().to_string(), w.trim().to_string()));
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_rows_are_read_from_isolationtester_output() {
        let out = "starting permutation: initial_state s1_1 final_state\n\
                   step initial_state: SELECT k, written_by FROM (VALUES …) AS p(k, written_by);\n\
                   k             |written_by\n\
                   --------------+----------\n\
                   acct[id=1]    |setup/1   \n\
                   acct.bal[id=1]|setup/1   \n\
                   (2 rows)\n\n\
                   step s1_1: SELECT …; SELECT bal FROM acct WHERE id = '1';\n\
                   k             |written_by\n\
                   --------------+----------\n\
                   acct.bal[id=1]|pgbench/1\n\
                   (1 row)\n\n\
                   bal\n---\n100\n(1 row)\n\n";
        assert_eq!(
            probe_rows_in_output(out, "initial_state"),
            [
                ("acct[id=1]".to_string(), "setup/1".to_string()),
                ("acct.bal[id=1]".to_string(), "setup/1".to_string())
            ]
        );
        assert_eq!(
            probe_rows_in_output(out, "s1_1"),
            [("acct.bal[id=1]".to_string(), "pgbench/1".to_string())]
        );
        assert!(probe_rows_in_output(out, "s2_1").is_empty());
    }
}
