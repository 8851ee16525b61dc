//! JDBC, the driver IsoPredict's own subjects used (OLTP-Bench through MonkeyDB): a bank in
//! Java over PostgreSQL's pgjdbc driver (tests/data/server/Bank.java), recorded unmodified
//! through `isopredict record`. pgjdbc connects with the extended protocol, names its
//! connections with `SET application_name` after connecting, switches to named server-side
//! statements after five uses, batches inserts and asks for generated keys with `RETURNING`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{isopredict, stderr, stdout, Scratch};

use super::server::{read_history, reads};

/// javac, java and the pgjdbc jar, or `None` after noting the skip (a failure under CI).
fn jdk_with_pgjdbc() -> Option<PathBuf> {
    let jar = std::env::var_os("ISOPREDICT_TEST_PGJDBC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/java/postgresql.jar"));
    let javac = Command::new("javac").arg("-version").output();
    if jar.exists() && javac.is_ok_and(|o| o.status.success()) {
        return Some(jar);
    }
    common::postgres::tool_missing(
        "the JDBC program",
        "no javac or no pgjdbc jar (Debian: default-jdk-headless, libpostgresql-jdbc-java; or \
         set ISOPREDICT_TEST_PGJDBC to the jar)",
    );
    None
}

#[test]
fn a_jdbc_program_is_recorded_named_by_its_connections_and_loses_an_update() {
    let Some(jar) = jdk_with_pgjdbc() else { return };
    let s = Scratch::new("jdbc-bank");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/server/Bank.java");
    let classes = s.join("classes");
    let o = Command::new("javac")
        .arg("-cp")
        .arg(&jar)
        .arg("-d")
        .arg(&classes)
        .arg(&source)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let classpath = format!("{}:{}", jar.display(), classes.display());
    let out = s.arg("rec");
    let o = isopredict(&[
        "record", "--out", &out, "--", "java", "-cp", &classpath, "Bank",
    ]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    // What the program printed: two tellers' 8 deposits of 10 each on accounts 1 and 2.
    let printed = stdout(&o);
    for line in [
        "1|owner1|180",
        "2|owner2|180",
        "3|owner3|100",
        "audit|16|160",
    ] {
        assert!(printed.lines().any(|l| l == line), "{line}: {printed}");
    }
    assert!(stderr(&o).contains("0 statements failed"), "{}", stderr(&o));
    let observed = s.join("rec").join("observed.json");
    let h = read_history(&observed);
    // Each connection is named by the `SET application_name` pgjdbc sends after connecting;
    // the one named `setup` loaded the accounts and closed before the others opened.
    // The two tellers' threads connect at once: either may be first.
    let st = h.statements().unwrap();
    let mut names = st.session_names().to_vec();
    names[1..3].sort();
    assert_eq!(names, ["setup", "teller0", "teller1", "report", "report2"]);
    assert_eq!(h.sessions_after(), [(0, 1), (0, 2), (0, 3), (0, 4)]);
    // The statements as pgjdbc sent them, with their parameters.
    let texts: Vec<&str> = st.statements().iter().map(|s| s.sql.as_str()).collect();
    for sql in [
        "SELECT bal FROM acct WHERE id = $1",
        "UPDATE acct SET bal = $1 WHERE id = $2",
        "INSERT INTO acct VALUES ($1, $2, $3)",
    ] {
        assert!(texts.contains(&sql), "{sql}: {texts:?}");
    }
    // The report read the final balances from the last deposits that wrote them.
    let final_reads: Vec<_> = reads(&h)
        .into_iter()
        .filter(|(sql, key, _)| sql.starts_with("SELECT id, owner, bal") && key.contains(".bal["))
        .collect();
    assert_eq!(final_reads.len(), 3, "{final_reads:?}");
    for (_, key, writer) in &final_reads {
        let expected = if key == "acct.bal[id=3]" {
            "INSERT INTO acct VALUES ($1, $2, $3)"
        } else {
            "UPDATE acct SET bal = $1 WHERE id = $2"
        };
        assert_eq!(writer.as_deref(), Some(expected), "{key}");
    }
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    // The deposit reads a balance and writes back the sum computed in Java: a lost update at
    // causal — so at read committed too, which allows every causal execution (rc's first
    // predictions are the report's fractured reads; listing them all to reach the lost
    // update takes most of a minute).
    let causal = isopredict(&["predict", &obs, "--level", "causal"]);
    assert_eq!(causal.status.code(), Some(1), "{}", stdout(&causal));
    let said = stdout(&causal);
    assert!(said.contains("the anomaly is a lost update"), "{said}");
    assert!(
        said.contains("read acct.bal[id=1]") || said.contains("read acct.bal[id=2]"),
        "{said}"
    );
    let rc = isopredict(&["predict", &obs, "--level", "rc"]);
    assert_eq!(rc.status.code(), Some(1), "{}", stdout(&rc));
}
