//! `isopredict reproduce DIR` on an application's folder (issue 33 item 2): the anomaly that
//! `isopredict test` (or `record`) found in an application nobody here wrote — pgbench running
//! a read-then-write script with prepared statements — made to happen on PostgreSQL with the
//! application's own statements, and the isolationtester spec that shows it; at repeatable
//! read and serializable the reason it cannot.
//!
//! Needs PostgreSQL's client programs (psql, pgbench, isolationtester) and a server
//! (`ISOPREDICT_POSTGRES_URL`): under CI a missing one fails the test, elsewhere the skip is
//! noted (target/tmp/skipped-tests.txt).

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{isopredict_in, stderr, stdout, Scratch};
use common::postgres::{client_dir, isolationtester, path_with, run_isolationtester, server};

/// Where one test's commands run: its scratch folder, with `PATH` holding the application's
/// client programs, against the server at `url`.
struct Bench {
    dir: PathBuf,
    path: OsString,
    url: String,
}

impl Bench {
    fn isopredict(&self, args: &[&str]) -> Output {
        isopredict_in(&self.dir, &self.path, args)
    }

    /// `isopredict test --json --out out --level LEVEL --max 1 [ARGS…] -- COMMAND…`, which must
    /// find `anomaly` and validate it by replay (exit 1): its report.
    fn test_finds(
        &self,
        level: &str,
        args: &[&str],
        command: &[&str],
        anomaly: &str,
    ) -> serde_json::Value {
        let mut all = vec![
            "test",
            "--json",
            "--out",
            "out",
            "--level",
            level,
            "--max",
            "1",
            "--turn-wait",
            "20",
        ];
        all.extend(args);
        all.push("--");
        all.extend(command);
        let o = self.isopredict(&all);
        let r = json(&o);
        assert_eq!(o.status.code(), Some(1), "{r:#}\n{}", stderr(&o));
        assert_eq!(r["anomalies"][0]["name"], anomaly, "{r:#}");
        assert_eq!(r["anomalies"][0]["replay"], "validated", "{r:#}");
        r
    }

    /// `isopredict reproduce FOLDER --json --store URL --isolation ISOLATION [--out OUT]`: its
    /// exit code and report, the report checked to say `verdict`.
    fn reproduce(
        &self,
        folder: &str,
        isolation: &str,
        out: Option<&str>,
        verdict: &str,
    ) -> (Option<i32>, serde_json::Value) {
        let mut args = vec![
            "reproduce",
            folder,
            "--json",
            "--store",
            &self.url,
            "--isolation",
            isolation,
        ];
        args.extend(out.map(|o| ["--out", o]).into_iter().flatten());
        let o = self.isopredict(&args);
        let r = json(&o);
        assert_eq!(r["verdict"], verdict, "{isolation}: {r:#}\n{}", stderr(&o));
        (o.status.code(), r)
    }

    /// [`Bench::reproduce`] that must reproduce `anomaly` (exit 1): the report.
    fn reproduced(&self, folder: &str, isolation: &str, anomaly: &str) -> serde_json::Value {
        let (code, r) = self.reproduce(folder, isolation, None, "reproduced");
        assert_eq!(code, Some(1), "{r:#}");
        assert_eq!(r["anomaly"], anomaly, "{r:#}");
        r
    }

    /// [`Bench::reproduce`] into `out` that must find the anomaly not reproducible (exit 0),
    /// saying `why`.
    fn not_reproducible(&self, folder: &str, isolation: &str, out: &str, why: &str) {
        let (code, r) = self.reproduce(folder, isolation, Some(out), "not-reproducible");
        assert_eq!(code, Some(0), "{isolation}: {r:#}");
        assert!(
            r["summary"].as_str().unwrap().contains(why),
            "{isolation}: {r:#}"
        );
    }
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("JSON: {e}\n{}\n{}", stdout(o), stderr(o)))
}

/// The pgbench application: a table of two accounts loaded by a setup command, and a deposit
/// that reads the balance into pgbench (`\gset`) and writes back the sum it computed.
fn write_app(s: &Scratch) {
    std::fs::write(
        s.join("setup.sql"),
        "CREATE TABLE acct (id integer PRIMARY KEY, bal integer NOT NULL);\n\
         INSERT INTO acct VALUES (1, 100), (2, 100);\n",
    )
    .unwrap();
    std::fs::write(
        s.join("deposit.sql"),
        "\\set id random(1, 2)\nBEGIN;\nSELECT bal AS b FROM acct WHERE id = :id \\gset\n\
         UPDATE acct SET bal = :b + 10 WHERE id = :id;\nEND;\n",
    )
    .unwrap();
}

const SETUP: &str = "psql -X -q -v ON_ERROR_STOP=1 -f setup.sql";
const PGBENCH: [&str; 11] = [
    "pgbench",
    "-n",
    "-M",
    "prepared",
    "-c",
    "4",
    "-j",
    "1",
    "-t",
    "2",
    "--random-seed=7",
];

/// Every probe of the spec printed the writer the reproduction expects.
fn spec_shows_the_reads(tester: &Path, url: &str, dir: &Path, r: &serde_json::Value) -> String {
    let spec = std::fs::read_to_string(dir.join("reproducer.spec")).unwrap();
    let o = run_isolationtester(tester, url, &spec);
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(!text.contains("ERROR"), "{spec}\n{text}");
    let probes = r["spec_probes"].as_array().unwrap();
    assert!(!probes.is_empty(), "{r:#}");
    for p in probes {
        let (step, key, expect) = (
            p[0].as_str().unwrap(),
            p[1].as_str().unwrap(),
            p[2].as_str().unwrap(),
        );
        let rows = isopredict::reproduce::probe_rows_in_output(&text, step);
        assert!(
            rows.contains(&(key.to_string(), expect.to_string())),
            "step {step} must print {key} | {expect}: {rows:?}\n{text}"
        );
    }
    text
}

/// pgbench's lost update, found by `isopredict test`, reproduced at read committed with
/// pgbench's own statements (the parameters the application computed along the prediction),
/// the spec shows it through isolationtester; at repeatable read and serializable the
/// reproduction says why it cannot happen there.
#[test]
fn pgbench_lost_update_is_reproduced_at_read_committed_and_not_at_repeatable_read() {
    let test = "app_reproduce pgbench lost update";
    let (Some(bin), Some(url), Some(tester)) = (
        client_dir(test, &["psql", "pgbench"]),
        server(test),
        isolationtester(test),
    ) else {
        return;
    };
    let s = Scratch::new("app-reproduce-pgbench");
    write_app(&s);
    let bench = Bench {
        dir: s.join(""),
        path: path_with(&bin),
        url,
    };
    let mut command = PGBENCH.to_vec();
    command.extend(["-f", "deposit.sql"]);
    bench.test_finds("rc", &["--setup", SETUP], &command, "lost update");

    let r = bench.reproduced("out", "read-committed", "lost update");
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.contains("with the application's own statements"),
        "{summary}"
    );
    let txns: Vec<&str> = r["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(txns.len(), 2, "{r:#}");
    assert!(txns.iter().all(|t| t.starts_with("pgbench")), "{txns:?}");
    let repro = s.join("out/reproduce");
    let spec = std::fs::read_to_string(repro.join("reproducer.spec")).unwrap();
    // The steps are pgbench's statements, with their parameters written in.
    assert!(
        spec.contains("SELECT bal AS b FROM acct WHERE id = '"),
        "{spec}"
    );
    assert!(spec.contains("UPDATE acct SET bal = '"), "{spec}");
    let readme = std::fs::read_to_string(repro.join("README.md")).unwrap();
    assert!(readme.contains("allowed at READ COMMITTED"), "{readme}");
    assert!(readme.contains("SELECT … FOR UPDATE"), "{readme}");
    assert!(
        readme.contains("after it: `UPDATE acct SET bal"),
        "{readme}"
    );
    for f in [
        "session-s1.sql",
        "session-s2.sql",
        "report.md",
        "report.json",
    ] {
        assert!(repro.join(f).exists(), "{f}");
    }
    let text = spec_shows_the_reads(&tester, &bench.url, &repro, &r);
    // The final state holds one deposit's write: the other is lost.
    let last = isopredict::reproduce::probe_rows_in_output(&text, "final_state");
    assert_eq!(last.len(), 1, "{text}");
    assert!(txns.contains(&last[0].1.as_str()), "{last:?} {txns:?}");

    for (isolation, why) in [
        ("repeatable-read", "first updater wins"),
        ("serializable", "SERIALIZABLE"),
    ] {
        bench.not_reproducible("out", isolation, isolation, why);
        assert!(
            !s.join(isolation).join("reproducer.spec").exists(),
            "{isolation}"
        );
    }
}

/// A folder of `isopredict record` has no prediction: reproduce predicts at the level the
/// isolation allows (rc at read committed) and reproduces it with the recorded parameters.
#[test]
fn a_recorded_folder_is_predicted_and_reproduced() {
    let test = "app_reproduce recorded pgbench";
    let (Some(bin), Some(url)) = (client_dir(test, &["psql", "pgbench"]), server(test)) else {
        return;
    };
    let s = Scratch::new("app-reproduce-record");
    write_app(&s);
    let bench = Bench {
        dir: s.join(""),
        path: path_with(&bin),
        url,
    };
    let mut args = vec!["record", "--out", "rec", "--setup", SETUP, "--"];
    args.extend(PGBENCH);
    args.extend(["-f", "deposit.sql"]);
    let o = bench.isopredict(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let observed = std::fs::read_to_string(s.join("rec/observed.json")).unwrap();
    assert!(
        observed.contains("\"schema\": ["),
        "the recording keeps its schema"
    );
    bench.reproduced("rec", "read-committed", "lost update");
    let readme = std::fs::read_to_string(s.join("rec/reproduce/README.md")).unwrap();
    assert!(
        readme.contains("The statements send the parameters recorded in the observed run"),
        "{readme}"
    );
    // Without --isolation the level cannot be guessed from a recording.
    let o = bench.isopredict(&["reproduce", "rec", "--store", &bench.url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--isolation is needed"),
        "{}",
        stderr(&o)
    );
}

/// The two doctors on call (psycopg): `isopredict test` at si validates the write skew (the
/// program's own check fails under it); reproduced at repeatable read with the program's
/// statements — both doctors end off call, and the spec shows both checks reading the
/// fixture's rows — and not reproducible at serializable.
#[test]
fn the_doctors_write_skew_is_reproduced_at_repeatable_read_and_not_at_serializable() {
    let test = "app_reproduce psycopg doctors";
    let (Some(python), Some(url), Some(tester)) = (
        common::postgres::python_with_psycopg(test),
        server(test),
        isolationtester(test),
    ) else {
        return;
    };
    let s = Scratch::new("app-reproduce-doctors");
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/app-test/doctors.py");
    let bench = Bench {
        dir: s.join(""),
        path: std::env::var_os("PATH").unwrap_or_default(),
        url,
    };
    let (python, program) = (python.display().to_string(), program.display().to_string());
    let r = bench.test_finds("si", &[], &[&python, &program], "write skew");
    assert_eq!(
        r["anomalies"][0]["test_failed_under_prediction"], true,
        "{r:#}"
    );

    let r = bench.reproduced("out", "repeatable-read", "write skew");
    let repro = s.join("out/reproduce");
    let readme = std::fs::read_to_string(repro.join("README.md")).unwrap();
    assert!(readme.contains("allowed at REPEATABLE READ"), "{readme}");
    let text = spec_shows_the_reads(&tester, &bench.url, &repro, &r);
    // Each doctor's write is kept, each computed from the fixture's rows: nobody is on call.
    let last = isopredict::reproduce::probe_rows_in_output(&text, "final_state");
    assert_eq!(
        last,
        [
            ("doctors.on_call[id=1]".to_string(), "alice/1".to_string()),
            ("doctors.on_call[id=2]".to_string(), "bob/1".to_string())
        ],
        "{text}"
    );
    assert!(text.contains(" 1|alice|f"), "{text}");
    assert!(text.contains(" 2|bob |f"), "{text}");

    bench.not_reproducible("out", "serializable", "ser", "SERIALIZABLE");
}

/// Runs `isopredict test … --reproduce --store URL --isolation ISOLATION` on the pgbench
/// deposit into `out` and returns its exit code and JSON report.
fn test_itself(
    s: &Scratch,
    bin: &Path,
    url: &str,
    isolation: &str,
    out: &str,
) -> (Option<i32>, serde_json::Value) {
    let mut args = vec![
        "test",
        "--json",
        "--out",
        out,
        "--level",
        "rc",
        "--max",
        "1",
        "--turn-wait",
        "20",
        "--setup",
        SETUP,
        "--reproduce",
        "--store",
        url,
        "--isolation",
        isolation,
        "--",
    ];
    // One deposit per client: with two, the anomaly predicted may have a deposit read an
    // older balance than its own connection's previous deposit, which PostgreSQL never
    // shows (the prediction does not keep connection order; the report says so).
    args.extend(PGBENCH.map(|a| if a == "2" { "1" } else { a }));
    args.extend(["-f", "deposit.sql"]);
    let o = isopredict_in(&s.join(""), &path_with(bin), &args);
    let r = json(&o);
    assert!(
        s.join(out).join("app-reproduction.json").exists(),
        "{r:#}\n{}",
        stderr(&o)
    );
    (o.status.code(), r)
}

/// Issue 33 item 3: pgbench itself — not its recorded statements — re-run against PostgreSQL
/// through the server's upstream gate, its statements in the schedule's order: at read
/// committed the lost update happens (every read the anomaly needs saw its predicted writer,
/// by the rows' xmin; the final balance holds fewer deposits than transactions committed);
/// at serializable PostgreSQL refuses the second deposit and the report names its error.
#[test]
fn pgbench_itself_loses_a_deposit_on_postgresql_at_read_committed_and_not_at_serializable() {
    let test = "app_reproduce pgbench itself";
    let (Some(bin), Some(url)) = (client_dir(test, &["psql", "pgbench"]), server(test)) else {
        return;
    };
    let s = Scratch::new("app-reproduce-itself");
    write_app(&s);
    let (code, r) = test_itself(&s, &bin, &url, "read-committed", "rc");
    assert_eq!(code, Some(1), "{r:#}");
    assert_eq!(r["test"]["anomalies"][0]["name"], "lost update", "{r:#}");
    let it = &r["itself"];
    let repro = &it["reproduction"];
    assert_eq!(repro["verdict"], "reproduced", "{it:#}");
    assert!(
        repro["summary"]
            .as_str()
            .unwrap()
            .contains("by the application itself (`pgbench"),
        "{it:#}"
    );
    let reads = repro["anomaly_reads"].as_array().unwrap();
    assert!(!reads.is_empty(), "{it:#}");
    for read in reads {
        assert_eq!(read["got"], read["predicted"], "{it:#}");
    }
    assert!(it["divergences"].as_array().unwrap().is_empty(), "{it:#}");
    // Serially the balance would hold every committed deposit; one of them is lost.
    let writers = it["committed_writers"].as_array().unwrap();
    assert_eq!(writers.len(), 1, "{it:#}");
    let key = writers[0][0].as_str().unwrap();
    let committed = writers[0][1].as_u64().unwrap();
    let id = key
        .trim_end_matches(']')
        .rsplit_once("id=")
        .map(|(_, v)| v.to_string())
        .unwrap();
    let row = it["final_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .find(|r| r.contains(&format!("id={id},")))
        .unwrap_or_else(|| panic!("{it:#}"));
    let bal: u64 = row.rsplit_once("bal=").unwrap().1.trim().parse().unwrap();
    // The setup's INSERT is one of the writers: 100, then 10 per deposit.
    assert!(committed >= 3, "{it:#}");
    assert!(
        bal >= 100 && bal < 100 + 10 * (committed - 1),
        "{row}: {it:#}"
    );

    let (code, r) = test_itself(&s, &bin, &url, "serializable", "ser");
    let it = &r["itself"];
    let repro = &it["reproduction"];
    assert_eq!(code, Some(1), "{r:#}");
    assert_eq!(repro["verdict"], "not-reproduced", "{it:#}");
    let summary = repro["summary"].as_str().unwrap();
    assert!(
        summary.contains("40001") && summary.contains("could not serialize access"),
        "{it:#}"
    );
}

/// The two doctors program runs alice's transaction, then bob's, from one thread: the
/// schedule of the write skew interleaves them, which the program cannot do. `test
/// --reproduce` says so — unknown (exit 3), naming the turn that never came — instead of
/// hanging or claiming anything.
#[test]
fn a_program_running_its_sessions_one_after_another_cannot_follow_the_schedule() {
    let test = "app_reproduce doctors itself";
    let (Some(python), Some(url)) = (common::postgres::python_with_psycopg(test), server(test))
    else {
        return;
    };
    let s = Scratch::new("app-reproduce-doctors-itself");
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/app-test/doctors.py");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let (python, program) = (python.display().to_string(), program.display().to_string());
    let o = isopredict_in(
        &s.join(""),
        &path,
        &[
            "test",
            "--json",
            "--out",
            "out",
            "--level",
            "si",
            "--max",
            "1",
            "--turn-wait",
            "2",
            "--reproduce",
            "--store",
            &url,
            "--isolation",
            "repeatable-read",
            "--",
            &python,
            &program,
        ],
    );
    let r = json(&o);
    assert_eq!(o.status.code(), Some(3), "{r:#}\n{}", stderr(&o));
    let it = &r["itself"];
    assert_eq!(it["reproduction"]["verdict"], "unknown", "{it:#}");
    let summary = it["reproduction"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("did not come within") && summary.contains("bob's `SELECT"),
        "{summary}"
    );
}
