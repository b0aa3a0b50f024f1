#!/usr/bin/env bash
# Fuzzes the DURATION and CODES parsers with cargo-fuzz (libFuzzer), each for a fixed time,
# and prints the executions and findings of each run.
#
# Usage: fuzz/run.sh [SECONDS per target, default 300]
# Needs a nightly toolchain (`rustup toolchain list`) and cargo-fuzz (`cargo install cargo-fuzz`).
# The corpus starts from fuzz/seeds/ and grows in fuzz/corpus/ (not committed); a crash is
# saved under fuzz/artifacts/TARGET/ with the input that caused it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
secs=${1:-300}
status=0
for target in duration codes; do
    mkdir -p "corpus/$target"
    cp -n "seeds/$target"/* "corpus/$target/" 2>/dev/null || true
    log=$(mktemp)
    echo "== $target: ${secs}s"
    if cargo +nightly fuzz run "$target" "corpus/$target" -- \
        -max_total_time="$secs" -max_len=256 -timeout=5 -print_final_stats=1 >"$log" 2>&1; then
        result="no crash"
    elif grep -q "Test unit written" "$log"; then
        result="CRASH (see fuzz/artifacts/$target/)"
        status=1
        grep -E "panicked|ERROR|Test unit written|Base64" "$log" >&2 || true
    else
        result="FAILED to run"
        status=1
        tail -20 "$log" >&2
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1 || true)
    echo "$target: $result; executions ${execs:-?} (${speed:-?}/s); last status: ${cov:-?}"
    rm -f "$log"
done
exit "$status"
