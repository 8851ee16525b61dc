#!/usr/bin/env bash
# Side-by-side benchmark: isopredict and AWDIT (Møldrup & Pavlogiannis, PLDI'25; the
# lassemoldrup/AWDIT repository) at rc, ra and cc on histories written by AWDIT's own
# generator with its defaults (issue 23, item 2): wall time, CPU time, peak memory, verdict,
# and the ratio isopredict / AWDIT.
# A benchmark, not a test: AWDIT is no dependency of isopredict and is not on crates.io. Build it
# yourself in a directory of its own (AWDIT_ROOT, holding its Cargo.toml and src/; its code stays
# out of this repository); the script builds it there with `cargo build --release` if the
# binary is missing.
#
#   AWDIT_ROOT=/path/to/awdit scripts/bench-awdit.sh          # measure, print the table
#   AWDIT_ROOT=/path/to/awdit scripts/bench-awdit.sh --docs   # ... and write it into docs/performance.md
#
# Environment: AWDIT_ROOT (required), BENCH_DIR (generated histories and results; default
# target/bench-awdit), SIZES (events of the histories measured against AWDIT; default
# "1000000 5000000"), OURS_SIZES (events of the histories measured with isopredict only; default
# "10000000"), LEVELS (default "rc ra cc"), RUNS (runs per tool, level and history, alternating
# the tools; the median is reported; default 3), CAUSAL_MAX (histories up to this many events
# are generated causally consistent, larger ones read-atomic: AWDIT's causal generator keeps
# a clock of every session for every transaction, 9 GB at 5e6 events; default 1000000), ISO
# (the isopredict binary; default target/release/isopredict, built), TIMEOUT (seconds per run;
# default 600), AWDIT_STACK_MB (the stack of AWDIT's checking thread, its `-s` option; default
# 1024: its own default, 32 MiB, overflows in its recursive cycle search on a 5e6-event history
# that violates cc, and AWDIT aborts).
#
# Generator settings: `awdit generate -e N -l N/10 -i causal|read-atomic`, everything else at
# AWDIT's defaults (sqrt(N) sessions, 80 % reads, mean transaction size 5, Pareto keys with
# alpha 1.16); 10 keys per 100 events gives the 420,000 keys of issue 23's 5e6-event file. The
# generator draws from an unseeded random source: a history is generated once and kept in
# BENCH_DIR, and both tools read the same file.
set -euo pipefail

name=awdit
# shellcheck source=scripts/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
awdit_root="${AWDIT_ROOT:?set AWDIT_ROOT to the directory of the AWDIT crate (its Cargo.toml)}"
bench="${BENCH_DIR:-$repo/target/bench-awdit}"
sizes="${SIZES:-1000000 5000000}"
ours_sizes="${OURS_SIZES:-10000000}"
levels="${LEVELS:-rc ra cc}"
runs="${RUNS:-3}"
causal_max="${CAUSAL_MAX:-1000000}"
timeout_s="${TIMEOUT:-600}"
awdit_stack="${AWDIT_STACK_MB:-1024}"

awdit="$awdit_root/target/release/awdit"
if [[ ! -x "$awdit" ]]; then
    echo "building AWDIT in $awdit_root" >&2
    (cd "$awdit_root" && cargo build --release --quiet) >&2
fi
if [[ -n "${ISO:-}" ]]; then
    iso="$ISO"
else
    (cd "$repo" && cargo build --release --quiet)
    iso="$repo/target/release/isopredict"
fi
mkdir -p "$bench/gen" "$bench/runs"

awdit_level() {
    case "$1" in
        rc) echo read-committed ;;
        ra) echo read-atomic ;;
        cc) echo causal ;;
        *) echo "no AWDIT level for $1" >&2; exit 2 ;;
    esac
}
iso_verdict() { case "$1" in 0) echo ok ;; 1) echo V ;; 3) echo unknown ;; 124 | 137) echo timeout ;; *) echo "error($1)" ;; esac; }
awdit_verdict() { case "$1" in 0) echo ok ;; 1) echo V ;; 124 | 137) echo timeout ;; *) echo "error($1)" ;; esac; }

# A generated history of N events (AWDIT's plume directory); prints its history.txt.
history_of() {
    local n="$1" gen_level=causal
    ((n > causal_max)) && gen_level=read-atomic
    local dir="$bench/gen/awdit-$gen_level-$n"
    if [[ ! -s "$dir/history.txt" ]]; then
        echo "generating $dir" >&2
        rm -rf "$dir"
        "$awdit" generate -e "$n" -l "$((n / 10))" -i "$gen_level" "$dir" >&2
    fi
    echo "$dir/history.txt"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
max_of() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -n1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "—" }'; }

# One run of one tool; prints "verdict wall cpu rss".
one_run() {
    local tool="$1" level="$2" f="$3" code wall cpu rss
    if [[ "$tool" == iso ]]; then
        read -r code wall cpu rss < <(measure "$iso" check --level "$level" --timeout "$timeout_s" "$f")
        echo "$(iso_verdict "$code") $wall $cpu $rss"
    else
        read -r code wall cpu rss < <(measure timeout "$timeout_s" "$awdit" check \
            -i "$(awdit_level "$level")" -s "$awdit_stack" "$(dirname "$f")")
        echo "$(awdit_verdict "$code") $wall $cpu $rss"
    fi
}
verdicts() { tr ' ' '\n' | grep -v '^$' | sort -u | paste -sd/; }

table="$bench/table.md"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "| events | sessions | keys | generated | level | isopredict wall | CPU | peak RSS | verdict | AWDIT wall | CPU | peak RSS | verdict | ratio wall | ratio CPU |"
    echo "|---:|---:|---:|---|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|"
} >"$table"
for n in $sizes $ours_sizes; do
    f=$(history_of "$n")
    gen_level=$(basename "$(dirname "$f")")
    gen_level=${gen_level#awdit-}
    gen_level=${gen_level%-"$n"}
    sessions=$(cut -d, -f3 "$f" | sort -u | wc -l)
    keys=$(cut -d'(' -f2 "$f" | cut -d, -f1 | sort -u | wc -l)
    with_awdit=0
    [[ " $sizes " == *" $n "* ]] && with_awdit=1
    for level in $levels; do
        tools=iso
        ((with_awdit)) && tools="iso awdit"
        declare -A w=() c=() r=() v=()
        # The tools alternate run by run, so that a change of load hits both.
        for _ in $(seq "$runs"); do
            for tool in $tools; do
                read -r verdict wall cpu rss < <(one_run "$tool" "$level" "$f")
                w[$tool]+="$wall " c[$tool]+="$cpu " r[$tool]+="$rss " v[$tool]+="$verdict "
            done
        done
        iw=$(echo "${w[iso]}" | median) ic=$(echo "${c[iso]}" | median)
        ir=$(echo "${r[iso]}" | max_of) iv=$(echo "${v[iso]}" | verdicts)
        if ((with_awdit)); then
            aw=$(echo "${w[awdit]}" | median) ac=$(echo "${c[awdit]}" | median)
            ar=$(echo "${r[awdit]}" | max_of) av=$(echo "${v[awdit]}" | verdicts)
            echo "| $n | $sessions | $keys | $gen_level | $level | ${iw} s | ${ic} s | $(human_kb "$ir") | $iv | ${aw} s | ${ac} s | $(human_kb "$ar") | $av | $(ratio "$iw" "$aw") | $(ratio "$ic" "$ac") |" >>"$table"
            echo "$n $level: isopredict $iv ${iw} s wall ${ic} s CPU, AWDIT $av ${aw} s wall ${ac} s CPU" >&2
        else
            echo "| $n | $sessions | $keys | $gen_level | $level | ${iw} s | ${ic} s | $(human_kb "$ir") | $iv | (not run) | | | | | |" >>"$table"
            echo "$n $level: isopredict $iv ${iw} s wall ${ic} s CPU $(human_kb "$ir")" >&2
        fi
        unset w c r v
    done
done
{
    echo
    echo "Medians of $runs runs (the tools alternating); CPU = user + system; ratio = isopredict / AWDIT; AWDIT checks with \`-s $awdit_stack\` (MiB of stack) and its default report mode."
    echo "Load average (1, 5, 15 min) at the start: $load_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores."
} >>"$table"
cat "$table"

write_docs_table "$table"
