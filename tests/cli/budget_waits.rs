//! `--budget` waiting on its store, through the binary: every wait is bounded as a whole (a
//! host name lookup that never answers, a Redis server that never answers or answers a byte
//! at a time: about 300 ms, then one warning and the run goes on without a budget), and a stop
//! signal (TERM, INT) that arrives during the wait ends retry at once, by that signal, without
//! a warning and without running the command. And the shared cooldown: never waited for longer
//! than the hint that set it, whatever the clocks of the hosts say.
//!
//! The signal tests send the signal a little (20 or 50 ms) after retry blocks its signals
//! (`SigBlk` in `/proc/PID/status`, proc(5)), or catches them (`SigCgt`: the portable build's
//! handlers): the store's wait starts right after that. A test
//! knows the wait was still going when the signal went (the store gives up after 300 ms, the
//! lock after 100 ms) from the time between the last look that found the signals unblocked and
//! the signal; on a machine so loaded that this is longer than the wait, it tries again.

use std::net::{Ipv4Addr, UdpSocket};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::fake_redis::{Behaviour, FakeRedis};
use crate::helpers::{clear_outside_env, default_signals, retry, retry_std, send, wait_with_limit};
use crate::tools::{self, require};

/// Whether process `pid` listens for `signal`: blocked (read from a signalfd) or caught (the
/// portable build's handler); `None` when it cannot be read.
fn blocked(pid: u32, signal: i32) -> Option<bool> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mask = |field: &str| -> Option<u64> {
        let mask = text.lines().find_map(|l| l.strip_prefix(field))?.trim();
        u64::from_str_radix(mask, 16).ok()
    };
    let mask = mask("SigBlk:")? | mask("SigCgt:")?;
    Some(mask & (1 << (signal - 1)) != 0)
}

/// Starts `make()` (a run that waits on its store before its first attempt, whose command
/// creates `marker`), sends `signal` `settle` after retry listens for signals (its wait has
/// begun by then), and checks that retry dies of it at once (within 2 s), says no warning and
/// never runs the command. `window` is how long after retry starts listening its wait surely
/// still goes on.
fn dies_at_once_of(
    signal: i32,
    (settle, window): (Duration, Duration),
    marker: &Path,
    make: impl Fn() -> Command,
) {
    for round in 1..=5 {
        let _ = std::fs::remove_file(marker);
        let mut child = make()
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let mut unblocked_at = Instant::now();
        loop {
            match blocked(child.id(), signal) {
                Some(true) => break,
                Some(false) => unblocked_at = Instant::now(),
                None => {}
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "retry ended before it listened for signals"
            );
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "retry never listened"
            );
            std::thread::sleep(Duration::from_micros(500));
        }
        std::thread::sleep(settle);
        send(child.id(), signal);
        let sent = Instant::now();
        let late = sent - unblocked_at;
        let status = wait_with_limit(&mut child);
        let took = sent.elapsed();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        if late > window {
            println!("round {round}: the signal went {late:?} after retry listened: again");
            continue;
        }
        assert_eq!(status.signal(), Some(signal), "{status:?}: {stderr}");
        assert!(took < Duration::from_secs(2), "{took:?}: {stderr}");
        assert!(!marker.exists(), "the command ran: {stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
        println!("signal {signal}: retry ended {took:?} after it, {late:?} after it listened");
        return;
    }
    panic!("five times, the signal could not be sent within {window:?} of retry listening");
}

/// `retry -n 0 --budget K --budget-store STORE EXTRA -- touch MARKER`.
fn touching(store: &str, extra: &[&str], marker: &Path) -> Command {
    let mut cmd = retry_std();
    cmd.args(["-n", "0", "--budget", "K", "--budget-store", store])
        .args(extra)
        .arg("--")
        .arg("touch")
        .arg(marker);
    cmd
}

#[test]
fn term_or_int_while_a_run_waits_on_a_redis_that_never_answers_ends_it_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    for behaviour in [
        Behaviour::Silent,
        Behaviour::Drip {
            interval: Duration::from_millis(100),
        },
    ] {
        let server = FakeRedis::start(behaviour);
        for signal in [libc::SIGTERM, libc::SIGINT] {
            let timing = (Duration::from_millis(50), Duration::from_millis(200));
            dies_at_once_of(signal, timing, &marker, || {
                touching(&server.url(), &[], &marker)
            });
        }
    }
}

#[test]
fn term_or_int_while_a_run_waits_on_a_held_lock_ends_it_at_once() {
    if !require(&[tools::PERL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    // A half-open breaker with no probe: the run claims the lease, a change, so it needs the
    // lock that another process holds.
    std::fs::write(
        store.join("K.json"),
        r#"{"version":1,"updated_ms":0,"tokens":null,"breaker":{"consecutive":1,"open_until_ms":1,"probe":null},"not_before_ms":null}"#,
    )
    .unwrap();
    let mut holder = crate::budget::hold_lock(&store.join("K.lock"), &dir.path().join("ready"));
    let marker = dir.path().join("ran");
    let store = store.to_str().unwrap().to_string();
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let timing = (Duration::from_millis(20), Duration::from_millis(70));
        dies_at_once_of(signal, timing, &marker, || {
            touching(&store, &["--breaker", "1"], &marker)
        });
    }
    send(holder.id(), libc::SIGKILL);
    wait_with_limit(&mut holder);
}

#[test]
fn a_redis_answering_a_byte_at_a_time_costs_about_300ms_not_the_deadline_and_more() {
    let server = FakeRedis::start(Behaviour::Drip {
        interval: Duration::from_millis(100),
    });
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let started = Instant::now();
    let out = retry()
        .args([
            "-n",
            "0",
            "--deadline",
            "2s",
            "--budget",
            "K",
            "--budget-store",
        ])
        .arg(server.url())
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(marker.exists());
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(
        warnings[0].contains("did not reply in time")
            && warnings[0].ends_with("going on without a retry budget"),
        "{text}"
    );
    println!("a server dripping its reply: the run took {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// The `unshare` command when this test runs as root and has it; `None` (with a note) when
/// the DNS tests cannot run here.
fn can_unshare() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("note: not root: the DNS tests need `unshare --mount`; skipped");
        return false;
    }
    if !require(&[tools::UNSHARE]) {
        return false;
    }
    let ok = Command::new("unshare")
        .args(["--mount", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("note: `unshare --mount` is missing or not allowed here; skipped");
    }
    ok
}

/// A UDP socket on port 53 of a loopback address of its own that never answers, and a
/// `resolv.conf` naming it (with the resolver's default timeouts: 5 s, 2 tries).
fn silent_resolver(dir: &Path) -> (UdpSocket, std::path::PathBuf) {
    let socket = (1..=250u8)
        .find_map(|n| UdpSocket::bind((Ipv4Addr::new(127, 53, 77, n), 53)).ok())
        .expect("a loopback address with port 53 free");
    let conf = dir.join("resolv.conf");
    let ip = socket.local_addr().unwrap().ip();
    std::fs::write(&conf, format!("nameserver {ip}\n")).unwrap();
    (socket, conf)
}

/// `retry ARGS` in a mount namespace of its own whose `/etc/resolv.conf` is `conf`.
fn with_resolver(conf: &Path, args: &[&str], marker: &Path) -> Command {
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "sh", "-c"])
        .arg("mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"")
        .arg(conf)
        .arg(crate::helpers::bin())
        .args(args)
        .arg("--")
        .arg("touch")
        .arg(marker)
        .stdin(Stdio::null())
        .process_group(0);
    clear_outside_env(&mut cmd);
    // SIGINT ignored by whoever started the tests (a background job of a script) would stay
    // ignored in retry, as it must.
    default_signals(&mut cmd);
    cmd
}

const BY_NAME: [&str; 5] = [
    "-n",
    "0",
    "--budget",
    "K",
    "--budget-store=redis://redis.budget.invalid:6379",
];

#[test]
fn a_host_name_whose_lookup_never_answers_costs_about_300ms() {
    if !can_unshare() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_socket, conf) = silent_resolver(dir.path());
    let marker = dir.path().join("ran");
    let started = Instant::now();
    let out = with_resolver(&conf, &BY_NAME, &marker).output().unwrap();
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(marker.exists(), "{text}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(
        warnings[0].contains("the lookup of redis.budget.invalid did not answer"),
        "{text}"
    );
    println!("a resolver that never answers: the run took {took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn term_or_int_during_a_host_name_lookup_ends_the_run_at_once() {
    if !can_unshare() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_socket, conf) = silent_resolver(dir.path());
    let marker = dir.path().join("ran");
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let timing = (Duration::from_millis(50), Duration::from_millis(200));
        dies_at_once_of(signal, timing, &marker, || {
            with_resolver(&conf, &BY_NAME, &marker)
        });
    }
}

#[test]
fn a_shared_cooldown_lasts_at_most_its_hint_whatever_the_clocks_say() {
    // Stored by a host whose clock is an hour ahead: until an hour from here, from a hint of
    // 2 s. This run waits 2 s, not an hour.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let until = now + 3_600_000;
    std::fs::write(
        store.join("K.json"),
        format!(
            r#"{{"version":1,"updated_ms":{now},"tokens":null,"breaker":{{"consecutive":0,"open_until_ms":null,"probe":null}},"not_before_ms":{until},"hint_len_ms":2000}}"#
        ),
    )
    .unwrap();
    let started = Instant::now();
    let out = retry()
        .args([
            "-n",
            "0",
            "--max-hint",
            "2h",
            "--budget",
            "K",
            "--budget-store",
        ])
        .arg(&store)
        .args(["--", "true"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("warning"), "{text}");
    // The hint's 2 s, less the time retry took to start and read the store (wide: a loaded
    // machine or an emulator takes tens of milliseconds), as a human duration (`1.9s`).
    let waited: f64 = text
        .split_once("waiting ")
        .and_then(|(_, rest)| rest.split_once(" for the shared cooldown of budget K"))
        .map(|(took, _)| crate::helpers::human_secs(took))
        .unwrap_or_else(|| panic!("no wait for the shared cooldown in {text}"));
    assert!((1.0..=2.0).contains(&waited), "{text}");
    assert!(took >= Duration::from_millis(1900), "{took:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}
