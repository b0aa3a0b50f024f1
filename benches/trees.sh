#!/usr/bin/env bash
# Process trees: TIMEOUTS (default 1,000) timeouts in one run of retry, of
# `sh -c 'sleep 100 & sleep 100 & wait'` (each sleep carries a token on its command line:
# `sleep 100.TOKEN`), with `-t 50ms -b 0`: every attempt is stopped by its timeout.
#
# Twice: with retry outside a terminal (each attempt leads a process group of its own, stopped
# with killpg), and with retry as the foreground process group of a pseudo-terminal (script(1):
# the attempt shares retry's group, its tree is found under /proc, retry being a child
# subreaper). Checks:
# - every attempt first looks for live processes of the previous attempt (by pid, confirmed by
#   the token on the command line and a state other than zombie): "left at the next start";
# - after retry has ended: no live process with the token anywhere (waiting up to 5 s for ones
#   that were killed a moment ago): "left at the end";
# - retry ended with 124 after TIMEOUTS attempts.
# Fails (exit 1) if anything was left at the end, or the counts are wrong. Processes found at
# the next start are reported (a figure), and fail only with STRICT=1.
#
# First, single cases, 10 runs each, timed to the end of retry's stdout: a tree that ignores
# TERM (KILL after --kill-after: 137); an attempt that stopped itself and its child (SIGSTOP;
# the timeout still ends it: 124), and one that keeps stopping itself while ignoring TERM (137);
# a grandchild that left the attempt's process group (setsid) holding the held stdout of
# --stdout-on-success open, quiet or writing: retry must not hang. In the success case the
# setsid grandchild is left running by design (a successful attempt keeps what it started);
# in the failure case retry stops it. This script kills what is left by pid afterwards.
#
# Usage: benches/trees.sh      (builds target/release/retry first; TIMEOUTS=... to change)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TIMEOUTS=${TIMEOUTS:-1000}
STRICT=${STRICT:-0}

cargo build --release -q
bin=$PWD/target/release/retry
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# live_with TOKEN: pids of live (non-zombie) processes whose command line holds TOKEN.
live_with() {
    local f pid line cmd parts
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        [ "$pid" = "$BASHPID" ] && continue
        { mapfile -d '' -t parts <"$f"; } 2>/dev/null || continue
        cmd="${parts[*]}"
        case $cmd in *"$1"*) ;; *) continue ;; esac
        { read -r line <"/proc/$pid/stat"; } 2>/dev/null || continue
        line=${line##*) }
        case $line in Z* | X*) continue ;; esac
        echo "$pid"
    done
}

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# The attempt: check the previous attempt's pids, then start the tree and record it.
attempt_script() {
    local d=$1 token=$2
    cat <<EOF
: $token
echo \$RETRY_ATTEMPT >> $d/starts
for p in \$(cat $d/last 2>/dev/null); do
    { read -r st < /proc/\$p/stat; } 2>/dev/null || continue
    case "\${st##*) }" in Z*|X*) continue;; esac
    case "\$(tr '\\0' ' ' < /proc/\$p/cmdline 2>/dev/null)" in
        *$token*) echo "\$RETRY_ATTEMPT \$p \${st##*) }" >> $d/leaks;;
    esac
done
: > $d/last
echo \$\$ >> $d/last
sleep 100.$token & echo \$! >> $d/last
sleep 100.$token & echo \$! >> $d/last
cat $d/last >> $d/all
wait
EOF
}

run_mode() {
    local mode=$1 d=$work/$1 token start end status
    mkdir -p "$d"
    token=$(printf '%d%06d' $$ $((RANDOM * 32768 + RANDOM)))
    attempt_script "$d" "$token" >"$d/attempt.sh"
    local cmd=("$bin" -q -b 0 -n $((TIMEOUTS - 1)) -t 50ms -- sh "$d/attempt.sh")
    start=$(now_ms)
    set +e
    if [ "$mode" = terminal ]; then
        # script(1) runs the command in a new session on a pseudo-terminal, in its foreground
        # group; -e passes the command's status on.
        script -qec "$(printf '%q ' "${cmd[@]}")" /dev/null </dev/null >"$d/out" 2>&1
    else
        "${cmd[@]}" </dev/null >"$d/out" 2>&1
    fi
    status=$?
    set -e
    end=$(now_ms)
    [ "$status" -eq 124 ] || fail "$mode: retry ended with $status, not 124: $(head -3 "$d/out")"
    local attempts processes leaks left waited=0
    attempts=$(wc -l <"$d/starts")
    # Each attempt records 3 pids (sh and two sleeps) unless its timeout came first.
    processes=$(wc -l <"$d/all")
    leaks=0
    [ -e "$d/leaks" ] && leaks=$(wc -l <"$d/leaks")
    [ "$attempts" -eq "$TIMEOUTS" ] || fail "$mode: $attempts attempts, not $TIMEOUTS"
    left=$(live_with "$token" | wc -l)
    while [ "$left" -gt 0 ] && [ $waited -lt 50 ]; do
        sleep 0.1
        waited=$((waited + 1))
        left=$(live_with "$token" | wc -l)
    done
    echo "$mode: $attempts attempts timed out in" \
        "$(((end - start) / 1000)).$(((end - start) % 1000 / 100)) s (status $status);" \
        "processes started and recorded: $processes;" \
        "left at the next attempt's start: $leaks; left at the end: $left"
    if [ "$leaks" -gt 0 ]; then
        echo "  (attempt pid state) seen at the next start:" >&2
        head -5 "$d/leaks" >&2
        [ "$STRICT" = 1 ] && fail "$mode: $leaks processes still there at the next start"
    fi
    [ "$left" -eq 0 ] || fail "$mode: $left processes left running: $(live_with "$token" | head -5)"
}

# single NAME WANT REPEAT LEFTOVERS RETRY-ARGS...: runs retry REPEAT times (stdout to a pipe
# that this script reads to its end, as a caller would); each run must end with status WANT
# and, unless LEFTOVERS is "setsid", leave no process with the token; prints the median and
# largest time to the end of stdout.
single() {
    local name=$1 want=$2 repeat=$3 leftovers=$4 token i t0 t1 status times=() left
    shift 4
    for i in $(seq "$repeat"); do
        token=$(printf '%d%05d%05d' $$ "$i" "$RANDOM")
        local args=("${@//TOKEN/$token}")
        t0=$(now_ms)
        set +e
        # In braces with stderr closed to bash's own "Killed" notice: retry dies of KILL when
        # KILL was needed, as coreutils timeout does (status 137 all the same).
        {
            "$bin" "${args[@]}" </dev/null 2>/dev/null | cat >/dev/null
            status=${PIPESTATUS[0]}
        } 2>/dev/null
        set -e
        t1=$(now_ms)
        times+=($((t1 - t0)))
        [ "$status" -eq "$want" ] || fail "$name: status $status, not $want"
        if [ "$leftovers" = setsid ]; then
            # Out of retry's reach by design: this script's own to end, by pid (looking
            # again: one may have been between fork and exec, with no command line yet).
            for _ in 1 2 3; do
                for p in $(live_with "$token"); do kill -KILL "$p" 2>/dev/null || true; done
                sleep 0.05
            done
            continue
        fi
        local waited=0
        left=$(live_with "$token" | wc -l)
        while [ "$left" -gt 0 ] && [ $waited -lt 50 ]; do
            sleep 0.1
            waited=$((waited + 1))
            left=$(live_with "$token" | wc -l)
        done
        [ "$left" -eq 0 ] || fail "$name: $left processes left"
    done
    printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" -v want="$want" '
        { t[NR] = $1 }
        END { printf "%-62s status %3d  %2d runs  median %5d ms  max %5d ms\n",
              name, want, NR, t[int((NR + 1) / 2)], t[NR] }'
}

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)," \
    "Linux $(uname -r)"
single "ignores TERM (-t 200ms --kill-after 300ms): KILL" 137 10 - \
    -n 0 -t 200ms --kill-after 300ms -- sh -c \
    "trap '' TERM; sh -c 'trap \"\" TERM; sleep 100.TOKEN' & while :; do sleep 0.05; done"
single "stops itself and its child with SIGSTOP (-t 200ms)" 124 10 - \
    -n 0 -t 200ms -- sh -c "sleep 100.TOKEN & kill -STOP \$!; kill -STOP \$\$; sleep 100.TOKEN"
single "stops itself again and again, ignores TERM: KILL" 137 10 - \
    -n 0 -t 200ms --kill-after 200ms -- sh -c "trap '' TERM; : TOKEN; while :; do kill -STOP \$\$; done"
single "grandchild (setsid) holds the held stdout, success" 0 10 setsid \
    --stdout-on-success -n 0 -- sh -c "setsid sleep 100.TOKEN & echo done"
single "grandchild (setsid) holds the held stdout and writes, failure" 1 10 setsid \
    --stdout-on-success -n 1 -b 0 -- sh -c \
    "setsid sh -c 'while :; do echo spam; done; : TOKEN' & echo done; exit 1"
run_mode own-group
if command -v script >/dev/null; then
    run_mode terminal
else
    echo "terminal: skipped (no script(1); Debian package bsdutils)"
fi

if [ "$failures" -gt 0 ]; then
    echo "trees.sh: $failures failure(s)" >&2
    exit 1
fi
echo "trees.sh: nothing left"
