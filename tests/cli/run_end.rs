//! The end of a run, once the attempts are over: what may still turn a success into a failure
//! (the metrics file, `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT` that cannot be written) comes
//! before anything that describes how the run ended, so that `--chronic` drops its held output
//! only for a run that really exits 0, and the step outputs, the annotation and the summary
//! give the status retry actually exits with. GitHub's annotation stays bounded however many
//! attempts the run made.

use std::path::Path;

use crate::helpers::release;

/// A command that prints on both streams, then makes a directory at `path` (where the metrics
/// file is to go, so that writing it at the end fails) and exits with `status` from attempt
/// `from` on (1 before).
fn spoils_the_metrics_file(path: &Path, from: u32, status: u32) -> String {
    format!(
        "echo \"out $RETRY_ATTEMPT\"; echo \"err $RETRY_ATTEMPT\" >&2; \
         [ $RETRY_ATTEMPT -ge {from} ] || exit 1; mkdir '{}'; exit {status}",
        path.display()
    )
}

#[test]
fn chronic_writes_out_what_it_held_when_the_metrics_file_fails_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("job.prom");
    let out = release()
        .args(["--chronic", "-b", "0", "--metrics-file"])
        .arg(&metrics)
        .args(["--", "sh", "-c", &spoils_the_metrics_file(&metrics, 2, 0)])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    // Nothing held is dropped: both attempts' output, and retry's lines, come out.
    assert_eq!(stdout, "out 1\nout 2\n", "{stderr}");
    assert!(
        stderr.contains("err 1\n") && stderr.contains("err 2\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("retry: attempt 1 of 6: sh exited with status 1; retrying in 0s\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("retry: cannot write --metrics-file "),
        "{stderr}"
    );
}

#[test]
fn github_outputs_annotation_and_summary_give_the_status_retry_exits_with() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("job.prom");
    let output = dir.path().join("output");
    let summary = dir.path().join("summary.md");
    let out = release()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["-b", "0", "--metrics-file"])
        .arg(&metrics)
        .args(["--", "sh", "-c", &spoils_the_metrics_file(&metrics, 2, 0)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "attempts=2\nstatus=125\n"
    );
    // The attempts succeeded, retry did not: an error, not a warning of a success.
    let commands: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("::") && !l.contains("group::"))
        .collect();
    assert_eq!(commands.len(), 1, "{stderr}");
    assert!(
        commands[0].starts_with("::error title=retry%3A sh::"),
        "{stderr}"
    );
    assert!(commands[0].contains("status 125"), "{stderr}");
    assert!(commands[0].contains("--metrics-file"), "{stderr}");
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("Succeeded on attempt 2 of 6"), "{text}");
    assert!(text.contains("status 125"), "{text}");
    assert!(text.contains("metrics"), "{text}");
}

#[test]
fn a_failure_keeps_its_status_in_the_outputs_when_the_metrics_file_fails_too() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("job.prom");
    let output = dir.path().join("output");
    let out = release()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output)
        .args(["-b", "0", "-n", "1", "--metrics-file"])
        .arg(&metrics)
        .args(["--", "sh", "-c", &spoils_the_metrics_file(&metrics, 2, 7)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "attempts=2\nstatus=7\n"
    );
}

#[test]
fn the_error_annotation_stays_under_4_kib_however_many_attempts() {
    // 3,000 attempts: their statuses alone, "1, " each, took 9 KB on one line.
    let out = release()
        .env("GITHUB_ACTIONS", "true")
        .args(["-b", "0", "-n", "2999", "--", "sh", "-c", "exit 1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_eq!(errors.len(), 1);
    let line = errors[0];
    assert!(line.len() < 4096, "{} bytes: {line}", line.len());
    assert!(line.contains("gave up after 3000 attempts"), "{line}");
    // The first and the last statuses, and how many are left out between them.
    let ten = ["1"; 10].join(", ");
    assert!(
        line.ends_with(&format!("statuses: {ten}, ... (2980 more), {ten}")),
        "{line}"
    );
}

#[test]
fn chronic_still_says_the_metrics_files_warnings_after_a_success() {
    // A warning never turns a success into a failure: it is said after --chronic dropped a
    // successful run's held output, not dropped with it.
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("job.txt");
    let out = release()
        .args(["--chronic", "--metrics-file"])
        .arg(&metrics)
        .args(["--", "sh", "-c", "echo out; echo err >&2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("retry: warning: --metrics-file "),
        "{stderr}"
    );
    assert!(metrics.exists());
}
