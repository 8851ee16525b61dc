//! The recording server on a Unix-domain socket: `record --unix-socket` points libpq's PGHOST
//! at a private directory holding `.s.PGSQL.PORT` (PostgreSQL's own name for its socket), and
//! `serve --socket-dir DIR` listens there beside TCP. A run through the socket records the
//! same history as the same run over TCP; the socket and its directory are gone afterwards.

use crate::common;

use common::cli::{isopredict, stderr, stdout, Scratch};

use super::server::{pg_bin, psql_make_t, read_history, write, ServeChild};

/// A pgbench run of one client (deterministic: one seed, one connection), then the rows it
/// left, as `record` runs it; also prints where PGHOST pointed.
fn recorded_run(s: &Scratch, psql: &str, pgbench: &str, unix: bool) -> (String, String) {
    let setup = write(
        s,
        "setup.sql",
        "CREATE TABLE kv (k integer PRIMARY KEY, v integer NOT NULL);\n\
         INSERT INTO kv VALUES (1, 0), (2, 0), (3, 0);\n",
    );
    let script = write(
        s,
        "bump.sql",
        "\\set k random(1, 3)\nBEGIN;\nSELECT v FROM kv WHERE k = :k;\n\
         UPDATE kv SET v = v + 1 WHERE k = :k;\nEND;\n",
    );
    let cmd = format!(
        "echo \"PGHOST=$PGHOST\"; ls -a \"$PGHOST\" 2>/dev/null; \
         {psql} -X -q -v ON_ERROR_STOP=1 -f {setup} && \
         {pgbench} -n -M prepared -c 1 -t 40 --random-seed=5 -f {script} >/dev/null && \
         {psql} -X -A -t -c 'SELECT k, v FROM kv ORDER BY k'"
    );
    let out = s.arg("rec");
    let mut args = vec!["record", "--out", out.as_str()];
    if unix {
        args.push("--unix-socket");
    }
    args.extend_from_slice(&["--", "sh", "-c", &cmd]);
    let o = isopredict(&args);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let observed = std::fs::read_to_string(s.join("rec").join("observed.json")).unwrap();
    std::fs::remove_dir_all(s.join("rec")).unwrap();
    (stdout(&o), observed)
}

#[test]
fn a_run_through_the_unix_socket_records_what_the_same_run_over_tcp_does() {
    let (Some(psql), Some(pgbench)) = (pg_bin("psql"), pg_bin("pgbench")) else {
        return;
    };
    let (psql, pgbench) = (psql.display().to_string(), pgbench.display().to_string());
    let s = Scratch::new("unix-socket-record");
    let (tcp_out, tcp) = recorded_run(&s, &psql, &pgbench, false);
    let (unix_out, unix) = recorded_run(&s, &psql, &pgbench, true);
    assert!(tcp_out.contains("PGHOST=127.0.0.1"), "{tcp_out}");
    // PGHOST named a directory holding the server's socket, under PostgreSQL's name.
    let host = unix_out
        .lines()
        .find_map(|l| l.strip_prefix("PGHOST="))
        .expect("the command printed PGHOST")
        .to_string();
    assert!(host.starts_with('/'), "{unix_out}");
    assert!(
        unix_out.lines().any(|l| l.starts_with(".s.PGSQL.")),
        "{unix_out}"
    );
    // The directory is removed when record ends.
    assert!(
        !std::path::Path::new(&host).exists(),
        "{host} was left behind"
    );
    // The same rows, and the same history (the run is deterministic: one client, one seed).
    let rows = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains('|'))
            .map(String::from)
            .collect()
    };
    assert_eq!(rows(&tcp_out).len(), 3, "{tcp_out}");
    assert_eq!(rows(&tcp_out), rows(&unix_out));
    let (a, b) = (
        isopredict::formats::json::read(tcp.as_bytes(), "tcp").unwrap(),
        isopredict::formats::json::read(unix.as_bytes(), "unix").unwrap(),
    );
    assert_eq!(a.same_content(&b), Ok(()));
    assert!(a.ops().len() > 40 * 3, "{} events", a.ops().len());
}

#[test]
fn serve_listens_on_its_socket_dir_and_removes_the_socket_when_it_stops() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("serve-socket-dir");
    let dir = s.join("sock");
    std::fs::create_dir_all(&dir).unwrap();
    let serving = ServeChild::start(&s.arg("out"), &["--socket-dir", &s.arg("sock")]);
    // "listening on 127.0.0.1:PORT and DIR/.s.PGSQL.PORT"
    let socket = serving
        .listening
        .rsplit(" and ")
        .next()
        .unwrap()
        .to_string();
    let port = socket.rsplit('.').next().unwrap().to_string();
    assert_eq!(
        std::path::Path::new(&socket),
        dir.join(format!(".s.PGSQL.{port}"))
    );
    psql_make_t(&psql, &s.arg("sock"), &port);
    let rest = serving.terminate();
    assert!(rest.contains("1 committed"), "{rest}");
    assert!(
        !std::path::Path::new(&socket).exists(),
        "the socket was left"
    );
    let h = read_history(&s.join("out").join("observed.json"));
    assert!(h.key_names().iter().any(|k| k == "t.v[id=1]"));
}

#[test]
fn serve_refuses_a_socket_dir_that_is_not_a_directory() {
    let s = Scratch::new("serve-socket-dir-missing");
    let o = isopredict(&[
        "serve",
        "--port",
        "0",
        "--out",
        &s.arg("out"),
        "--socket-dir",
        &s.arg("nowhere"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
}
