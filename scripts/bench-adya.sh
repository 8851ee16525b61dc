#!/usr/bin/env bash
# Side-by-side benchmark: isopredict and `adya` (crates.io, a Rust re-implementation of Jepsen's
# Elle) on the same Elle histories — wall time, peak memory and verdict (issue 20, item 6).
# A benchmark, not a test: adya is no dependency of isopredict. It is installed with cargo into
# a directory of its own (network to crates.io), once.
#
#   scripts/bench-adya.sh            # measure, print the table
#   scripts/bench-adya.sh --docs     # ... and write it into docs/performance.md
#
# Environment: ADYA_ROOT (where adya is installed; default target/adya-bench), BENCH_DIR
# (generated histories and results; default target/bench-adya), SIZES (transactions of the
# generated list-append histories; default "1000 10000 100000"), LEVELS (isopredict levels
# compared; default "si ser"), TIMEOUT (seconds per run; default 300; isopredict gets it as
# --timeout and answers unknown, adya is stopped by `timeout`).
#
# Histories: Elle's and elle-cli's test cases (tests/data/peers/elle, elle-cli), the format
# samples (tests/data/formats/elle*), and list-append histories written by adya's own simulated
# database (`adya run sim`, 8 clients, seed 1): serializable ones (valid) and snapshot-isolation
# ones (write skews), of SIZES transactions. isopredict has no list-append generator.
set -euo pipefail

name=adya
# shellcheck source=scripts/bench-common.sh
source "$(dirname "$0")/bench-common.sh"
adya_root="${ADYA_ROOT:-$repo/target/adya-bench}"
bench="${BENCH_DIR:-$repo/target/bench-adya}"
sizes="${SIZES:-1000 10000 100000}"
levels="${LEVELS:-si ser}"
timeout_s="${TIMEOUT:-300}"

adya="$adya_root/bin/adya"
if [[ ! -x "$adya" ]]; then
    echo "installing adya 0.1.0 into $adya_root (checker only, no database drivers)" >&2
    cargo install adya --version 0.1.0 --locked --no-default-features --root "$adya_root" >&2
fi
(cd "$repo" && cargo build --release --quiet)
iso="$repo/target/release/isopredict"
mkdir -p "$bench/gen" "$bench/runs"

# Generated list-append histories.
for n in $sizes; do
    for iso_level in serializable snapshot-isolation; do
        f="$bench/gen/sim-$iso_level-$n.jsonl"
        if [[ ! -s "$f" ]]; then
            (cd "$bench/gen" && "$adya" run sim -i "$iso_level" -n "$n" -p 8 --seed 1 \
                --out "$f" >/dev/null) || true
        fi
    done
done

files=()
for f in "$repo"/tests/data/peers/elle/*.edn "$repo"/tests/data/peers/elle-cli/* \
    "$repo"/tests/data/formats/elle*; do
    files+=("$f")
done
for n in $sizes; do
    for iso_level in serializable snapshot-isolation; do
        files+=("$bench/gen/sim-$iso_level-$n.jsonl")
    done
done

adya_model() { # isopredict level -> adya's consistency model
    case "$1" in
        si) echo snapshot-isolation ;;
        ser) echo serializable ;;
        strict-ser) echo strict-serializable ;;
        *) echo "no adya model for level $1" >&2; exit 2 ;;
    esac
}
iso_verdict() { case "$1" in 0) echo ok ;; 1) echo V ;; 3) echo unknown ;; *) echo "error($1)" ;; esac; }
adya_verdict() { case "$1" in 0) echo ok ;; 1) echo V ;; 2) echo unknown ;; 124) echo timeout ;; *) echo "error($1)" ;; esac; }


table="$bench/table.md"
{
    echo "| history | txns | size | level | isopredict | | | adya | | | same verdict |"
    echo "|---|---:|---:|---|---:|---:|---|---:|---:|---|---|"
    echo "| | | | | wall | peak RSS | verdict | wall | peak RSS | verdict | |"
} >"$table"
total_iso=0
total_adya=0
agree=0
runs=0
mkdir -p "$bench/inputs"
for src in "${files[@]}"; do
    [[ -s "$src" ]] || continue
    name="${src#"$repo"/}"
    name="${name#"$bench"/}"
    # adya reads no EDN comments: both tools get the history without its comment lines.
    f="$src"
    if grep -q '^;' "$src"; then
        f="$bench/inputs/$(basename "$src")"
        grep -v '^;' "$src" >"$f"
    fi
    txns=$(grep -cE '(:type :(ok|fail|info))|("type" *: *"(ok|fail|info)")' "$f" || true)
    size=$(human_kb "$(( $(stat -c %s "$f") / 1024 ))")
    model=list-append
    grep -q append "$f" || model=rw-register
    for level in $levels; do
        read -r ic iw _ im < <(measure "$iso" check --level "$level" --timeout "$timeout_s" "$f")
        read -r ac aw _ am < <(measure timeout "$timeout_s" "$adya" check -m "$model" \
            -c "$(adya_model "$level")" "$f")
        iv=$(iso_verdict "$ic")
        av=$(adya_verdict "$ac")
        same=no
        [[ "$iv" == "$av" ]] && same=yes && agree=$((agree + 1))
        runs=$((runs + 1))
        total_iso=$(awk -v a="$total_iso" -v b="$iw" 'BEGIN { print a + b }')
        total_adya=$(awk -v a="$total_adya" -v b="$aw" 'BEGIN { print a + b }')
        echo "| $name | $txns | $size | $level | ${iw} s | $(human_kb "$im") | $iv | ${aw} s | $(human_kb "$am") | $av | $same |" >>"$table"
        echo "$name $level: isopredict $iv ${iw}s, adya $av ${aw}s" >&2
    done
done
{
    echo
    echo "Total wall time: isopredict ${total_iso} s, adya ${total_adya} s; same verdict on $agree of $runs runs."
} >>"$table"
cat "$table"

write_docs_table "$table"
