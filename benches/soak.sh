#!/usr/bin/env bash
# Soak: ATTEMPTS (default 10,000) failing attempts with zero delay in one run of retry, twice:
# plain (the attempt inherits retry's descriptors) and with pipeline I/O (--replay-stdin,
# --stdout-on-success, --retry-if-output: threads and pipes for every attempt).
#
# At marked attempts (1, 1,000, 5,000 and the last) the attempt blocks until this script has
# read retry's /proc: open descriptors (/proc/PID/fd), threads and resident memory
# (/proc/PID/status: Threads, VmRSS, RssAnon), and its zombie children (/proc/*/stat with state
# Z and PPid = retry). Every attempt also leaves a background subshell behind, which retry (a
# child subreaper) must reap. A sampler scans for zombie children of retry during the whole run:
# a zombie still there after a later attempt has started and ended counts as unreaped.
#
# Fails (exit 1) if, between attempt 1,000 and the last: descriptors or threads differ, or
# resident memory grew by more than RSS_MARGIN_KIB (default 256); or if a marked attempt sees a
# zombie child, or the sampler sees one left unreaped, or retry does not end with status 1.
#
# Usage: benches/soak.sh        (builds target/release/retry first)
#        ATTEMPTS=N to change the count; MODES=plain or MODES=pipeline for one of the two.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ATTEMPTS=${ATTEMPTS:-10000}
RSS_MARGIN_KIB=${RSS_MARGIN_KIB:-256}
MODES=${MODES:-plain pipeline}
if [ "$ATTEMPTS" -gt 5000 ]; then
    MARKS=(1 1000 5000 "$ATTEMPTS")
elif [ "$ATTEMPTS" -gt 1000 ]; then
    MARKS=(1 1000 "$ATTEMPTS")
else
    MARKS=(1 $((ATTEMPTS / 10)) "$ATTEMPTS")
fi

cargo build --release -q
bin=$PWD/target/release/retry
work=$(mktemp -d)
sampler=
cleanup() {
    [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# zombie_children PID: the pids of PID's children that are zombies.
zombie_children() {
    local f line rest
    for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        rest=${line##*) }
        # shellcheck disable=SC2086 # split the stat fields
        set -- $rest
        if [ "$1" = Z ] && [ "$2" = "$ZPARENT" ]; then
            echo "${f//[^0-9]/}"
        fi
    done
}

# usage PID: "fds threads rss_kib anon_kib"
usage() {
    local pid=$1 fds threads rss anon
    fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
    threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
    anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status")
    echo "$fds $threads $rss $anon"
}

# sample PID OUT CURRENT: until PID ends, scan for its zombie children; write "samples
# transient oldest_ms unreaped" to OUT. CURRENT is the file where each attempt writes its
# number. A zombie child is normal for the moment between its end and retry's waitpid; one
# still there after a later attempt has started and ended (retry reaps every ended child, with
# waitpid(-1) in a loop, whenever an attempt ends) is "unreaped". The oldest age any zombie
# reached is reported too (on a shared machine it also measures how long retry went unscheduled).
sample() {
    local pid=$1 out=$2 current=$3 samples=0 transient=0 oldest=0 unreaped=0 z t now seen
    declare -A first=() at=()
    ZPARENT=$pid
    while [ -d "/proc/$pid" ]; do
        samples=$((samples + 1))
        t=$(now_ms)
        now=0
        { read -r now <"$current"; } 2>/dev/null || true
        seen=0
        for z in $(zombie_children); do
            seen=1
            if [ -z "${first[$z]:-}" ]; then
                first[$z]=$t
                at[$z]=$now
            else
                [ $((t - first[$z])) -le "$oldest" ] || oldest=$((t - first[$z]))
                if [ "$now" -ge $((at[$z] + 2)) ]; then
                    unreaped=$((unreaped + 1))
                    echo "unreaped zombie $z ($(cat "/proc/$z/stat" 2>/dev/null)): seen at attempt" \
                        "${at[$z]}, still at attempt $now; retry: $(cut -d' ' -f3 "/proc/$pid/stat")" >&2
                    at[$z]=$now
                fi
            fi
        done
        transient=$((transient + seen))
        # Forget zombies that are gone.
        for z in "${!first[@]}"; do
            [ -e "/proc/$z" ] || unset "first[$z]" "at[$z]"
        done
        echo "$samples $transient $oldest $unreaped" >"$out"
    done
}

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

run_mode() {
    local mode=$1
    shift
    local d=$work/$mode
    mkdir -p "$d"
    local cases
    cases=$(IFS='|'; echo "${MARKS[*]}")
    # A marked attempt first reads stdin to its end (so a stdin feeder has finished), then
    # writes its mark and waits for go.N.
    local script="echo \$RETRY_ATTEMPT > $d/current; ( : ) & \
case \$RETRY_ATTEMPT in $cases) cat > /dev/null; \
echo > $d/mark.\$RETRY_ATTEMPT; while [ ! -e $d/go.\$RETRY_ATTEMPT ]; do sleep 0.01; done;; \
esac; echo x; exit 1"
    local start end pid status
    start=$(now_ms)
    echo input | "$bin" -q -b 0 -n $((ATTEMPTS - 1)) "$@" -- sh -c "$script" >/dev/null 2>&1 &
    pid=$!
    sample "$pid" "$d/sampler" "$d/current" 2>"$d/sampler.err" &
    sampler=$!
    printf '%-9s %8s %5s %8s %10s %11s %14s\n' mode attempt fds threads "VmRSS KiB" \
        "RssAnon KiB" "zombie children"
    local m u z waited
    declare -A at=()
    for m in "${MARKS[@]}"; do
        while [ ! -e "$d/mark.$m" ]; do
            [ -d "/proc/$pid" ] || { fail "$mode: retry ended before attempt $m"; return; }
            sleep 0.01
        done
        # Let a just-ended orphan be reaped (up to 1 s) before counting zombies.
        waited=0
        ZPARENT=$pid
        z=$(zombie_children | wc -l)
        while [ "$z" -gt 0 ] && [ $waited -lt 100 ]; do
            sleep 0.01
            waited=$((waited + 1))
            z=$(zombie_children | wc -l)
        done
        [ "$z" -eq 0 ] || fail "$mode: $z zombie children at attempt $m"
        # Settle: a thread that just closed its pipe may take a moment to exit.
        local prev=""
        u=$(usage "$pid")
        while [ "$u" != "$prev" ]; do
            prev=$u
            sleep 0.05
            u=$(usage "$pid")
        done
        at[$m]=$u
        # shellcheck disable=SC2086 # split the usage fields
        printf '%-9s %8s %5s %8s %10s %11s %14s\n' "$mode" "$m" $u "$z (${waited}0 ms)"
        touch "$d/go.$m"
    done
    set +e
    wait "$pid"
    status=$?
    set -e
    end=$(now_ms)
    wait "$sampler" 2>/dev/null || true
    sampler=
    [ "$status" -eq 1 ] || fail "$mode: retry ended with status $status, not 1"
    local samples transient oldest unreaped
    read -r samples transient oldest unreaped <"$d/sampler"
    cat "$d/sampler.err" >&2
    echo "$mode: $ATTEMPTS attempts in $(((end - start) / 1000)).$(((end - start) % 1000 / 100)) s" \
        "(status $status); zombie sampler: $samples scans, $transient saw a zombie child" \
        "(oldest seen again after $oldest ms), $unreaped left unreaped past the next attempt"
    [ "$unreaped" -eq 0 ] || fail "$mode: $unreaped zombies left unreaped past the next attempt"
    local a b
    read -r -a a <<<"${at[${MARKS[1]}]}"
    read -r -a b <<<"${at[$ATTEMPTS]}"
    [ "${a[0]}" -eq "${b[0]}" ] || fail "$mode: descriptors ${a[0]} -> ${b[0]}"
    [ "${a[1]}" -eq "${b[1]}" ] || fail "$mode: threads ${a[1]} -> ${b[1]}"
    [ $((b[2] - a[2])) -le "$RSS_MARGIN_KIB" ] ||
        fail "$mode: VmRSS ${a[2]} -> ${b[2]} KiB (margin $RSS_MARGIN_KIB)"
    echo "$mode: from attempt ${MARKS[1]} to $ATTEMPTS: descriptors ${a[0]} -> ${b[0]}," \
        "threads ${a[1]} -> ${b[1]}, VmRSS ${a[2]} -> ${b[2]} KiB ($((b[2] - a[2])) KiB)"
    echo
}

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)," \
    "Linux $(uname -r)"
echo
for mode in $MODES; do
    case $mode in
        plain) run_mode plain ;;
        pipeline) run_mode pipeline --replay-stdin --stdout-on-success --retry-if-output never-matches ;;
        *) echo "soak.sh: unknown mode $mode" >&2; exit 2 ;;
    esac
done

if [ "$failures" -gt 0 ]; then
    echo "soak.sh: $failures failure(s)" >&2
    exit 1
fi
echo "soak.sh: flat and no zombies"
