//! The closing line: a run that needed more than one attempt ends with one line naming the
//! attempt count and the time the whole run took, written as people read durations (`1.2s`,
//! not `1.200s`); a first-attempt success prints nothing; `-q` silences it.

use crate::helpers::{human_secs, retry};

/// Fails until attempt `ok` (0: never), saying nothing.
fn until(ok: u32) -> String {
    format!("[ {ok} -ne 0 ] && [ \"$RETRY_ATTEMPT\" -ge {ok} ]")
}

/// Runs `retry FLAGS -- sh -c SCRIPT`; returns (status, stderr).
fn run(flags: &[&str], script: &str) -> (Option<i32>, String) {
    let out = retry()
        .args(flags)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(out.stdout.is_empty(), "{out:?}");
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// The elapsed time of a closing line that starts with `head` and goes on with `tail`.
fn elapsed<'a>(line: &'a str, head: &str, tail: &str) -> &'a str {
    line.strip_prefix(head)
        .and_then(|rest| rest.strip_suffix(tail))
        .unwrap_or_else(|| panic!("not '{head}T{tail}': {line:?}"))
}

#[test]
fn a_success_after_retries_says_on_which_attempt_and_after_how_long() {
    // Two waits of 0.6 s: the run takes at least 1.2 s.
    let flags = ["-b", "0.6s", "-c", "0.6s", "-j", "none", "-n", "3"];
    let (code, stderr) = run(&flags, &until(3));
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert_eq!(
        lines[0],
        "retry: attempt 1 of 4: sh exited with status 1; retrying in 600ms"
    );
    let took = elapsed(lines[2], "retry: succeeded on attempt 3 of 4 after ", "");
    // Human form: no padding zeros, a unit people use.
    assert!(!took.contains(".000") && !took.ends_with(".0s"), "{took}");
    let secs = human_secs(took);
    assert!((1.2..120.0).contains(&secs), "{took}");
}

#[test]
fn giving_up_says_how_many_attempts_in_how_long_and_why() {
    let flags = ["-b", "0.6s", "-c", "0.6s", "-j", "none", "-n", "1"];
    let (code, stderr) = run(&flags, &format!("{}; exit 7", until(0)));
    assert_eq!(code, Some(7));
    let last = stderr.lines().last().unwrap();
    let took = elapsed(
        last,
        "retry: gave up after 2 attempts in ",
        ": no retries left",
    );
    assert!((0.6..120.0).contains(&human_secs(took)), "{last}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("gave up")).count(),
        1,
        "{stderr}"
    );
}

#[test]
fn one_attempt_prints_nothing_and_quiet_silences_the_closing_line() {
    // First-attempt success: not a byte, as today.
    let (code, stderr) = run(&["-b", "0"], "true");
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    // One attempt that fails and no retries: the attempt's line and the closing line.
    let (code, stderr) = run(&["-n", "0"], "exit 3");
    assert_eq!(code, Some(3));
    assert!(
        stderr.ends_with(": no retries left\n")
            && stderr.contains("retry: gave up after 1 attempt in "),
        "{stderr}"
    );
    // -q: neither the progress lines nor the closing line, success or not.
    let (code, stderr) = run(&["-q", "-b", "0", "-n", "2"], &until(2));
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    let (code, stderr) = run(&["-q", "-b", "0", "-n", "2"], &until(0));
    assert_eq!((code, stderr.as_str()), (Some(1), ""));
}
