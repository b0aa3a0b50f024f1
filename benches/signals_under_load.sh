#!/usr/bin/env bash
# Signals under load: RUNS (default 100) runs of
#   retry --replay-stdin -b 20ms -j none -m 1 -n unlimited --kill-after 30s -- sh -c ATTEMPT
# with 9 MiB on stdin (more than the 8 MiB kept in memory: the recording spills to a temporary
# file in a private TMPDIR), each sent SIGTERM at a random moment, 0 to 300 ms after start.
# ATTEMPT records its pid, sets a TERM trap that records it and exits 7, reads stdin to the end,
# sleeps 20 ms in the background, waits, and exits 1; attempts are 20 ms apart. So TERM lands:
#   during an attempt   -> the trap runs, retry ends with the attempt's status 7;
#   during a wait (or before the trap is set) -> retry dies of SIGTERM;
#   at the boundary (the attempt had just exited 1 on its own) -> retry ends with that 1.
# Each run checks: that status is consistent with the trap (7 if and only if it ran); retry
# exits within 5 s of the TERM (--kill-after 30s makes a needed KILL visible as slow); no
# process of the run is left (by a token on their command lines, waiting up to 5 s); no
# attempt starts after retry ended; TMPDIR is empty. Fails (exit 1) on any violation.
#
# Usage: benches/signals_under_load.sh    (builds target/release/retry first)
#        RUNS=... to change the count; SEED=N to replay the same random moments.
# Needs perl (Debian's perl-base) for exact wait statuses and sub-millisecond timing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

RUNS=${RUNS:-100}
SEED=${SEED:-$$}
RANDOM=$SEED

cargo build --release -q
bin=$PWD/target/release/retry
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c 9437184 /dev/zero >"$work/input"

# live_with TOKEN: pids of live (non-zombie) processes whose command line holds TOKEN.
live_with() {
    local f pid line cmd parts
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        { mapfile -d '' -t parts <"$f"; } 2>/dev/null || continue
        cmd="${parts[*]}"
        case $cmd in *"$1"*) ;; *) continue ;; esac
        { read -r line <"/proc/$pid/stat"; } 2>/dev/null || continue
        line=${line##*) }
        case $line in Z* | X*) continue ;; esac
        echo "$pid"
    done
}

# Starts retry (stdin from $work/input, TMPDIR $TMP), sends TERM after DELAY ms, waits; prints
# "how value exit_ms spilled": how = exit|signal, exit_ms = TERM to exit, spilled = 1 when a
# file under TMPDIR was open in retry at the TERM.
run_one() {
    perl -MTime::HiRes=sleep,time -MPOSIX=:sys_wait_h -e '
        my ($delay, $tmp, $input, @cmd) = @ARGV;
        my $pid = fork() // die "fork: $!";
        if ($pid == 0) {
            open(STDIN, "<", $input) or die;
            open(STDOUT, ">", "/dev/null") or die;
            open(STDERR, ">", "/dev/null") or die;
            $ENV{TMPDIR} = $tmp;
            exec(@cmd) or die "exec: $!";
        }
        sleep($delay / 1000);
        my $spilled = 0;
        if (opendir(my $fds, "/proc/$pid/fd")) {
            for my $fd (readdir $fds) {
                my $t = readlink("/proc/$pid/fd/$fd") // next;
                $spilled = 1 if index($t, $tmp) == 0;
            }
        }
        my $sent = time;
        kill("TERM", $pid);
        waitpid($pid, 0);
        my $took = (time - $sent) * 1000;
        my ($how, $value) = WIFSIGNALED($?) ? ("signal", WTERMSIG($?)) : ("exit", WEXITSTATUS($?));
        printf "%s %d %.1f %d\n", $how, $value, $took, $spilled;
    ' "$@"
}

failures=0
fail() {
    echo "FAIL (run $1, TERM after $2 ms): $3" >&2
    failures=$((failures + 1))
}

declare -A landed=()
times=()
spills=0
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)," \
    "Linux $(uname -r); seed $SEED"
for i in $(seq "$RUNS"); do
    d=$work/run$i
    mkdir -p "$d/tmp"
    token=$(printf '%d%05d%05d' $$ "$i" "$RANDOM")
    delay=$((RANDOM % 301))
    script=": $token; echo \$\$ >> $d/pids; trap 'echo \$RETRY_ATTEMPT >> $d/trapped; exit 7' TERM; \
cat > /dev/null; sleep 0.02$token & wait; exit 1"
    read -r how value took spilled < <(run_one "$delay" "$d/tmp" "$work/input" \
        "$bin" --replay-stdin -q -b 20ms -j none -m 1 -n unlimited --kill-after 30s \
        -- sh -c "$script")
    trapped=0
    [ -e "$d/trapped" ] && trapped=$(wc -l <"$d/trapped")
    case "$how $value" in
        "exit 7") kind="during an attempt (trap ran, status 7)"
            [ "$trapped" -eq 1 ] || fail "$i" "$delay" "status 7 but the trap ran $trapped times" ;;
        "signal 15") kind="during a wait or before the trap (died of SIGTERM)"
            [ -e "$d/pids" ] || kind="before the first attempt (died of SIGTERM)"
            [ "$trapped" -eq 0 ] || fail "$i" "$delay" "died of TERM but the trap ran" ;;
        "exit 1") kind="at the boundary (the attempt's own status 1)"
            [ "$trapped" -eq 0 ] || fail "$i" "$delay" "status 1 but the trap ran" ;;
        *) kind="unexpected: $how $value"
            fail "$i" "$delay" "retry ended: $how $value" ;;
    esac
    landed[$kind]=$((${landed[$kind]:-0} + 1))
    times+=("$took")
    spills=$((spills + spilled))
    awk -v t="$took" 'BEGIN {exit !(t < 5000)}' || fail "$i" "$delay" "took $took ms to exit"
    attempts=$({ wc -l <"$d/pids"; } 2>/dev/null || echo 0)
    waited=0
    while [ -n "$(live_with "$token")" ]; do
        [ $waited -lt 50 ] || { fail "$i" "$delay" "left running: $(live_with "$token")"; break; }
        sleep 0.1
        waited=$((waited + 1))
    done
    sleep 0.05
    [ "$({ wc -l <"$d/pids"; } 2>/dev/null || echo 0)" -eq "$attempts" ] ||
        fail "$i" "$delay" "an attempt started after retry ended"
    [ -z "$(ls -A "$d/tmp")" ] || fail "$i" "$delay" "TMPDIR not empty: $(ls -A "$d/tmp")"
    rm -rf "$d"
done

echo "$RUNS runs, SIGTERM 0-300 ms after start; where it landed:"
for kind in "${!landed[@]}"; do
    printf '  %4d  %s\n' "${landed[$kind]}" "$kind"
done
printf '%s\n' "${times[@]}" | sort -n | awk -v spills="$spills" '
    { t[NR] = $1 }
    END {
        printf "TERM to exit (ms): median %.1f, p95 %.1f, max %.1f\n",
            t[int((NR + 1) / 2)], t[int(NR * 0.95 + 0.5)], t[NR]
        printf "runs whose stdin copy had spilled to TMPDIR at the TERM: %d\n", spills
    }'
if [ "$failures" -gt 0 ]; then
    echo "signals_under_load.sh: $failures failure(s)" >&2
    exit 1
fi
echo "signals_under_load.sh: every run ended promptly with the right status, nothing left"
