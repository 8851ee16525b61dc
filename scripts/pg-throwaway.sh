#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for isopredict's tests, CI and experiments.
#
#   eval "$(scripts/pg-throwaway.sh start)"   # exports ISOPREDICT_POSTGRES_URL and ISOPREDICT_PG_DIR
#   ...                                      # tests use $ISOPREDICT_POSTGRES_URL
#   scripts/pg-throwaway.sh stop             # stops the cluster in $ISOPREDICT_PG_DIR, deletes it
#   scripts/pg-throwaway.sh run CMD ARGS...  # start, run CMD with the URL exported, always stop
#
# The cluster: initdb in a fresh temporary directory, a free port on 127.0.0.1 only, trust
# authentication for local and loopback connections only, fsync off (nothing is kept). As root
# it runs as the unprivileged user `nobody` (PostgreSQL refuses to run as root). Installs
# Debian's postgresql package with apt-get when no server binaries are found and we are root.
# Messages go to stderr; `start` prints only the export lines on stdout.
set -euo pipefail

log() { echo "pg-throwaway: $*" >&2; }

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return 0
  fi
  command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

ensure_installed() {
  if ! find_bindir >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing Debian's postgresql (apt-get)"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >&2
      apt-get install -y -qq postgresql >&2
    else
      log "no PostgreSQL server binaries (initdb) found; install postgresql"; exit 1
    fi
  fi
  find_bindir
}

# A port below the kernel's ephemeral range (where outgoing connections take theirs, so a port
# found free there can be taken before the server binds it), not listened on now.
free_port() {
  local port i low=20000 high
  high=$(( $(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768) - 1 ))
  [ "$high" -gt "$low" ] || high=32767
  for i in $(seq 1 200); do
    port=$(( low + (RANDOM * 32768 + RANDOM) % (high - low + 1) ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  log "no free port found"; return 1
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

start() {
  local bindir dir port
  bindir=$(ensure_installed)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/isopredict-pg.XXXXXX")
  [ "$(id -u)" = 0 ] && chown nobody "$dir"
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$dir/data/pg_hba.conf"
  [ "$(id -u)" = 0 ] && chown nobody "$dir/data/pg_hba.conf"
  # Another process may bind the port between the check and the server's start (tests start
  # private servers concurrently): then another port, a few times.
  local attempt
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" >&2; then
      break
    fi
    if [ "$attempt" = 5 ] || ! grep -q "Address already in use" "$dir/server.log" 2>/dev/null; then
      cat "$dir/server.log" >&2 || true; rm -rf "$dir"; exit 1
    fi
    log "port $port was taken before the server could bind it; trying another"
    : >"$dir/server.log"
  done
  log "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $dir)"
  echo "export ISOPREDICT_POSTGRES_URL='postgres://postgres@127.0.0.1:$port/postgres'"
  echo "export ISOPREDICT_PG_DIR='$dir'"
  echo "export ISOPREDICT_PG_BINDIR='$bindir'"
}

stop() {
  local dir=${1:-${ISOPREDICT_PG_DIR:-}}
  [ -n "$dir" ] && [ -d "$dir" ] || { log "nothing to stop"; return 0; }
  local bindir; bindir=$(find_bindir)
  as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  log "stopped and removed $dir"
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "${1:-}" ;;
  run)
    shift
    eval "$(start)"
    trap 'stop "$ISOPREDICT_PG_DIR"' EXIT
    "$@"
    ;;
  *) echo "usage: $0 start | stop [DIR] | run CMD [ARGS...]" >&2; exit 2 ;;
esac
