# Shared by the side-by-side benchmarks (scripts/bench-awdit.sh, scripts/bench-adya.sh):
# sourced by them, not run. Each script sets `name` (its table's marker in
# docs/performance.md: `<!-- bench-NAME:begin -->` … `<!-- bench-NAME:end -->`) before
# sourcing this file with its arguments, and `bench` (its working folder) and `timeout_s`
# (seconds per run) before calling `measure`.
#
# Arguments: none (measure, print the table) or `--docs` (... and write it into
# docs/performance.md); anything else is a usage error (exit 2).

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
docs=0
case "$#:${1:-}" in
    0:) ;;
    1:--docs) docs=1 ;;
    *)
        echo "usage: scripts/bench-$name.sh [--docs]  (the environment variables are in its header)" >&2
        exit 2
        ;;
esac

# Runs a command under /usr/bin/time, its output into $bench/runs/; prints "exit wall_s cpu_s
# rss_kb" (cpu = user + system).
measure() {
    local t="$bench/runs/time.txt" code=0 wall user sys rss
    /usr/bin/time -f "%e %U %S %M" -o "$t" timeout "$((timeout_s + 30))" "$@" \
        >"$bench/runs/out.txt" 2>"$bench/runs/err.txt" || code=$?
    read -r wall user sys rss < <(tail -n1 "$t")
    echo "$code $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') $rss"
}

# Kilobytes in words: `3.36 GB`, `120 MB`, `512 KB`.
human_kb() { awk -v k="$1" 'BEGIN { if (k >= 1048576) printf "%.2f GB", k/1048576; else if (k >= 1024) printf "%.0f MB", k/1024; else printf "%d KB", k }'; }

# With --docs: the table in file $1 replaces what stands between the script's markers in
# docs/performance.md (atomically), with the commit measured (no date: the docs' git history has it).
write_docs_table() {
    [[ $docs == 1 ]] || return 0
    local table="$1" doc="$repo/docs/performance.md" tmp
    local begin="<!-- bench-$name:begin -->" end="<!-- bench-$name:end -->"
    grep -q "$begin" "$doc" || { echo "no $begin marker in $doc" >&2; exit 2; }
    tmp="$(mktemp "$doc.XXXXXX")"
    awk -v b="$begin" -v e="$end" -v t="$table" -v script="scripts/bench-$name.sh --docs" \
        -v when="at $(cd "$repo" && git rev-parse --short HEAD)" '
        $0 == b { print; print ""; print "Measured " when " (`" script "`):"; print ""; while ((getline l < t) > 0) print l; print ""; skip = 1; next }
        $0 == e { skip = 0 }
        !skip { print }' "$doc" >"$tmp"
    mv "$tmp" "$doc"
    echo "wrote the table into $doc" >&2
}
