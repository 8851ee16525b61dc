#!/bin/bash
# A tiny application for `isopredict test` (tests/app_test.rs, docs/testing-apps.md): alice
# and bob, each on its own psql connection, both open before either starts, run the SQL script
# $1 at once against one account (balance 100, set up by setup.sql). With $2, the test passes
# only if the later of the balances the two scripts print at their end is $2.
# psql comes from PATH; the connection from PGHOST, PGPORT, … (set by isopredict).
set -e
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# APP_NO_SETUP=1: the tables are loaded by `isopredict test --setup` instead.
[ -n "$APP_NO_SETUP" ] || PGAPPNAME=setup psql -q -X -v ON_ERROR_STOP=1 -f "$here/setup.sql"
mkfifo "$work/alice.in" "$work/bob.in"
PGAPPNAME=alice psql -q -X -v ON_ERROR_STOP=1 < "$work/alice.in" > "$work/alice.out" &
a=$!
PGAPPNAME=bob psql -q -X -v ON_ERROR_STOP=1 < "$work/bob.in" > "$work/bob.out" &
b=$!
exec 3> "$work/alice.in" 4> "$work/bob.in"
# Each connection says it is open (psql runs `\!` after connecting); the scripts start when
# both are, so neither connection opens after the other has closed.
echo "\\! touch $work/alice.ready" >&3
echo "\\! touch $work/bob.ready" >&4
until [ -e "$work/alice.ready" ] && [ -e "$work/bob.ready" ]; do sleep 0.05; done
cat "$here/$1" >&3; exec 3>&-
cat "$here/$1" >&4; exec 4>&-
wait $a; wait $b
[ -n "$2" ] || exit 0
best=$(sort -n "$work/alice.out" "$work/bob.out" | tail -1)
[ "$best" = "$2" ] || { echo "lost update: balance $best, expected $2"; exit 1; }
