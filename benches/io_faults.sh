#!/usr/bin/env bash
# I/O faults through the release binary: each command of RELIABILITY.md's table "Faults: I/O and
# reporting", run once, with its status and retry's first line on stderr checked; then the time
# from a stop signal to retry's end while its output waits for a reader that does not read (10
# runs of each case: median and max). Fails (exit 1) on any mismatch or a time over
# --kill-after + 1 s.
#
# Usage: benches/io_faults.sh    (builds target/release/retry first)
# Needs bash, coreutils (head, yes, wc); python3 for the timed part (skipped without it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --release -q
bin=$PWD/target/release/retry
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
head -c 9437184 /dev/zero >"$work/9MiB"
failed=0

# check NAME WANT-STATUS WANT-TEXT COMMAND...: runs COMMAND (a shell line) with retry as $R,
# compares its status and looks for WANT-TEXT in the first `retry:` line on stderr (which may
# follow output without a final newline on the same line).
check() {
    local name=$1 want=$2 text=$3 line=$4 status first
    set +e
    R=$bin W=$work bash -c "$line" >"$work/out" 2>"$work/err"
    status=$?
    set -e
    first=$(grep -a -o 'retry: .*' "$work/err" | head -n 1 || true)
    if [[ $status == "$want" && $first == *"$text"* ]]; then
        printf '%-44s status %3s  %s\n' "$name" "$status" "${first:0:110}"
    else
        printf '%-44s status %3s (want %s)  %s  FAILED\n' "$name" "$status" "$want" "$first"
        failed=1
    fi
}

check "held stdout, full disk" 125 "No space left on device" \
    '$R --stdout-on-success -- echo hi >/dev/full'
check "matched stdout, full disk, attempt exits 3" 3 "No space left on device" \
    '$R --retry-if-output x -- sh -c "seq 1 300000; exit 3" >/dev/full'
check "matched stdout, full disk, attempt exits 0" 125 "No space left on device" \
    '$R --retry-if-output x -- seq 1 300000 >/dev/full'
check "replay, stdin unreadable (< /)" 125 "Is a directory" \
    '$R --replay-stdin -- cat </'
check "replay, TMPDIR missing" 125 "cannot create a temporary file in /nonexistent" \
    'TMPDIR=/nonexistent $R --replay-stdin -- wc -c <$W/9MiB'
check "replay, TMPDIR full (ulimit -f 512)" 125 "File too large" \
    'trap "" XFSZ; ulimit -f 512; TMPDIR=$W $R --replay-stdin -- wc -c <$W/9MiB'
check "replay, endless stdin past --max-replay" 125 "longer than --max-replay (1 MiB)" \
    'yes | $R --replay-stdin --max-replay 1MiB -- wc -c'
check "held stdout cannot spill (TMPDIR missing)" 125 "cannot hold the stdout of attempt 1" \
    'TMPDIR=/nonexistent $R --stdout-on-success -- cat $W/9MiB >$W/held2'
check "--dry-run, full disk" 125 "No space left on device" \
    '$R --dry-run >/dev/full'
check "--generate man, full disk" 125 "No space left on device" \
    '$R --generate man >/dev/full'
check "hint that is not seconds" 1 "is not a number of seconds" \
    '$R --delay-from-output "(?i)^retry-after: *(.+)" -b 0 -n 1 -- sh -c "echo \"retry-after: Wed, 21 Oct 2015 07:28:00 GMT\"; exit 1"'
check "newline in the program name" 127 "cannot run 'x\\nretry: forged'" \
    '$R -n 0 -- "$(printf "x\nretry: forged")"'
# The held-stdout case must leave stdout empty (everything went to stderr).
TMPDIR=/nonexistent "$bin" --stdout-on-success -- cat "$work/9MiB" 2>/dev/null >"$work/held" || true
if [[ -s $work/held ]]; then
    echo "held stdout that cannot spill: stdout not empty  FAILED"
    failed=1
fi

if ! command -v python3 >/dev/null; then
    echo "python3 not found: the timed part is skipped"
    exit $failed
fi
RETRY_BIN=$bin python3 - <<'EOF' || failed=1
import fcntl, os, signal, statistics, struct, subprocess, sys, termios, time

R = os.environ["RETRY_BIN"]

def unread(fd):
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]

def once(flags, script, sig):
    r, w = os.pipe()
    p = subprocess.Popen([R, *flags, "--kill-after", "1s", "--", "sh", "-c", script],
                         stdout=w, stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(w)
    while unread(r) == 0:
        time.sleep(0.002)
    time.sleep(0.05)
    t = time.monotonic()
    p.send_signal(sig)
    status = p.wait(timeout=60)
    took = time.monotonic() - t
    os.close(r)
    return status, took

bad = False
for name, flags, script, sig, limit in [
    ("held stdout, TERM", ["--stdout-on-success"], "head -c 20000000 /dev/zero", signal.SIGTERM, 2),
    ("held stdout, INT", ["--stdout-on-success"], "head -c 20000000 /dev/zero", signal.SIGINT, 2),
    ("held stdout, QUIT", ["--stdout-on-success"], "head -c 20000000 /dev/zero", signal.SIGQUIT, 2),
    ("matched stdout, TERM", ["--retry-if-output", "zzz"], "yes", signal.SIGTERM, 2),
    ("matched stdout, HUP", ["--retry-if-output", "zzz"], "yes", signal.SIGHUP, 2),
    ("matched, attempt ignores TERM", ["--retry-if-output", "zzz"], "trap '' TERM; yes",
     signal.SIGTERM, 2),
]:
    runs = [once(flags, script, sig) for _ in range(10)]
    statuses = {s for s, _ in runs}
    ms = [t * 1000 for _, t in runs]
    ok = statuses == {-sig} and max(ms) < limit * 1000
    bad |= not ok
    print(f"{name:32} died of {sorted(statuses)}  10 runs  median {statistics.median(ms):5.0f} ms"
          f"  max {max(ms):5.0f} ms{'' if ok else '  FAILED'}")
sys.exit(1 if bad else 0)
EOF
if [[ $failed == 0 ]]; then echo "io_faults.sh: all as documented"; fi
exit $failed
