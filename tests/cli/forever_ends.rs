//! How `--forever` ends, and SIGPIPE, through the binary users run (issue 41's items 1-7): a
//! crash loop of successes gives up with 1 (and `status=1` in `GITHUB_OUTPUT`), `--stop-on 0`
//! restarts only on failure, a preset's deadline does not apply, ALRM during a run ends it with
//! 124, a run that daemonizes is named on its line, `--metrics-file` is rewritten after every
//! run, and an attempt killed by SIGPIPE is retried unless retry's own reader is gone.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use crate::helpers::{release, release_std, send, wait_for_lines, wait_with_limit};

/// `retry ARGS -- sh -c SCRIPT` (the release binary): status, stdout, stderr.
fn run(args: &[&str], script: &str) -> (Option<i32>, String, String) {
    let out = release()
        .args(args)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_crash_loop_of_successes_gives_up_with_1_and_says_so_to_github() {
    let (code, _, stderr) = run(&["--forever", "-n", "2", "-b", "0"], "true");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("a crash loop"), "{stderr}");
    // A crash loop of failures keeps the last run's status.
    let (code, _, stderr) = run(&["--forever", "-n", "1", "-b", "0"], "exit 3");
    assert_eq!(code, Some(3), "{stderr}");
    // The deadline reached between runs that exited 0 is giving up too.
    let (code, _, stderr) = run(&["--forever", "-b", "2s", "-d", "1s"], "true");
    assert_eq!(code, Some(1), "{stderr}");
    // Under GitHub Actions the step's `status` output says the same.
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    std::fs::write(&output, "").unwrap();
    let out = release()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output)
        .args(["--forever", "-n", "1", "-b", "0", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let written = std::fs::read_to_string(&output).unwrap();
    assert!(written.contains("status=1\n"), "{written}");
}

#[test]
fn stop_on_0_restarts_only_on_failure() {
    let (code, stdout, stderr) = run(
        &["--forever", "--stop-on", "0", "-b", "0"],
        "echo \"run $RETRY_ATTEMPT\"; [ \"$RETRY_ATTEMPT\" -ge 3 ]",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "run 1\nrun 2\nrun 3\n", "{stderr}");
    // A first run that exits 0 ends it at once.
    let (code, stdout, stderr) = run(&["--forever", "--stop-on", "0"], "echo once");
    assert_eq!((code, stdout.as_str()), (Some(0), "once\n"), "{stderr}");
    // From the variable too.
    let out = release()
        .env("RETRY_STOP_ON", "0")
        .args(["--forever", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_preset_s_deadline_does_not_apply_but_one_given_does() {
    // api-core's deadline is 2 minutes; a preset's -n does not apply either, so -n given
    // limits the loop. Without the deadline the crash loop (or a long run) decides.
    let out = release()
        .env("RETRY_PRESET", "api-core")
        .args(["--forever", "--dry-run", "--", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("deadline"), "{text}");
    let out = release()
        .args([
            "--forever",
            "--preset",
            "api-core",
            "--dry-run",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("deadline"), "{text}");
    // A deadline given (flag or variable) still ends the loop: 124 for a run it stops.
    for (var, args) in [
        (None, &["--forever", "--preset", "api-core", "-d", "1s"][..]),
        (
            Some(("RETRY_DEADLINE", "1s")),
            &["--forever", "--preset", "api-core"][..],
        ),
    ] {
        let mut cmd = release();
        if let Some((k, v)) = var {
            cmd.env(k, v);
        }
        let out = cmd.args(args).args(["--", "sleep", "30"]).output().unwrap();
        assert_eq!(out.status.code(), Some(124), "{args:?} {var:?}");
    }
}

#[test]
fn alrm_during_a_run_ends_it_with_124_as_without_forever() {
    for forever in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("runs");
        let mut args = vec!["-b", "0"];
        if forever {
            args.push("--forever");
        }
        let mut child = release_std()
            .env("LOG", &log)
            .args(&args)
            .args(["--", "sh", "-c", "echo run >> \"$LOG\"; exec sleep 60"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_lines(&log, 1);
        send(child.id(), libc::SIGALRM);
        let status = wait_with_limit(&mut child);
        assert_eq!(
            (status.code(), status.signal()),
            (Some(124), None),
            "--forever {forever}"
        );
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(stderr.contains("status 124"), "{stderr}");
    }
}

#[test]
fn a_run_that_daemonizes_is_named_on_its_line() {
    let (code, _, stderr) = run(
        &["--forever", "-n", "1", "-b", "0"],
        "sleep 60 & sleep 60 & exit 0",
    );
    assert_eq!(code, Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].contains("(stopped 2 processes it left running); restarting in"),
        "{stderr}"
    );
    assert!(
        lines[1].contains("(stopped 2 processes it left running)"),
        "{stderr}"
    );
    // Said without --verbose, and in JSON.
    let (_, _, json) = run(
        &["--forever", "-n", "1", "-b", "0", "--log-format", "json"],
        "sleep 60 & exit 0",
    );
    let wait = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "wait")
        .unwrap();
    assert_eq!(wait["left_running"], 1, "{json}");
    // A run that leaves nothing says nothing of it.
    let (_, _, stderr) = run(&["--forever", "-n", "1", "-b", "0"], "true");
    assert!(!stderr.contains("left running"), "{stderr}");
}

/// The value of the series `name` (any labels) in the Prometheus text `text`.
fn series(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn the_metrics_file_is_written_after_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("retry.prom");
    let log = dir.path().join("runs");
    let mut child = release_std()
        .env("LOG", &log)
        .args(["--forever", "-b", "0", "--metrics-file"])
        .arg(&prom)
        .args(["--", "sh", "-c"])
        // The third run stays up: the file must show the two before it while it runs.
        .arg("echo run >> \"$LOG\"; [ \"$RETRY_ATTEMPT\" -lt 3 ] && exit 4; exec sleep 60")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&log, 3);
    // Written before the third run starts, so there by now.
    let text = std::fs::read_to_string(&prom).expect("the file while the loop runs");
    assert_eq!(series(&text, "retry_attempts_total"), Some(2.0), "{text}");
    assert_eq!(series(&text, "retry_last_exit_status"), Some(4.0), "{text}");
    assert!(
        text.lines()
            .filter(|l| l.starts_with("retry_runs_total"))
            .all(|l| l.ends_with(" 0")),
        "the loop is not over: {text}"
    );
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    let text = std::fs::read_to_string(&prom).unwrap();
    // Three runs, counted once each: the writes after runs do not add up twice.
    assert_eq!(series(&text, "retry_attempts_total"), Some(3.0), "{text}");
    assert!(
        text.contains("retry_runs_total{job=\"sh\",result=\"stopped\"} 1"),
        "{text}"
    );
}

#[test]
fn death_by_sigpipe_is_retried_while_retry_s_own_outputs_are_read() {
    // Into a pipe the test reads, and into a file.
    let out = release()
        .args(["-n", "2", "-b", "0", "--", "sh", "-c", "kill -PIPE $$"])
        .output()
        .unwrap();
    // retry dies of the signal its last attempt died of.
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("killed by SIGPIPE").count(), 3, "{stderr}");
    assert!(stderr.contains("no retries left"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("out")).unwrap();
    let out = release_std()
        .args(["-n", "2", "-b", "0", "--", "sh", "-c", "kill -PIPE $$"])
        .stdout(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("killed by SIGPIPE").count(), 3, "{stderr}");
    // --forever too.
    let (_, _, stderr) = run(&["--forever", "-n", "1", "-b", "0"], "kill -PIPE $$");
    assert_eq!(stderr.matches("killed by SIGPIPE").count(), 2, "{stderr}");
    // --stop-on names it again for whoever wants the old rule.
    let (_, _, stderr) = run(&["--stop-on", "PIPE", "-b", "0"], "kill -PIPE $$");
    assert!(stderr.contains("status 141 is not retried"), "{stderr}");
}

#[test]
fn a_reader_of_retry_s_stdout_that_went_away_ends_the_retrying() {
    // retry's stdout is a pipe whose reader read one line and closed it.
    let mut child = release_std()
        .args(["-n", "5", "-b", "0", "--"])
        .args(["sh", "-c", "echo one; sleep 0.5; echo two; exit 1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "one\n");
    drop(stdout);
    let status = wait_with_limit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(stderr.matches("retry: attempt ").count(), 1, "{stderr}");
    assert!(stderr.contains("the reader of stdout is gone"), "{stderr}");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{stderr}");
}
