#!/usr/bin/env bash
# Pipeline throughput and memory: 1 GiB through `cat`, `retry -- cat`, `retry --replay-stdin --
# cat`, `retry --stdout-on-success -- cat`, `retry --retry-if-output ... -- cat` and `retry
# --http-hints --idle-timeout 1m -- cat`, each fed by `head -c 1G /dev/zero` through a pipe,
# output to /dev/null; the last also with 1 GiB of 80-byte text lines (every line read for
# headers); and peak RSS of retry with 1 GiB of stdin replayed, and with 1 GiB of output read
# for hints. Run by hand (not by CI): bash benches/pipeline.sh [RUNS]
#        BASELINE=REV bash benches/pipeline.sh [RUNS]
# With BASELINE (a git revision, such as the commit before a change), that revision's release
# build (in a temporary worktree under target/, as benches/startup.sh makes it) is compared
# first, paired and alternating: each of RUNS rounds runs `retry -- cat` and `retry
# --stdout-on-success -- cat` of both builds on 1 GiB once each in a shuffled order; the report
# gives each one's median time and the median of the per-round ratios (this build / baseline).
# Needs hyperfine and GNU time (apt-get install -y hyperfine time).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
size=1G
cargo build --release -q
retry=$PWD/target/release/retry
if [ -n "${BASELINE:-}" ]; then
  rev=$(git rev-parse --verify "$BASELINE^{commit}")
  tree="target/baseline-$rev"
  [ -d "$tree" ] || git worktree add -q --detach "$tree" "$rev"
  (cd "$tree" && CARGO_TARGET_DIR="$PWD/target" cargo build --release -q --bin retry)
  echo "baseline: $(git log -1 --format='%h %s' "$rev" | cut -c1-80)"
  python3 - "$runs" "$size" "$retry" "$PWD/$tree/target/release/retry" <<'PY'
import random, statistics, subprocess, sys, time
runs, size, new, old = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
flags = {"retry -- cat": "", "retry --stdout-on-success -- cat": "--stdout-on-success "}
def once(binary, flag):
    cmd = f"head -c {size} /dev/zero | {binary} {flag}-- cat > /dev/null"
    t = time.perf_counter()
    subprocess.run(["sh", "-c", cmd], check=True)
    return time.perf_counter() - t
times = {(name, which): [] for name in flags for which in ("new", "old")}
for _ in range(runs):
    order = [(name, which) for name in flags for which in ("new", "old")]
    random.shuffle(order)
    for name, which in order:
        times[(name, which)].append(once(new if which == "new" else old, flags[name]))
print(f"{'paired, ' + str(runs) + ' rounds':40} {'this s':>8} {'base s':>8} {'ratio':>6}")
for name in flags:
    a, b = times[(name, "new")], times[(name, "old")]
    ratio = statistics.median(x / y for x, y in zip(a, b))
    print(f"{name:40} {statistics.median(a):8.3f} {statistics.median(b):8.3f} {ratio:6.3f}")
PY
  echo
fi
for tool in hyperfine /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y hyperfine time" >&2; exit 1; }
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "TMPDIR: ${TMPDIR:-/tmp} ($(df -h "${TMPDIR:-/tmp}" | awk 'NR==2 {print $1}'))"
# An 80-byte line (79 and the newline) that looks like a header but is none retry reads.
line="X-Request-Id: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"
json=$(mktemp)
trap 'rm -f "$json"' EXIT
hyperfine -N --warmup 1 --runs "$runs" --export-json "$json" \
  -n "cat" "sh -c 'head -c $size /dev/zero | cat > /dev/null'" \
  -n "retry -- cat" "sh -c 'head -c $size /dev/zero | $retry -- cat > /dev/null'" \
  -n "retry --replay-stdin -- cat" "sh -c 'head -c $size /dev/zero | $retry --replay-stdin -- cat > /dev/null'" \
  -n "retry --stdout-on-success -- cat" "sh -c 'head -c $size /dev/zero | $retry --stdout-on-success -- cat > /dev/null'" \
  -n "retry --retry-if-output x -- cat" "sh -c 'head -c $size /dev/zero | $retry --retry-if-output ^never$ -- cat > /dev/null'" \
  -n "retry --http-hints --idle-timeout 1m -- cat" "sh -c 'head -c $size /dev/zero | $retry --http-hints --idle-timeout 1m -- cat > /dev/null'" \
  -n "cat, text lines" "sh -c 'yes \"$line\" | head -c $size | cat > /dev/null'" \
  -n "retry --http-hints ..., text lines" "sh -c 'yes \"$line\" | head -c $size | $retry --http-hints --idle-timeout 1m -- cat > /dev/null'" \
  >/dev/null
python3 - "$json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base = results[0]["median"]
print(f"{'command':44} {'median s':>9} {'MiB/s':>8} {'vs cat':>7}")
for r in results:
    m = r["median"]
    # Each against bare cat on the same input.
    if r["command"] == "cat, text lines":
        base = m
    print(f"{r['command']:44} {m:9.3f} {1024 / m:8.0f} {base / m:7.0%}")
PY

echo
echo "peak RSS of retry, $size of stdin (median of 5 runs, KiB):"
for flags in "--replay-stdin" "--stdout-on-success" "--replay-stdin --stdout-on-success --retry-if-output ^never$" "--http-hints --idle-timeout 1m"; do
  for _ in 1 2 3 4 5; do
    head -c "$size" /dev/zero | /usr/bin/time -f '%M' "$retry" $flags -- cat 2>&1 >/dev/null | tail -1
  done | sort -n | sed -n 3p | xargs printf "  %-70s %s\n" "retry $flags -- cat"
done
for _ in 1 2 3 4 5; do
  # (yes ends by SIGPIPE, which pipefail would count as a failure.)
  { yes "$line" || true; } | head -c "$size" | /usr/bin/time -f '%M' "$retry" --http-hints --idle-timeout 1m -- cat 2>&1 >/dev/null | tail -1
done | sort -n | sed -n 3p | xargs printf "  %-70s %s\n" "retry --http-hints --idle-timeout 1m -- cat, text lines"
