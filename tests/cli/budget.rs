//! `--budget KEY` through the binary: the token bucket shared by concurrent runs (a file store
//! and a real `redis-server`), "retry budget for KEY is spent", failing open with one warning
//! (a held or KILLed lock, a corrupt file, a Redis server that is down), passwords never shown,
//! and bad values refused with 125.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::{retry, send, timeless, wait_for_lines, wait_with_limit};
use crate::redis_server::RedisServer;
use crate::tools::{self, require};

/// The JSON events of a run's stderr.
pub fn events(stderr: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The `retry: warning:` lines of a run's stderr.
fn warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("retry: warning: "))
        .map(String::from)
        .collect()
}

/// A command that appends a line to `count` at each attempt, then exits `status`.
fn counting(count: &Path, status: i32) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo x >> '{}'; exit {status}", count.display()),
    ]
}

/// Lines in `path` (0 when it does not exist).
fn count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// 40 runs of `retry -n 5 -b 0 --budget K --budget-store STORE` of a failing command that
/// counts its attempts, released together; returns the attempts in all and the warnings.
fn forty_runs(store: &str) -> (usize, usize) {
    const RUNS: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let (go, tally) = (dir.path().join("go"), dir.path().join("attempts"));
    let retry_bin = crate::helpers::bin();
    let children: Vec<Child> = (0..RUNS)
        .map(|_| {
            // Each run waits for the go file, so that all start together.
            let mut cmd = Command::new("sh");
            cmd.arg("-c")
                .arg("while [ ! -e \"$0\" ]; do sleep 0.005; done; exec \"$@\"")
                .arg(&go)
                .arg(retry_bin)
                .args([
                    "-n",
                    "5",
                    "-b",
                    "0",
                    "--budget",
                    "K",
                    "--budget-store",
                    store,
                    "--",
                ])
                .args(counting(&tally, 1))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            crate::helpers::clear_outside_env(&mut cmd);
            cmd.spawn().unwrap()
        })
        .collect();
    std::fs::write(&go, b"").unwrap();
    let mut warned = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let w = warnings(&out.stderr);
        if let Some(first) = w.first() {
            println!("{first}");
        }
        warned += w.len();
    }
    (count(&tally), warned)
}

/// gRFC A6 at the defaults: 40 first attempts and the 4 retries a full bucket grants (44 when
/// no run warned). A run that could not reach the store in time goes on without a budget (as
/// designed, with a warning): at most its 5 retries more, which a loaded machine can cause.
fn within_the_budget(attempts: usize, warned: usize) {
    let bound = 46 + 5 * warned;
    assert!(
        (40..=bound).contains(&attempts),
        "{attempts} attempts, {warned} warned"
    );
    assert!(warned > 0 || attempts == 44, "{attempts} attempts");
}

/// A temporary directory on a tmpfs (`/dev/shm`) when there is one, as `$XDG_RUNTIME_DIR`, the
/// default store's place, is: on a disk, a busy journal can hold a run's `rename` past the
/// 100 ms lock timeout, and the runs waiting then fail open (as designed, with a warning).
fn tmpfs_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap())
}

#[test]
fn forty_concurrent_runs_with_a_file_store_make_at_most_46_attempts() {
    let dir = tmpfs_dir();
    let store = dir.path().join("store");
    let (attempts, warned) = forty_runs(store.to_str().unwrap());
    println!("file store: 40 runs of -n 5 made {attempts} attempts, {warned} warnings");
    within_the_budget(attempts, warned);
    let state = std::fs::read_to_string(store.join("K.json")).unwrap();
    assert!(
        state.contains("\"milli\":0"),
        "the bucket is empty: {state}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(&store.join("K.json")), 0o600);
}

#[test]
fn forty_concurrent_runs_with_redis_make_at_most_46_attempts() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let (attempts, warned) = forty_runs(&server.url());
    println!("redis store: 40 runs of -n 5 made {attempts} attempts, {warned} warnings");
    within_the_budget(attempts, warned);
}

#[test]
fn a_spent_budget_gives_up_with_the_last_status_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let run = || {
        retry()
            .args([
                "-n",
                "5",
                "-b",
                "0",
                "--log-format",
                "json",
                "--budget",
                "api",
            ])
            .arg("--budget-store")
            .arg(&store)
            .args(["--", "sh", "-c", "exit 3"])
            .output()
            .unwrap()
    };
    let out = run();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let ev = events(&out.stderr);
    let tokens: Vec<f64> = ev
        .iter()
        .filter(|e| e["event"] == "budget" && e["phase"] == "attempt")
        .map(|e| e["tokens"].as_f64().unwrap())
        .collect();
    assert_eq!(tokens, [9.0, 8.0, 7.0, 6.0, 5.0]);
    let give_up = ev.iter().find(|e| e["event"] == "give_up").unwrap();
    assert_eq!(give_up["reason"], "retry budget for api is spent");
    assert_eq!(give_up["attempts"], 5);
    assert_eq!(give_up["status"], 3);
    let begin = ev.iter().find(|e| e["event"] == "budget").unwrap();
    assert_eq!(begin["phase"], "begin");
    assert_eq!(begin["tokens"], 10.0);
    assert_eq!(begin["admission"], "run");
    // The next run still makes its first attempt, and no retry.
    let out = run();
    assert_eq!(out.status.code(), Some(3));
    let attempts = events(&out.stderr)
        .iter()
        .filter(|e| e["event"] == "attempt_start")
        .count();
    assert_eq!(attempts, 1);
    // In text, and with -v the tokens left.
    let out = retry()
        .args(["-v", "-n", "5", "-b", "0", "--budget", "api"])
        .arg("--budget-store")
        .arg(&store)
        .args(["--", "false"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        timeless(&text)
            .contains("retry: gave up after 1 attempt in T: retry budget for api is spent"),
        "{text}"
    );
    assert!(
        text.contains("budget api: 3 of 10 tokens left; no retry (it needs more than 5)"),
        "{text}"
    );
}

#[test]
fn successes_give_tokens_back_and_statuses_not_retried_count_for_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let tokens_after = |args: &[&str]| {
        let out = retry()
            .args(["-b", "0", "--log-format", "json", "--budget", "k"])
            .arg("--budget-store")
            .arg(&store)
            .args(args)
            .output()
            .unwrap();
        events(&out.stderr)
            .iter()
            .rev()
            .find(|e| e["event"] == "budget" && e["phase"] == "attempt")
            .map(|e| e["tokens"].as_f64().unwrap())
    };
    assert_eq!(tokens_after(&["-n", "0", "--", "false"]), Some(9.0));
    assert_eq!(tokens_after(&["--", "true"]), Some(9.1));
    // Status 2 is not retried here: neither a success nor a failure for the bucket.
    assert_eq!(
        tokens_after(&["--stop-on", "2", "--", "sh", "-c", "exit 2"]),
        Some(9.1)
    );
}

/// Holds `flock` on `lock` in a perl process of its own until it is killed; returns once the
/// lock is held.
pub fn hold_lock(lock: &Path, ready: &Path) -> Child {
    let mut child = Command::new("perl")
        .args([
            "-e",
            "use Fcntl ':flock'; open my $l, '>>', $ARGV[0] or die; flock($l, LOCK_EX) or die; \
             open my $r, '>', $ARGV[1]; print $r \"held\\n\"; close $r; sleep 600",
        ])
        .arg(lock)
        .arg(ready)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lines(ready, 1);
    assert!(child.try_wait().unwrap().is_none());
    child
}

#[test]
fn a_held_lock_costs_one_warning_and_a_killed_holder_blocks_nobody() {
    if !require(&[tools::PERL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let run = |marker: &Path| {
        retry()
            .args(["-n", "0", "--log-format", "json", "--budget", "K"])
            .arg("--budget-store")
            .arg(&store)
            .args(["--", "touch"])
            .arg(marker)
            .output()
            .unwrap()
    };
    // A first run creates the directory and the KEY's files.
    assert!(run(&dir.path().join("m0")).status.success());
    let mut holder = hold_lock(&store.join("K.lock"), &dir.path().join("ready"));
    // While another process holds the lock: one warning, and the command still runs.
    let started = Instant::now();
    let out = run(&dir.path().join("m1"));
    let took = started.elapsed();
    assert!(out.status.success(), "{out:?}");
    assert!(dir.path().join("m1").exists());
    let ev = events(&out.stderr);
    let warned: Vec<&Value> = ev.iter().filter(|e| e["event"] == "warning").collect();
    assert_eq!(warned.len(), 1, "{ev:?}");
    let message = warned[0]["message"].as_str().unwrap();
    assert!(
        message.contains("K.lock not obtained within")
            && message.ends_with("going on without a retry budget"),
        "{message}"
    );
    // The read before the attempt needs no lock; recording the attempt does.
    let phases: Vec<&str> = ev
        .iter()
        .filter(|e| e["event"] == "budget")
        .map(|e| e["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["begin"], "{ev:?}");
    println!("a run against a held lock took {took:?}");
    // KILL the holder: the kernel drops its lock, and the next run uses the budget at once.
    send(holder.id(), libc::SIGKILL);
    wait_with_limit(&mut holder);
    let out = run(&dir.path().join("m2"));
    assert!(out.status.success(), "{out:?}");
    let ev = events(&out.stderr);
    assert!(!ev.iter().any(|e| e["event"] == "warning"), "{ev:?}");
    let begin = ev.iter().find(|e| e["event"] == "budget").unwrap();
    assert_eq!(begin["admission"], "run");
    assert_eq!(begin["tokens"], 10.0);
}

#[test]
fn a_corrupt_state_costs_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(store.join("K.json"), b"{not json").unwrap();
    let out = retry()
        .args(["-n", "2", "-b", "0", "--budget", "K"])
        .arg("--budget-store")
        .arg(&store)
        .args(["--", "false"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let w = warnings(&out.stderr);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("is corrupt") && w[0].contains("remove it to reset"),
        "{w:?}"
    );
    // Without a budget, the retries are the -n's.
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        timeless(&text).contains("gave up after 3 attempts in T: no retries left"),
        "{text}"
    );
}

#[test]
fn a_store_directory_of_another_kind_is_refused_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    let out = retry()
        .args(["-n", "0", "--budget", "K", "--budget-store"])
        .arg(&link)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let w = warnings(&out.stderr);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("is a symlink; refused"), "{w:?}");
}

/// A loopback port nobody listens on.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_redis_server_that_is_down_costs_one_warning_and_well_under_a_second() {
    let port = dead_port();
    // The password comes from the variable, as the help recommends, and is never shown.
    let url = format!("redis://:s3cret-pw@127.0.0.1:{port}");
    let started = Instant::now();
    let out = retry()
        .env("RETRY_BUDGET_STORE", &url)
        .args(["-n", "2", "-b", "0", "--budget", "K", "--", "false"])
        .output()
        .unwrap();
    let took = started.elapsed();
    println!("a run of 3 attempts against a Redis server that is down took {took:?}");
    assert_eq!(out.status.code(), Some(1));
    let w = warnings(&out.stderr);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(&format!("redis://:***@127.0.0.1:{port}"))
            && w[0].ends_with("going on without a retry budget"),
        "{w:?}"
    );
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        timeless(&text).contains("gave up after 3 attempts in T: no retries left"),
        "{text}"
    );
    // Generous: the refused connection costs milliseconds; the bound is about load.
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn a_password_in_a_bad_store_value_is_never_shown() {
    for (how, value) in [
        ("flag", "rediss://u:s3cret@h"),
        ("env", "http://u:s3cret@h"),
    ] {
        let mut cmd = retry();
        cmd.args(["--budget", "K"]);
        if how == "flag" {
            cmd.args(["--budget-store", value]);
        } else {
            cmd.env("RETRY_BUDGET_STORE", value);
        }
        let out = cmd.args(["--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{how}");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains("s3cret"), "{text}");
        let name = if how == "flag" {
            "retry: --budget-store: "
        } else {
            "retry: RETRY_BUDGET_STORE: "
        };
        assert!(text.starts_with(name) && text.contains("u:***@h"), "{text}");
        assert_eq!(text.lines().count(), 1);
    }
    // Nor does --help show the variable's value.
    let out = retry()
        .env("RETRY_BUDGET_STORE", "redis://:s3cret@h")
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("s3cret"));
}

#[test]
fn bad_values_name_the_flag_or_variable_and_exit_125() {
    let refused = |args: &[&str], env: &[(&str, &str)], says: &str| {
        let mut cmd = retry();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.args(args).args(["--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{args:?} {env:?}");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            text.starts_with("retry: ") && text.contains(says),
            "{args:?}: {text}"
        );
        assert_eq!(text.lines().count(), 1, "{text}");
    };
    refused(&["--budget", ""], &[], "'--budget <KEY>'");
    refused(&["--budget", &"k".repeat(256)], &[], "at most 255 bytes");
    refused(&["--budget", "k", "--breaker", "0"], &[], "'--breaker <N>'");
    refused(
        &["--budget", "k"],
        &[("RETRY_BREAKER", "x")],
        "'x' for RETRY_BREAKER (--breaker)",
    );
    refused(
        &["--budget", "k", "--breaker-cooldown", "-1s"],
        &[],
        "--breaker-cooldown",
    );
    refused(
        &["--budget", "k", "--budget-max-tokens", "0"],
        &[],
        "'0' for '--budget-max-tokens",
    );
    refused(
        &[
            "--budget",
            "k",
            "--budget-max-tokens",
            "2",
            "--budget-token-ratio",
            "3",
        ],
        &[],
        "--budget-token-ratio (3) must be at most --budget-max-tokens (2)",
    );
    refused(
        &["--budget", "k"],
        &[("RETRY_BUDGET_REFILL", "soon")],
        "RETRY_BUDGET_REFILL",
    );
    refused(&["--splay", "x"], &[], "'x' for '--splay <DURATION>'");
    refused(&["--breaker", "3"], &[], "--breaker needs --budget KEY");
    refused(
        &["--budget", "k", "--breaker-cooldown", "5s"],
        &[],
        "--breaker-cooldown needs --breaker N",
    );
    // From the environment, a store without --budget is simply unused.
    let out = retry()
        .env("RETRY_BUDGET_STORE", "/nonexistent/never/created")
        .args(["-n", "0", "--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{out:?}");
}
