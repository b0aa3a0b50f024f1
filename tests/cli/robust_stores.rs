//! Robustness: stores. `--budget` against hostile or broken stores and values, through the
//! binary: a Redis error reply or a stored value full of terminal escapes never reaches the
//! terminal raw; a stored value of 300 MiB is refused unread (retry stays small); a value that
//! looks like a URL but is not one is refused (125), its password masked, instead of becoming a
//! local directory; and 200 runs failing together on one KEY each record their failure, at
//! most 3 commands a run.
//!
//! Not here: the spill files of `--replay-stdin` and `--stdout-on-success` (`robust_security.rs`,
//! `robust_stdin.rs`); the budget, its stores and the fake Redis server as they should work
//! (`budget.rs`, `budget_waits.rs`, `fake_redis.rs`, and `tests/budget/`), lock files
//! (`lock.rs`), the metrics and env files (`metrics*.rs`, `env_file.rs`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::fake_redis::{Behaviour, FakeRedis};
use crate::helpers::{HANG_LIMIT, clear_outside_env, refused, retry, retry_std};
use crate::redis_server::RedisServer;
use crate::tools::{self, require};

fn con(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

/// Asserts that `stderr` has no raw ESC or BEL and exactly one warning; returns the warning.
fn one_clean_warning(stderr: &[u8]) -> String {
    assert!(
        !stderr.contains(&0x1b) && !stderr.contains(&0x07),
        "raw ESC or BEL on stderr: {:?}",
        String::from_utf8_lossy(stderr)
    );
    let text = String::from_utf8_lossy(stderr);
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    warnings[0].to_string()
}

#[test]
fn escapes_from_an_error_reply_or_a_stored_value_never_reach_the_terminal_raw() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let fake = FakeRedis::start(Behaviour::Reply(
        b"-ERR \x1b]0;pwned\x07\x1b[2J\r\n".to_vec(),
    ));
    for format in ["text", "json"] {
        let out = retry()
            .args(["-n", "0", "--log-format", format, "--budget", "K"])
            .args(["--budget-store", &fake.url(), "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let warning = one_clean_warning(&out.stderr);
        assert!(warning.contains("pwned"), "{warning}");
    }
    assert!(fake.commands() >= 2);

    let server = RedisServer::start();
    let _: () = redis::cmd("SET")
        .arg("retry:budget:K")
        .arg(b"{\"version\":1,\"\x1b]0;pwned\x07\x1b[2J\":1}")
        .query(&mut con(&server))
        .unwrap();
    let out = retry()
        .args(["-n", "0", "--budget", "K", "--budget-store", &server.url()])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let warning = one_clean_warning(&out.stderr);
    assert!(warning.contains("is corrupt"), "{warning}");
}

/// The raw wait status of a finished child, from `wait4(2)`.
fn wait_raw(child: &Child) -> i32 {
    let mut status = 0;
    // SAFETY: wait4 on our own child's pid with a valid status pointer and no rusage.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, std::ptr::null_mut()) };
    assert_eq!(pid, child.id() as i32);
    status
}

/// The peak resident memory of the program child `pid` runs, in KiB: its `VmHWM` (proc(5)),
/// read every millisecond until its memory is gone (it ended), from a thread; join it before
/// reaping the child, so that the pid cannot be another's. Not `wait4(2)`'s `ru_maxrss`: a child
/// spawned with `posix_spawn` (a vfork) runs in the test process's memory until it executes
/// retry, and the exec folds that memory's peak into `ru_maxrss`, which was then the test
/// binary's (120 MiB late in a full run) rather than retry's. Readings while the child still
/// runs the test binary are left out.
fn sample_peak_rss(pid: u32) -> std::thread::JoinHandle<i64> {
    let own = std::fs::read_link("/proc/self/exe").unwrap();
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut peak = 0;
        loop {
            let exe = std::fs::read_link(format!("/proc/{pid}/exe"));
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<i64>().ok());
            match (exe, hwm) {
                (Ok(exe), Some(kib)) if exe != own => peak = peak.max(kib),
                (Ok(_), Some(_)) => {}
                _ => {
                    assert!(peak > 0, "no reading of pid {pid}'s memory after its exec");
                    return peak;
                }
            }
            assert!(start.elapsed() < HANG_LIMIT, "pid {pid} still running");
            std::thread::sleep(Duration::from_millis(1));
        }
    })
}

#[test]
fn a_stored_value_of_300_mib_is_refused_unread_and_retry_stays_small() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let _: () = redis::cmd("SETRANGE")
        .arg("retry:budget:K")
        .arg(300 * 1024 * 1024 - 1)
        .arg("}")
        .query(&mut con(&server))
        .unwrap();
    let mut child = retry_std()
        .args(["-n", "0", "--budget", "K", "--budget-store", &server.url()])
        .args(["--", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let peak = sample_peak_rss(child.id());
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let peak_kib = peak.join().unwrap();
    let status = wait_raw(&child);
    // Reaped by wait4 already: this only settles std's view of it.
    let _ = child.try_wait();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status}"
    );
    let warning = one_clean_warning(&stderr);
    assert!(
        warning.contains("314572800 bytes, larger than 65536"),
        "{warning}"
    );
    println!("a 300 MiB value: retry's peak RSS {peak_kib} KiB");
    assert!(peak_kib < 64 * 1024, "{peak_kib} KiB");
}

#[test]
fn a_value_that_looks_like_a_url_but_is_not_one_is_refused_with_its_password_masked() {
    let dir = tempfile::tempdir().unwrap();
    for value in [
        "redis:/u:PW@host",
        "redis:u:PW@host:6379/2",
        "redis//:PW@host",
    ] {
        let line = refused(
            retry()
                .current_dir(dir.path())
                .env("RETRY_BUDGET_STORE", value)
                .args(["-v", "--budget", "K", "--", "true"]),
            &["RETRY_BUDGET_STORE", "looks like a URL", "***@host"],
        );
        assert!(!line.contains("PW"), "{line}");
        let line = refused(
            retry().current_dir(dir.path()).args([
                "--budget",
                "K",
                "--budget-store",
                value,
                "--",
                "true",
            ]),
            &["--budget-store", "looks like a URL"],
        );
        assert!(!line.contains("PW"), "{line}");
        // In JSON: one `error` event, without the password either.
        let out = retry()
            .current_dir(dir.path())
            .args(["--log-format", "json", "--budget", "K"])
            .args(["--budget-store", value, "--", "true"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{text}");
        assert!(
            text.contains("looks like a URL") && !text.contains("PW"),
            "{text}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no local directory was made of it"
    );
    // A directory of that name is still there to be had, written as one.
    let out = retry()
        .current_dir(dir.path())
        .args(["-n", "0", "--budget", "K", "--budget-store", "./cache:v2"])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    assert!(dir.path().join("cache:v2/K.json").exists());
}

/// The commands retry's runs sent to the server, and those the script ran in the server, from
/// `INFO commandstats` (which counts both): the runs send only `EVALSHA` and `EVAL` (and
/// `AUTH`, `SELECT` when the URL asks); `STRLEN`, `GET` and `SET` are the script's own. The
/// test's `INFO` and `PING` are left out.
fn commands_run(server: &RedisServer) -> (u64, u64) {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut con(server))
        .unwrap();
    let (mut sent, mut in_scripts) = (0, 0);
    for line in info.lines().filter_map(|l| l.strip_prefix("cmdstat_")) {
        let (name, stats) = line.split_once(':').unwrap();
        let calls = stats.split("calls=").nth(1).unwrap();
        let calls: u64 = calls.split(',').next().unwrap().parse().unwrap();
        match name {
            "info" | "ping" => {}
            "strlen" | "get" | "set" => in_scripts += calls,
            _ => sent += calls,
        }
    }
    (sent, in_scripts)
}

/// Starts `runs` runs of `retry -n 0 --budget K --budget-max-tokens 1000 -- false` on `url`,
/// released together; returns their outputs. The runs have the lowest priority (`nice -n
/// 19`), the server a higher one where the test may give it ([`RedisServer::prefer`]): on two
/// cores, two hundred runs starting at the server's own priority would starve it (a real
/// fleet's runs are on other hosts than its Redis), and runs would wait past 300 ms for the CPU
/// to be given to the server, not for the server's answer.
fn failing_together(runs: usize, url: &str, dir: &Path) -> Vec<std::process::Output> {
    let go = dir.join("go");
    let children: Vec<Child> = (0..runs)
        .map(|_| {
            let mut cmd = Command::new("nice");
            cmd.args(["-n", "19", "sh", "-c"])
                .arg("while [ ! -e \"$0\" ]; do sleep 0.01; done; exec \"$@\"")
                .arg(&go)
                .arg(crate::helpers::bin())
                .args(["-n", "0", "--budget", "K", "--budget-max-tokens", "1000"])
                .args(["--budget-store", url, "--", "false"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            clear_outside_env(&mut cmd);
            cmd.spawn().unwrap()
        })
        .collect();
    std::fs::write(&go, b"").unwrap();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

#[test]
fn two_hundred_runs_failing_together_each_record_their_failure_in_at_most_3_commands() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    const RUNS: usize = 200;
    let server = RedisServer::start();
    server.prefer();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(commands_run(&server), (0, 0));
    let started = std::time::Instant::now();
    let outputs = failing_together(RUNS, &server.url(), dir.path());
    let took = started.elapsed();
    for out in &outputs {
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(!text.contains("warning"), "{text}");
    }
    let (sent, in_scripts) = commands_run(&server);
    let per_run = sent as f64 / RUNS as f64;
    let state: String = redis::cmd("GET")
        .arg("retry:budget:K")
        .query(&mut con(&server))
        .unwrap();
    println!(
        "{RUNS} runs: {sent} commands sent ({per_run:.2} a run), {in_scripts} run by the \
         script, in {took:?}; {state}"
    );
    // Every failure took its token: 1000 - 200 left, in thousandths.
    assert!(
        state.contains("\"milli\":800000,\"max_milli\":1000000"),
        "{state}"
    );
    assert!(per_run <= 3.0, "{per_run} commands a run");
    assert!(took < Duration::from_secs(60));
}
