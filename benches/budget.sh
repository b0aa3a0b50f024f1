#!/usr/bin/env bash
# What `--budget KEY` adds to a run: `retry -- true` against `retry --budget K ... -- true`
# with the file store in a directory under TMPDIR (the default store's fallback place), in
# /dev/shm (a tmpfs, as $XDG_RUNTIME_DIR, the default store's first choice, is), with a
# local redis-server that this script starts on a free loopback port and stops, and with a
# Redis URL whose port nobody listens on (a server that is down: one warning, fail open).
#
# Paired and alternating: every round runs each command once, in a new random order, timing
# spawn to reap (Python's os.posix_spawn and os.waitpid, perf_counter_ns); the difference to
# the plain run is taken within each round and the median of those differences reported, so
# that a slow moment of the shared machine weighs on both sides alike. A budgeted `true` reads
# the KEY's state (no lock: nothing changes), then records the success (a locked write, or a
# WATCH/MULTI/EXEC round trip with Redis).
#
# Goals (the issue's): at most 1 ms added with the file store, at most 2 ms with Redis, and
# for a server that is down well under a second; exits 1 if a median difference is over its
# goal.
#
# Usage: benches/budget.sh          (builds the release binary first)
# ROUNDS (default 1000) rounds after WARMUP (default 50). Needs python3 and redis-server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-1000}
WARMUP=${WARMUP:-50}

command -v redis-server >/dev/null || { echo "budget.sh: needs redis-server" >&2; exit 2; }
cargo build --release -q --bin retry
bin=$PWD/target/release/retry

work=$(mktemp -d)
shm=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
down=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --loglevel warning --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
cleanup() {
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    rm -rf "$work" "$shm"
}
trap cleanup EXIT
for _ in $(seq 200); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null && break
    sleep 0.05
done

echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
echo "# $(redis-server --version | cut -d' ' -f1-3); TMPDIR store on $(df -T "$work" | awk 'NR == 2 { print $2 }'), /dev/shm on $(df -T "$shm" | awk 'NR == 2 { print $2 }')"
echo "# $ROUNDS rounds after $WARMUP, order shuffled in each"

python3 - "$ROUNDS" "$WARMUP" "$bin" "$work/store" "$shm/store" "redis://127.0.0.1:$port" \
    "redis://127.0.0.1:$down" <<'EOF'
import os, random, statistics, sys, time

rounds, warmup = int(sys.argv[1]), int(sys.argv[2])
bin, tmp_store, shm_store, redis_url, down_url = sys.argv[3:8]
budget = [bin, "--budget", "bench", "--budget-store"]
commands = {
    "plain": [bin, "--", "true"],
    "file": budget + [tmp_store, "--", "true"],
    "shm": budget + [shm_store, "--", "true"],
    "redis": budget + [redis_url, "--", "true"],
    "down": budget + [down_url, "--", "true"],
}
labels = {
    "plain": "retry -- true",
    "file": "--budget, file store (TMPDIR)",
    "shm": "--budget, file store (/dev/shm)",
    "redis": "--budget, local Redis",
    "down": "--budget, Redis down (fails open)",
}
goals_ms = {"file": 1.0, "shm": 1.0, "redis": 2.0, "down": 100.0}
env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
devnull = os.open(os.devnull, os.O_WRONLY)

warnings = {k: [] for k in commands}

def run(name):
    argv = commands[name]
    t0 = time.perf_counter_ns()
    # stderr to /dev/null would hide a warning (a store that failed open): it goes to a pipe,
    # and a run that warned is counted (and left out of the medians).
    r, w = os.pipe()
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, w, 2)]
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    os.close(w)
    err = b""
    while chunk := os.read(r, 4096):
        err += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter_ns()
    if status != 0:
        sys.exit(f"budget.sh: {' '.join(argv)}: wait status {status}, stderr {err!r}")
    text = err.decode(errors="replace")
    # A server that is down: exactly one warning is the expected outcome.
    expected = name == "down" and text.count("\n") == 1 and text.startswith("retry: warning: ")
    if err and not expected:
        warnings[name].append(text.strip())
        return None
    if name == "down" and not expected:
        sys.exit(f"budget.sh: no warning from {' '.join(argv)}")
    return t1 - t0

times = {k: [] for k in commands}
names = list(commands)
for i in range(warmup + rounds):
    random.shuffle(names)
    sample = {k: run(k) for k in names}
    if i >= warmup and None not in sample.values():
        for k, v in sample.items():
            times[k].append(v)

for k, w in warnings.items():
    if w:
        print(f"# {labels[k]}: {len(w)} run(s) failed open and were left out, e.g. {w[0]}")
print(f"# {len(times['plain'])} complete rounds")
print(f"{'command':34} {'median (ms)':>12}")
for k in commands:
    print(f"{labels[k]:34} {statistics.median(times[k]) / 1e6:12.3f}")
print()
print(f"{'added by --budget (median of per-round differences)':54} {'ms':>7} {'goal':>6}")
over = False
for k, goal in goals_ms.items():
    d = statistics.median(x - y for x, y in zip(times[k], times["plain"])) / 1e6
    mark = "ok" if d <= goal else "OVER"
    over |= d > goal
    print(f"{labels[k]:54} {d:7.3f} {goal:6.1f} {mark}")
sys.exit(1 if over else 0)
EOF
