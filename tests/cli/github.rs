//! GitHub Actions, with `GITHUB_ACTIONS=true` and a fake `GITHUB_OUTPUT` file: a `::warning`
//! after a success that needed retries, an `::error` on giving up, `attempts=N` and `status=S`
//! appended to the file; nothing with `--no-github` or outside GitHub Actions; a file that
//! cannot be written is reported and never ends in 0.

use std::path::Path;

use crate::helpers::retry;

/// A command that fails until attempt `ok` (exit 3), then succeeds.
fn until(ok: u32) -> String {
    format!("test $RETRY_ATTEMPT -ge {ok} || exit 3")
}

/// Runs `retry -b 0 ARGS -- sh -c SCRIPT` under GitHub Actions with `GITHUB_OUTPUT=output`;
/// returns the status and stderr.
fn in_actions(output: &Path, args: &[&str], script: &str) -> (Option<i32>, String) {
    let out = retry()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", output)
        .args(["-b", "0"])
        .args(args)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `cmd` with `GITHUB_OUTPUT=output` around a command that succeeds at attempt 2, and
/// checks that it succeeded, printed no workflow command and wrote no step output.
fn leaves_no_trace(cmd: &mut assert_cmd::Command, output: &Path) {
    let out = cmd
        .env("GITHUB_OUTPUT", output)
        .args(["-b", "0", "--", "sh", "-c", &until(2)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(commands(&String::from_utf8_lossy(&out.stderr)).is_empty());
    assert!(!output.exists());
}

/// The workflow command lines of `stderr` but the folds (`::group::`, `::endgroup::`: see
/// folds.rs).
fn commands(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("::") && !l.contains("group::"))
        .collect()
}

#[test]
fn a_success_after_retries_is_a_warning_with_the_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    std::fs::write(&output, "earlier=step\n").unwrap();
    let (code, stderr) = in_actions(&output, &[], &until(3));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        commands(&stderr),
        [
            "::warning title=retry%3A sh::sh succeeded on attempt 3 after failures (statuses: 3, 3, 0)"
        ],
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "earlier=step\nattempts=3\nstatus=0\n"
    );
}

#[test]
fn giving_up_is_an_error_and_a_first_success_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let (code, stderr) = in_actions(&output, &["-n", "1"], "exit 7");
    assert_eq!(code, Some(7), "{stderr}");
    assert_eq!(
        commands(&stderr),
        [
            "::error title=retry%3A sh::sh failed: gave up after 2 attempts (no retries left); \
          statuses: 7, 7"
        ],
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "attempts=2\nstatus=7\n"
    );

    let output = dir.path().join("first");
    let (code, stderr) = in_actions(&output, &[], "true");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(commands(&stderr).is_empty(), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "attempts=1\nstatus=0\n"
    );
}

#[test]
fn no_github_and_its_variable_turn_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let (code, stderr) = in_actions(&output, &["--no-github", "-n", "1"], "exit 7");
    assert_eq!(code, Some(7));
    assert!(commands(&stderr).is_empty(), "{stderr}");
    assert!(!output.exists());

    leaves_no_trace(
        retry()
            .env("GITHUB_ACTIONS", "true")
            .env("RETRY_NO_GITHUB", "true"),
        &output,
    );
}

#[test]
fn outside_github_actions_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    leaves_no_trace(&mut retry(), &output);
}

#[test]
fn an_output_file_that_cannot_be_written_is_never_an_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("no-such-dir/output");
    let (code, stderr) = in_actions(&output, &[], &until(2));
    assert_eq!(code, Some(125), "{stderr}");
    let complaint: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("GITHUB_OUTPUT") && !l.starts_with("::"))
        .collect();
    assert_eq!(complaint.len(), 1, "{stderr}");
    assert!(
        complaint[0].starts_with("retry: cannot append the step outputs to GITHUB_OUTPUT ("),
        "{stderr}"
    );
    // The annotation still went out, after the outputs: an error giving the status retry
    // exits with.
    let annotations = commands(&stderr);
    assert_eq!(annotations.len(), 1, "{stderr}");
    assert!(annotations[0].starts_with("::error "), "{stderr}");
    assert!(
        annotations[0].contains("but retry exits with status 125: cannot append the step outputs"),
        "{stderr}"
    );

    // A failure keeps its own status.
    let (code, stderr) = in_actions(&output, &["-n", "0"], "exit 7");
    assert_eq!(code, Some(7), "{stderr}");
    assert!(
        stderr.contains("cannot append the step outputs"),
        "{stderr}"
    );
}
