#!/usr/bin/env bash
# Times the full `occ` sweep of `retry --simulate` (the AWS blog's experiment: 10, 20 ... 190
# clients x the 5 jitter modes x 100 runs, base 5 ms, cap 2 s) through the library API, and
# fails if it takes longer than the budget (default 10 s; the target machine has 2 cores).
#
#   benches/simulate.sh                      # the sweep, on every core
#   benches/simulate.sh --threads 1          # on one thread
#   benches/simulate.sh --modes none,full,equal,decorrelated,additive,no-backoff
#   SIMULATE_BUDGET_SECS=5 benches/simulate.sh --plot /tmp/occ.svg
#
# Arguments go to crates/simulate/examples/simulate_sweep.rs. Recorded on the project's machine
# (2 cores, Intel Xeon VM, release build): 1.2 s for the 5 jitter modes on 2 threads, 2.4 s on
# 1 thread; 1.6 s with no-backoff added (6 modes).
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${SIMULATE_BUDGET_SECS:-10}"

cargo build --quiet --release -p retry-tool-simulate --example simulate_sweep
out="$(cargo run --quiet --release -p retry-tool-simulate --example simulate_sweep -- "$@")"
printf '%s\n' "$out"

# The first line ends with the sweep's own time: "...: 1.28 s".
secs="$(printf '%s\n' "$out" | head -n 1 | sed -E 's/.*: ([0-9.]+) s$/\1/')"
if awk -v s="$secs" -v b="$budget" 'BEGIN { exit !(s > b) }'; then
    echo "simulate sweep: ${secs} s, over the budget of ${budget} s" >&2
    exit 1
fi
echo "simulate sweep: ${secs} s (budget ${budget} s)"
