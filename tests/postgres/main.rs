//! With PostgreSQL and its client programs: recording on a real server, observed anomalies,
//! reproductions and their isolationtester specs, `isopredict test` and `reproduce` on
//! applications (psql, pgbench, psycopg), and the recording server with real clients (psql,
//! pgbench, psycopg, node-postgres, a Django project's test suite). Needs
//! `ISOPREDICT_POSTGRES_URL` and the clients: a missing one fails the test under CI and is a
//! noted skip elsewhere (tests/common/postgres.rs).
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

#[path = "../common/mod.rs"]
mod common;

mod app_reproduce;
mod app_test;
mod backend;
mod client_sql;
mod django;
mod jdbc;
mod observed;
mod reproduce;
mod server;
mod unix_socket;
