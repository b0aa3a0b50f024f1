#!/usr/bin/env bash
# Start-up cost of a wrapper around a command that succeeds at once: ours (`retry -- true`)
# against coreutils `timeout 10 true`, the Debian package `retry` (minfrin's, /usr/bin/retry)
# and bare `true`.
#
# Wall time: hyperfine (no shell, warmup, many runs), median and mean.
# Memory: peak RSS from `/usr/bin/time -v` ("Maximum resident set size", the largest of the
# wrapper and `true`), median of RUNS runs.
#
# Usage: benches/startup.sh              (builds target/release/retry first)
# Needs hyperfine, GNU time and the Debian `retry` package; installs them with apt-get when
# missing (as root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

RUNS=${RUNS:-50}           # /usr/bin/time runs per command
HF_RUNS=${HF_RUNS:-1000}   # hyperfine runs per command

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
[ -x /usr/bin/time ] || missing+=(time)
[ -x /usr/bin/retry ] || missing+=(retry)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi

cargo build --release -q
# Ours is always called by path; /usr/bin/retry is the Debian package.
commands=(
    "true"
    "./target/release/retry -- true"
    "timeout 10 true"
    "/usr/bin/retry -- true"
)
labels=(
    "true (bare)"
    "retry -- true (ours)"
    "timeout 10 true (coreutils)"
    "retry -- true (Debian $(dpkg-query -W -f='${Version}' retry 2>/dev/null || echo '?'))"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every command must succeed, or the figures mean nothing.
for c in "${commands[@]}"; do
    # shellcheck disable=SC2086 # word splitting of the command line is intended
    $c || { echo "startup.sh: '$c' failed" >&2; exit 1; }
done

# hyperfine's outlier warnings go to a file; shown only if it fails.
if ! hyperfine -N --warmup 50 --runs "$HF_RUNS" --style none \
    --export-csv "$work/hf.csv" "${commands[@]}" >/dev/null 2>"$work/hf.err"; then
    cat "$work/hf.err" >&2
    exit 1
fi

# peak_rss COMMAND: median of RUNS peak RSS readings, in KiB.
peak_rss() {
    for _ in $(seq "$RUNS"); do
        # shellcheck disable=SC2086
        /usr/bin/time -v $1 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ { print $2 + 0 }'
    done | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
echo "# wall: hyperfine -N, warmup 50, $HF_RUNS runs; peak RSS: /usr/bin/time -v, median of $RUNS runs"
printf '%-32s %12s %12s %14s\n' command "median (ms)" "mean (ms)" "peak RSS (KiB)"
for i in "${!commands[@]}"; do
    # hyperfine's CSV: command,mean,stddev,median,user,system,min,max (seconds).
    read -r mean median < <(awk -F, -v c="${commands[$i]}" '$1 == c { print $2, $4 }' "$work/hf.csv")
    printf '%-32s %12.2f %12.2f %14s\n' "${labels[$i]}" \
        "$(awk -v s="$median" 'BEGIN { print s * 1000 }')" \
        "$(awk -v s="$mean" 'BEGIN { print s * 1000 }')" \
        "$(peak_rss "${commands[$i]}")"
done
