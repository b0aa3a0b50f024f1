#!/usr/bin/env bash
# How accurately retry waits: the excess of each gap between consecutive attempts over the
# planned delay (gap - delay), with --jitter none and --multiplier 1 so every delay is known.
#
# Each attempt is `sh -c 'date +%s%N >> FILE; exit 1'`, so a gap also holds one start-up of
# sh and date. That start-up is measured on its own (the same command run back to back by a
# shell loop, and by retry with a zero delay) to tell it apart from retry's own lateness.
# When python3 is there, a reference loop runs the same command with the same pauses
# (subprocess.run, then time.sleep(delay)): a start-up after an idle pause is slower than
# back to back (cold caches, idle CPU), and the reference row shows how much; retry's own
# lateness is the difference between its row and the reference row.
#
# Usage: benches/wait_accuracy.sh        (builds target/release/retry first)
# Prints min / median / p95 / max in milliseconds, one row per case.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --release -q
RETRY=./target/release/retry # ours, by path: never the Debian package's /usr/bin/retry

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# stats FILE: min, median, p95 (nearest rank) and max of the numbers in FILE (ms, one a line).
stats() {
    sort -g "$1" | awk '
        { v[NR] = $1 }
        END {
            if (NR == 0) { print "no data"; exit 1 }
            med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            r = int(0.95 * NR); if (r < 0.95 * NR) r++
            printf "%5d %9.3f %9.3f %9.3f %9.3f\n", NR, v[1], med, v[r], v[NR]
        }'
}

# gaps STAMPS DELAY_MS: each gap between consecutive nanosecond stamps, minus DELAY_MS, in ms.
gaps() {
    awk -v d="$2" 'NR > 1 { printf "%.3f\n", ($1 - prev) / 1e6 - d } { prev = $1 }' "$1"
}

row() { printf '%-34s ' "$1"; stats "$2"; }

echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
printf '%-34s %5s %9s %9s %9s %9s\n' "case (excess over delay, ms)" n min median p95 max

# reference STAMPS DELAY_MS COUNT: python3 runs the attempt command COUNT times, sleeping
# DELAY_MS between runs.
reference() {
    python3 - "$1" "$2" "$3" <<'PY'
import subprocess, sys, time
stamps, delay, count = sys.argv[1], float(sys.argv[2]) / 1000, int(sys.argv[3])
for i in range(count):
    subprocess.run(["sh", "-c", f"date +%s%N >> {stamps}; exit 1"])
    if i + 1 < count:
        time.sleep(delay)
PY
}
have_python=$(command -v python3 || true)

# Bare start-up: a shell loop running the same attempt command back to back, no delay.
stamps=$work/bare
for _ in $(seq 0 40); do sh -c "date +%s%N >> $stamps"; done
gaps "$stamps" 0 >"$work/bare.ms"
row "sh+date back to back (no retry)" "$work/bare.ms"
if [ -n "$have_python" ]; then
    reference "$work/ref0" 0 41
    gaps "$work/ref0" 0 >"$work/ref0.ms"
    row "  reference, python3, no pause" "$work/ref0.ms"
fi

# retry with a zero delay: start-up plus retry's own work between attempts.
stamps=$work/zero
"$RETRY" -q --jitter none -b 0 -m 1 -n 40 -- sh -c "date +%s%N >> $stamps; exit 1" || true
gaps "$stamps" 0 >"$work/zero.ms"
row "retry -b 0" "$work/zero.ms"

# Real delays: retries chosen so each case takes about 2 to 20 s.
for spec in 50:40 200:20 1000:20; do
    delay_ms=${spec%%:*}
    retries=${spec##*:}
    stamps=$work/d$delay_ms
    "$RETRY" -q --jitter none -b "${delay_ms}ms" -m 1 -n "$retries" \
        -- sh -c "date +%s%N >> $stamps; exit 1" || true
    gaps "$stamps" "$delay_ms" >"$work/d$delay_ms.ms"
    row "retry -b ${delay_ms}ms (gap - ${delay_ms} ms)" "$work/d$delay_ms.ms"
    if [ -n "$have_python" ]; then
        reference "$work/ref$delay_ms" "$delay_ms" $((retries + 1))
        gaps "$work/ref$delay_ms" "$delay_ms" >"$work/ref$delay_ms.ms"
        row "  reference, python3 sleep ${delay_ms}ms" "$work/ref$delay_ms.ms"
    fi
done
