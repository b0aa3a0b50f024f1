#!/usr/bin/env bash
# Start-up of `retry -- true`: the default `cargo build --release` binary and the statically
# linked one (as dist/release.sh ships it), against each other, coreutils `timeout 10 true`,
# the Debian package `retry` (minfrin's, /usr/bin/retry) and bare `true`, each wrapping `true`.
#
# Paired and alternating: every round runs each command once, in a new random order, timing
# spawn to reap (Python's os.posix_spawn and os.waitpid, perf_counter_ns); the ratio of two
# commands is taken within each round and the median of those ratios reported, so that a
# slow moment of the shared machine weighs on both sides of a ratio alike. Also the median
# wall time of each command, and the peak RSS of the two builds of retry (`/usr/bin/time -v`,
# median of RSS_RUNS runs).
#
# Usage: benches/startup.sh          (builds both binaries first)
#        BASELINE=REV benches/startup.sh
# ROUNDS (default 1000) rounds after WARMUP (default 50); RSS_RUNS (default 30); ENV_VARS (default
# 0) variables of 64 bytes each beside PATH and LC_ALL in every command's environment (a CI job's
# has 100 or more: what a scan of the environment at start-up costs grows with it). With BASELINE
# (a git revision, such as the commit before a change), that revision's default release build
# (built in a temporary worktree under target/) joins the rounds as "baseline", and the report
# adds the paired ratio of this build to it and both peak RSS figures: the check that a change
# left start-up and memory as they were.
# Needs python3, GNU time and the Debian `retry` package; installs the last two with apt-get
# when missing (as root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-1000}
WARMUP=${WARMUP:-50}
RSS_RUNS=${RSS_RUNS:-30}
TARGET=x86_64-unknown-linux-gnu

missing=()
[ -x /usr/bin/time ] || missing+=(time)
[ -x /usr/bin/retry ] || missing+=(retry)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi

# The default build, and the static one exactly as dist/release.sh makes it.
cargo build --release -q --bin retry
RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static -C link-arg=-Wl,-z,pack-relative-relocs" CARGO_PROFILE_RELEASE_STRIP=symbols \
    cargo build --release -q --bin retry --target "$TARGET"
static="target/$TARGET/release/retry"
dynamic=target/release/retry
baseline=""
if [ -n "${BASELINE:-}" ]; then
    rev=$(git rev-parse --verify "$BASELINE^{commit}")
    tree="target/baseline-$rev"
    [ -d "$tree" ] || git worktree add -q --detach "$tree" "$rev"
    (cd "$tree" && CARGO_TARGET_DIR="$PWD/target" cargo build --release -q --bin retry)
    baseline="$tree/target/release/retry"
    echo "# baseline: $(git log -1 --format='%h %s' "$rev" | cut -c1-80)"
fi
case $(ldd "$static" 2>&1 || true) in
    *"statically linked"* | *"not a dynamic executable"*) ;;
    *) echo "startup.sh: $static is not static" >&2; exit 1 ;;
esac

# A freshly linked binary and one built an hour ago sit in the page cache differently (the
# size of the folios the kernel maps a fault around), which alone moves start-up and peak RSS
# by a few percent. As root, drop the cache and read every binary back the same way first, as
# an installed binary is read at its first run.
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then
    sync
    echo 3 > /proc/sys/vm/drop_caches
    cat "$static" "$dynamic" ${baseline:+"$baseline"} /usr/bin/retry "$(command -v timeout)" >/dev/null
    echo "# page cache dropped, binaries read back in"
fi
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
echo "# static: $static ($(stat -c %s "$static") bytes); default: $dynamic ($(stat -c %s "$dynamic") bytes)"
echo "# Debian retry $(dpkg-query -W -f='${Version}' retry); $ROUNDS rounds after $WARMUP, order shuffled in each"

echo "# environment: PATH, LC_ALL and ${ENV_VARS:-0} more variables of 64 bytes"

python3 - "$ROUNDS" "$WARMUP" "$static" "$dynamic" "$baseline" "${ENV_VARS:-0}" <<'EOF'
import os, random, statistics, sys, time

rounds, warmup = int(sys.argv[1]), int(sys.argv[2])
static, dynamic, baseline, env_vars = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
commands = {
    "static": [static, "--", "true"],
    "default": [dynamic, "--", "true"],
    "timeout": ["/usr/bin/timeout", "10", "true"],
    "debian": ["/usr/bin/retry", "--", "true"],
    "true": ["/bin/true"],
}
labels = {
    "static": "retry -- true (static)",
    "default": "retry -- true (default build)",
    "timeout": "timeout 10 true (coreutils)",
    "debian": "retry -- true (Debian)",
    "true": "true (bare)",
}
pairs = [("static", "default"), ("static", "timeout"), ("static", "debian"),
         ("default", "timeout"), ("default", "debian"), ("timeout", "debian")]
if baseline:
    commands["baseline"] = [baseline, "--", "true"]
    labels["baseline"] = "retry -- true (baseline build)"
    pairs.insert(0, ("default", "baseline"))
env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
env.update({f"BENCH_VARIABLE_{i:04}": "v" * (64 - len("BENCH_VARIABLE_0000=")) for i in range(env_vars)})

def run(argv):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env)
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter_ns()
    if status != 0:
        sys.exit(f"startup.sh: {' '.join(argv)} failed: wait status {status}")
    return t1 - t0

times = {k: [] for k in commands}
names = list(commands)
for i in range(warmup + rounds):
    random.shuffle(names)
    sample = {k: run(commands[k]) for k in names}
    if i >= warmup:
        for k, v in sample.items():
            times[k].append(v)

print(f"{'command':34} {'median (ms)':>12}")
for k in commands:
    print(f"{labels[k]:34} {statistics.median(times[k]) / 1e6:12.3f}")
print()
print(f"{'paired ratio (median of per-round ratios)':48} {'median':>7}")
for a, b in pairs:
    r = statistics.median(x / y for x, y in zip(times[a], times[b]))
    print(f"{labels[a] + ' / ' + b:48} {r:7.3f}")
EOF

# peak_rss COMMAND...: median of RSS_RUNS peak RSS readings, in KiB.
peak_rss() {
    for _ in $(seq "$RSS_RUNS"); do
        /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ { print $2 + 0 }'
    done | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
echo "peak RSS, median of $RSS_RUNS runs (KiB): static $(peak_rss "$static" -- true), default $(peak_rss "$dynamic" -- true), Debian retry $(peak_rss /usr/bin/retry -- true), timeout $(peak_rss timeout 10 true)"
if [ -n "$baseline" ]; then
    echo "peak RSS, median of $RSS_RUNS runs (KiB): baseline build $(peak_rss "$baseline" -- true)"
fi
