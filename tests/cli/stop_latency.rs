//! A stop signal always ends retry at once, and nothing retry waits on can hold it: every flag
//! run with its outputs jammed (helpers/jammed.rs), retry's own stderr, a `GITHUB_OUTPUT` FIFO,
//! a parent that ignores SIGCHLD; and retry's own failure to start an attempt is 125.

use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use clap::CommandFactory;

use crate::helpers::jammed::{Scene, full_fifo};
use crate::helpers::{retry, retry_std, wait_with_limit};

/// The command every jammed run retries: it writes nothing (so it never blocks itself on the
/// full outputs), leaves the marker, and fails.
fn failing(scene: &Scene) -> Vec<String> {
    let script = format!(": > '{}'; exit 1", scene.marker().display());
    ["--", "sh", "-c", &script].map(String::from).to_vec()
}

/// The arguments that exercise each flag (by clap id), with what it needs beside it; `true`
/// when the command runs (so the run is jammed after its first attempt).
fn sample(id: &str, scene: &Scene) -> Option<(Vec<&'static str>, bool)> {
    let _ = scene;
    Some(match id {
        "help" => (vec!["--help"], false),
        "version" => (vec!["--version"], false),
        "generate" => (vec!["--generate", "man"], false),
        "dry_run" => (vec!["--dry-run"], false),
        "preset" => (vec!["--preset", "aws"], true),
        "base" => (vec!["-b", "0"], true),
        "multiplier" => (vec!["-m", "3"], true),
        "cap" => (vec!["-c", "0.05"], true),
        "delays" => (vec!["--delays", "0.02,0.05"], true),
        "jitter" => (vec!["-j", "none"], true),
        "seed" => (vec!["--seed", "7"], true),
        "max_retries" => (vec!["-n", "unlimited"], true),
        "reset_after" => (vec!["--reset-after", "1h"], true),
        "deadline" => (vec!["-d", "1h"], true),
        "timeout" => (vec!["-t", "1h"], true),
        "idle_timeout" => (vec!["--idle-timeout", "1h"], true),
        "kill_after" => (vec!["--kill-after", "1s"], true),
        "signal" => (vec!["-t", "1h", "-s", "INT"], true),
        "preserve_status" => (vec!["-t", "1h", "--preserve-status"], true),
        "successes" => (vec!["--successes", "2"], true),
        "until_fail" => (vec!["--until-fail"], true),
        "forever" => (vec!["--forever"], true),
        "retry_on" => (vec!["--retry-on", "1"], true),
        "stop_on" => (vec!["--stop-on", "2"], true),
        "retry_if_output" => (vec!["--retry-if-output", "x"], true),
        "stop_if_output" => (vec!["--stop-if-output", "never-printed"], true),
        "delay_from_output" => (vec!["--delay-from-output", "wait ([0-9]+)"], true),
        "http_hints" => (vec!["--http-hints"], true),
        "http_retry_on" => (vec!["--http-hints", "--http-retry-on", "any"], true),
        "max_hint" => (vec!["--max-hint", "1m"], true),
        "transient" => (vec!["--transient"], true),
        "transient_pattern" => (vec!["--transient-pattern", "jam"], true),
        "replay_stdin" => (vec!["--replay-stdin"], true),
        "max_replay" => (vec!["--replay-stdin", "--max-replay", "1M"], true),
        "stdout_on_success" => (vec!["--stdout-on-success"], true),
        "quiet" => (vec!["-q"], true),
        "verbose" => (vec!["-v"], true),
        "log_format" => (vec!["--log-format", "json"], true),
        "no_github" => (vec!["--no-github"], true),
        "color" => (vec!["--color", "always"], true),
        "no_ci" => (vec!["--no-ci"], true),
        "chronic" => (vec!["--chronic"], true),
        "max_output" => (vec!["--chronic", "--max-output", "1K"], true),
        "on_retry" => (vec!["--on-retry", "true"], true),
        "on_retry_fail" => (vec!["--on-retry", "false", "--on-retry-fail", "stop"], true),
        "on_give_up" => (vec!["--on-give-up", "true"], true),
        "splay" => (vec!["--splay", "0.05s"], true),
        "budget" => (vec!["--budget", "jam"], true),
        "budget_store" => (
            vec!["--budget", "jam", "--budget-store", "redis://127.0.0.1:9"],
            true,
        ),
        "breaker" => (vec!["--budget", "jam", "--breaker", "1"], true),
        "breaker_cooldown" => (
            vec![
                "--budget",
                "jam",
                "--breaker",
                "1",
                "--breaker-cooldown",
                "1h",
            ],
            true,
        ),
        "budget_max_tokens" => (vec!["--budget", "jam", "--budget-max-tokens", "20"], true),
        "budget_token_ratio" => (vec!["--budget", "jam", "--budget-token-ratio", "0.5"], true),
        "budget_refill" => (vec!["--budget", "jam", "--budget-refill", "1s"], true),
        "lock" => (vec!["--lock", "LOCKFILE"], true),
        "lock_wait" => (vec!["--lock", "LOCKFILE", "--lock-wait", "1h"], true),
        "simulate" => (vec!["--simulate", "1000"], false),
        "runs" => (vec!["--simulate", "1000", "--runs", "50"], false),
        "model" => (vec!["--simulate", "1000", "--model", "failure-rate"], false),
        "capacity" => (
            vec![
                "--simulate",
                "1000",
                "--model",
                "rate-limit",
                "--capacity",
                "10",
            ],
            false,
        ),
        "failure_rate" => (
            vec![
                "--simulate",
                "1000",
                "--model",
                "failure-rate",
                "--failure-rate",
                "0.5",
            ],
            false,
        ),
        "plot" => (vec!["--simulate", "100", "--plot", "PLOT"], false),
        "metrics_file" => (vec!["--metrics-file", "METRICS"], true),
        "metrics_job" => (
            vec!["--metrics-file", "METRICS", "--metrics-job", "nightly"],
            true,
        ),
        "trace_args" => (vec!["--trace-args"], true),
        "command" => (vec![], true),
        // `--jitter` read as a list of modes (internal to --simulate).
        "modes" => (vec!["--simulate", "1000", "-j", "none,full"], false),
        _ => return None,
    })
}

/// The default retrying of a jammed run, unless the flag under test sets it: quick retries,
/// a few of them.
fn defaults(flags: &[&str]) -> Vec<String> {
    let mut args = Vec::new();
    let sets = |names: &[&str]| flags.iter().any(|f| names.contains(f));
    if !sets(&["-b", "--preset", "--delays"]) {
        args.extend(["-b", "0.02"]);
    }
    if !sets(&["-n", "--preset"]) {
        args.extend(["-n", "3"]);
    }
    args.into_iter().map(String::from).collect()
}

#[test]
fn every_flag_ends_at_once_on_term_with_every_output_jammed() {
    let ids: Vec<String> = retry::cli::Cli::command()
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    let missing: Vec<&String> = ids
        .iter()
        .filter(|id| sample(id, &Scene::new()).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "no jammed-run sample for {missing:?}: add one to `sample`"
    );
    let mut blocked_in_write = 0;
    let mut slowest = Duration::ZERO;
    for id in &ids {
        let scene = Scene::new();
        let (flags, runs) = sample(id, &scene).unwrap();
        let plot = scene.path("plot.svg");
        let _plot_reader = (id == "plot").then(|| full_fifo(&plot));
        let mut args: Vec<String> = flags
            .iter()
            .map(|f| match *f {
                "PLOT" => plot.display().to_string(),
                "LOCKFILE" => scene.path("lock").display().to_string(),
                "METRICS" => scene.path("retry.prom").display().to_string(),
                f => f.to_string(),
            })
            .collect();
        if runs {
            args.extend(defaults(&flags));
            args.extend(failing(&scene));
        }
        // (Scene::run fails a retry that stays where it was blocked past STOP_LIMIT.)
        let jammed = scene.run(&args, &[], runs);
        slowest = slowest.max(jammed.stopped_after);
        // 1 is write(2) on x86_64 and 64 on aarch64: where a deaf retry would be stuck.
        if matches!(jammed.blocked_in.as_deref(), Some("1" | "64")) {
            blocked_in_write += 1;
        }
        // Ended by TERM (as it died of it, or as an attempt that got it), or had ended before.
        use std::os::unix::process::ExitStatusExt;
        assert!(
            jammed.blocked_in.is_none()
                || jammed.status.signal() == Some(libc::SIGTERM)
                || jammed.status.code() == Some(143),
            "{id}: {args:?} ended {:?} after TERM",
            jammed.status
        );
    }
    // The runs that block do so in write (their output), not only in the event loop's wait.
    assert!(blocked_in_write > 0, "no run ever blocked writing");
    eprintln!("slowest end after TERM: {slowest:?}");
}

#[test]
fn term_ends_a_run_whose_stderr_reader_stopped_reading() {
    let scene = Scene::new();
    let mut args: Vec<String> = ["-n", "unlimited", "-b", "0", "--no-github"]
        .map(String::from)
        .to_vec();
    args.extend(failing(&scene));
    let jammed = scene.run(&args, &[], true);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(jammed.status.signal(), Some(libc::SIGTERM), "{jammed:?}");
}

#[test]
fn term_ends_a_run_writing_gitlab_and_buildkite_folds_to_a_stderr_nobody_reads() {
    // The fold markers go to stderr with retry's lines: a jammed stderr must not make the
    // run deaf, whichever system's markers it writes (GitHub's are in the test above).
    for system in ["GITLAB_CI", "BUILDKITE"] {
        let scene = Scene::new();
        let mut args: Vec<String> = ["-n", "unlimited", "-b", "0", "--no-github"]
            .map(String::from)
            .to_vec();
        args.extend(failing(&scene));
        let jammed = scene.run(&args, &[(system.to_string(), "true".to_string())], true);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            jammed.status.signal(),
            Some(libc::SIGTERM),
            "{system}: {jammed:?}"
        );
    }
}

#[test]
fn a_github_output_fifo_nobody_reads_is_an_error_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path in our own directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let start = Instant::now();
    let out = retry()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &fifo)
        .args(["--", "true"])
        .assert()
        .code(125)
        .get_output()
        .clone();
    assert!(start.elapsed() < Duration::from_secs(10));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("GITHUB_OUTPUT") && stderr.contains("FIFO"),
        "{stderr}"
    );
}

#[test]
fn term_ends_a_run_whose_github_output_fifo_is_full() {
    let scene = Scene::new();
    // stdout and stderr jammed too; the FIFO is the last thing the run writes.
    let args: Vec<String> = ["-q", "--", "true"].map(String::from).to_vec();
    let jammed = scene.run(&args, &[], false);
    use std::os::unix::process::ExitStatusExt;
    assert!(jammed.blocked_in.is_some(), "never blocked: {jammed:?}");
    assert_eq!(jammed.status.signal(), Some(libc::SIGTERM), "{jammed:?}");
}

/// `retry ARGS` started with SIGCHLD ignored, as a parent's `signal(SIGCHLD, SIG_IGN)` leaves
/// it across exec.
fn with_sigchld_ignored(args: &[&str]) -> std::process::Command {
    let mut cmd = retry_std();
    cmd.args(args);
    // SAFETY: signal() is async-signal-safe; SIG_IGN installs no handler.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            Ok(())
        });
    }
    cmd
}

#[test]
fn a_parent_that_ignores_sigchld_still_gets_the_attempts_statuses() {
    let mut cmd = with_sigchld_ignored(&["-q", "-n", "2", "-b", "0", "--", "sh", "-c", "exit 3"]);
    let mut child = cmd.spawn().unwrap();
    let status = wait_with_limit(&mut child);
    assert_eq!(status.code(), Some(3));
    let mut cmd = with_sigchld_ignored(&["-q", "--on-give-up", "exit 0", "-n", "0", "--", "true"]);
    assert_eq!(wait_with_limit(&mut cmd.spawn().unwrap()).code(), Some(0));
}

#[test]
fn a_parent_that_ignores_sigchld_can_still_stop_retry() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let script = format!(": > '{}'; exec sleep 60", marker.display());
    let mut child = with_sigchld_ignored(&["-q", "--", "sh", "-c", &script])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !marker.exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    crate::helpers::send(child.id(), libc::SIGTERM);
    let sent = Instant::now();
    let status = wait_with_limit(&mut child);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    assert!(sent.elapsed() < Duration::from_secs(5));
}

#[test]
fn too_few_descriptors_to_start_an_attempt_is_retrys_own_failure() {
    // Sweep the descriptor limit upwards: every run ends with 125 (a line saying why) or
    // succeeds, never with 126 ("cannot execute") or a panic; and some limit is too low for
    // the attempt's pipes but high enough for retry's own start.
    let mut own = 0;
    for limit in 4..40 as libc::rlim_t {
        let mut cmd = retry_std();
        cmd.args(["--idle-timeout", "1h", "--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: setrlimit is async-signal-safe; it only lowers this child's own limit.
        unsafe {
            cmd.pre_exec(move || {
                let rl = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 125)),
            "limit {limit}: {:?} {stderr}",
            out.status
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        if stderr.contains("cannot start attempt 1") {
            own += 1;
            assert_eq!(code, Some(125));
        }
        if code == Some(0) {
            break;
        }
    }
    assert!(own > 0, "no limit made the attempt's start fail");
}

#[test]
fn a_process_limit_that_stops_the_attempt_is_retrys_own_failure() {
    // RLIMIT_NPROC binds only an unprivileged user: as root, run retry as nobody.
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipped: needs root to run retry as another user");
        return;
    }
    let mut cmd = retry_std();
    cmd.args(["-n", "3", "-b", "0", "--", "true"])
        .current_dir("/")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: setgroups, setgid, setuid and setrlimit are async-signal-safe; they change only
    // this child, which then execs retry as nobody with room for no second process.
    unsafe {
        cmd.pre_exec(|| {
            let none: [libc::gid_t; 0] = [];
            if libc::setgroups(0, none.as_ptr()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            let rl = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_NPROC, &rl);
            Ok(())
        });
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: cannot run retry as nobody ({e})");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("Permission denied") && out.status.code() == Some(126) {
        eprintln!("skipped: nobody cannot reach the test binary: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("cannot start attempt 1"), "{stderr}");
}

#[test]
fn an_overlong_path_entry_is_skipped_as_execvp_skips_it() {
    let long = format!("/{}", "d".repeat(5000));
    let path = format!("{long}:/usr/bin:/bin");
    retry()
        .env("PATH", &path)
        .args(["--", "true"])
        .assert()
        .success()
        .stderr("");
    // The same entry alone: not found (127), as for any program that is nowhere on PATH.
    retry()
        .env("PATH", &long)
        .args(["-q", "--", "true"])
        .assert()
        .code(127);
}

#[test]
fn an_attempt_stopped_by_a_timeout_never_resets_the_schedule() {
    // Each attempt runs 0.5 s (past --reset-after 0.4 s) but only because --timeout stopped
    // it: it hung, which is no healthy run. One retry, then retry gives up with 124.
    let start = Instant::now();
    let out = retry()
        .args([
            "-n",
            "1",
            "-b",
            "0",
            "-t",
            "0.5",
            "--reset-after",
            "0.4",
            "--",
        ])
        .args(["sleep", "10"])
        .assert()
        .code(124)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("start afresh"), "{stderr}");
    assert_eq!(stderr.matches("timed out").count(), 2, "{stderr}");
    assert!(start.elapsed() < Duration::from_secs(30));
}
