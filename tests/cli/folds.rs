//! CI folds around each attempt's output: GitHub Actions' `::group::` / `::endgroup::`, GitLab's
//! collapsible sections, Buildkite's `--- ` headers. Read as a runner reads a step's stdout and
//! stderr when they share one pipe, so the order checked is the order of the writes: each fold
//! holds exactly its attempt's lines, and retry's own line about the attempt comes after it.
//! `--no-ci` (or `RETRY_NO_CI`) turns all three off, `--no-github` GitHub Actions only.

use std::io::Read;
use std::process::Stdio;

use crate::helpers::{release, release_std, retry_std, timeless, wait_with_limit};

/// Says on stdout then on stderr which attempt it is; succeeds from attempt 3.
const THIRD_TIME: &str = "echo \"out $RETRY_ATTEMPT\"; echo \"err $RETRY_ATTEMPT\" >&2; \
                          test $RETRY_ATTEMPT -ge 3";

/// Runs `retry ARGS` with the variables `env`, its stdout and stderr one pipe (as `2>&1`);
/// returns the status and everything read from the pipe.
fn merged(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String) {
    merged_from(retry_std(), env, args)
}

/// [`merged`] with the release build.
fn merged_release(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String) {
    merged_from(release_std(), env, args)
}

/// [`merged`] with `cmd` as retry.
fn merged_from(
    mut cmd: std::process::Command,
    env: &[(&str, &str)],
    args: &[&str],
) -> (Option<i32>, String) {
    let (read, write) = nix::unistd::pipe().unwrap();
    cmd.envs(env.iter().copied())
        .args(args)
        .stdout(Stdio::from(write.try_clone().unwrap()))
        .stderr(Stdio::from(write));
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let mut text = String::new();
    std::fs::File::from(read).read_to_string(&mut text).unwrap();
    (wait_with_limit(&mut child).code(), text)
}

/// `-b 0 -n 2 -- sh -c THIRD_TIME` plus `flags` first.
fn third_time(flags: &[&str]) -> Vec<String> {
    flags
        .iter()
        .chain(&["-b", "0", "-n", "2", "--", "sh", "-c", THIRD_TIME])
        .map(|s| s.to_string())
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn github_groups_hold_exactly_each_attempts_lines() {
    let (code, text) = merged(&[("GITHUB_ACTIONS", "true")], &strs(&third_time(&[])));
    assert_eq!(code, Some(0), "{text}");
    let mut want = String::new();
    for n in 1..=2 {
        want += &format!("::group::attempt {n} of 3\nout {n}\nerr {n}\n::endgroup::\n");
        want += &format!("retry: attempt {n} of 3: sh exited with status 1; retrying in 0s\n");
    }
    // The last attempt (the one that explains a failure) is not folded away.
    want += "attempt 3 of 3\nout 3\nerr 3\n";
    want += "retry: succeeded on attempt 3 of 3 after T\n";
    want += "::warning title=retry%3A sh::sh succeeded on attempt 3 after failures \
             (statuses: 1, 1, 0)\n";
    assert_eq!(timeless(&text), want);
}

#[test]
fn github_groups_wait_for_output_retry_passes_on_after_the_attempt() {
    // A held stdout is written after its attempt ended (to stderr when it failed): still
    // inside the attempt's group.
    let (code, text) = merged(
        &[("GITHUB_ACTIONS", "true")],
        &strs(&third_time(&["--stdout-on-success"])),
    );
    assert_eq!(code, Some(0), "{text}");
    let want_first = "::group::attempt 1 of 3\nerr 1\nout 1\n::endgroup::\n\
                      retry: attempt 1 of 3: sh exited with status 1; retrying in 0s\n";
    assert!(text.starts_with(want_first), "{text}");
    // Two pumps pass stdout and stderr on: their order between them is the pumps', but
    // both are in the group.
    let (code, text) = merged(
        &[("GITHUB_ACTIONS", "true")],
        &strs(&third_time(&["--retry-if-output", "^never$"])),
    );
    assert_eq!(code, Some(0), "{text}");
    for n in 1..=2 {
        let group = text
            .split_once(&format!("::group::attempt {n} of 3\n"))
            .unwrap()
            .1
            .split_once("::endgroup::\n")
            .unwrap()
            .0;
        let mut lines: Vec<&str> = group.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, [format!("err {n}"), format!("out {n}")], "{text}");
    }
    let last = text.split_once("\nattempt 3 of 3\n").unwrap().1;
    let mut lines: Vec<&str> = last.lines().take(2).collect();
    lines.sort_unstable();
    assert_eq!(lines, ["err 3", "out 3"], "{text}");
    let (last, after) = last.split_once("retry: succeeded on attempt 3").unwrap();
    assert!(!last.contains("::"), "{text}");
    assert!(!after.contains("group::"), "{text}");
}

#[test]
fn gitlab_sections_around_each_attempt() {
    let (code, text) = merged(&[("GITLAB_CI", "true")], &strs(&third_time(&[])));
    assert_eq!(code, Some(0), "{text}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3 * 4 + 2 + 1, "{text:?}");
    let mut run = None;
    for n in 1..=3u64 {
        let at = (n as usize - 1) * 5;
        let (start, end) = (lines[at], lines[at + 3]);
        assert_eq!(
            &lines[at + 1..at + 3],
            [format!("out {n}"), format!("err {n}")]
        );
        // ESC[0Ksection_start:TIME:NAME[collapsed=true]\rESC[0Kattempt N of 3
        let rest = start.strip_prefix("\x1b[0Ksection_start:").unwrap();
        let (time, rest) = rest.split_once(':').unwrap();
        // The last attempt's section is open in the log; the others are collapsed.
        let options = if n < 3 { "[collapsed=true]" } else { "" };
        let (name, header) = rest.split_once(&format!("{options}\r\x1b[0K")).unwrap();
        assert_eq!(header, format!("attempt {n} of 3"));
        let suffix = name.strip_prefix(&format!("retry_attempt_{n}_")).unwrap();
        assert!(
            suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}"
        );
        assert_eq!(*run.get_or_insert(suffix.to_string()), suffix, "one run");
        let started: u64 = time.parse().unwrap();
        assert!(started.abs_diff(now) < 120, "{started} vs {now}");
        // ESC[0Ksection_end:TIME:NAME\rESC[0K
        let rest = end.strip_prefix("\x1b[0Ksection_end:").unwrap();
        let (time, rest) = rest.split_once(':').unwrap();
        assert_eq!(rest, format!("{name}\r\x1b[0K"));
        assert!(time.parse::<u64>().unwrap() >= started);
        if n < 3 {
            assert!(lines[at + 4].starts_with(&format!("retry: attempt {n} of 3: ")));
        }
    }
}

#[test]
fn buildkite_headers_and_the_failing_attempt_opened() {
    let args = [
        "-b",
        "0",
        "-n",
        "1",
        "--",
        "sh",
        "-c",
        "echo \"out $RETRY_ATTEMPT\"; exit 4",
    ];
    let (code, text) = merged(&[("BUILDKITE", "true")], &args);
    assert_eq!(code, Some(4), "{text}");
    assert_eq!(
        timeless(&text),
        "--- attempt 1 of 2\nout 1\nretry: attempt 1 of 2: sh exited with status 4; retrying \
         in 0s\n--- attempt 2 of 2\nout 2\nretry: attempt 2 of 2: sh exited with status 4\n\
         retry: gave up after 2 attempts in T: no retries left\n^^^ +++\n"
    );
}

#[test]
fn no_ci_turns_every_system_off_and_no_github_only_github() {
    let systems = [
        ("GITHUB_ACTIONS", "true"),
        ("GITLAB_CI", "true"),
        ("BUILDKITE", "true"),
    ];
    let merged = |env: &[(&str, &str)], args: &[&str]| {
        let (code, text) = merged(env, args);
        (code, timeless(&text))
    };
    let plain = merged(&[], &strs(&third_time(&[])));
    assert_eq!(plain.0, Some(0));
    for system in systems {
        let quiet = merged(&[system], &strs(&third_time(&["--no-ci"])));
        assert_eq!(quiet, plain, "--no-ci under {system:?}");
        let quiet = merged(&[system, ("RETRY_NO_CI", "1")], &strs(&third_time(&[])));
        assert_eq!(quiet, plain, "RETRY_NO_CI under {system:?}");
    }
    assert_eq!(
        merged(&[systems[0]], &strs(&third_time(&["--no-github"]))),
        plain
    );
    let (_, gitlab) = merged(&[systems[1]], &strs(&third_time(&["--no-github"])));
    assert_eq!(gitlab.matches("section_start:").count(), 3, "{gitlab:?}");
}

#[test]
fn a_first_attempt_success_is_one_fold_and_no_annotation() {
    let (code, text) = merged(
        &[("GITHUB_ACTIONS", "true")],
        &["--", "sh", "-c", "echo fine"],
    );
    assert_eq!(code, Some(0));
    assert_eq!(text, "::group::attempt 1 of 6\nfine\n::endgroup::\n");
}

#[test]
fn markers_in_the_commands_own_output_pass_through_and_ours_stay_whole() {
    // The command prints fold markers of its own: they are its output, passed on as they are;
    // retry's markers around it are still there, one pair per attempt, and a GitLab section
    // end of its own cannot end retry's, whose name carries the run's id. (`-n 1`: attempt 1
    // of 2 may not be the last, so it is folded.)
    let script = "echo '::endgroup::'; \
                  printf '\\033[0Ksection_end:1:retry_attempt_1\\r\\033[0K\\n'; \
                  echo '--- attempt 9 of 9'";
    let own = "::endgroup::\n\x1b[0Ksection_end:1:retry_attempt_1\r\x1b[0K\n--- attempt 9 of 9\n";
    let run = |system: &str| {
        let (code, text) = merged(&[(system, "true")], &["-n", "1", "--", "sh", "-c", script]);
        assert_eq!(code, Some(0), "{text:?}");
        text
    };
    assert_eq!(
        run("GITHUB_ACTIONS"),
        format!("::group::attempt 1 of 2\n{own}::endgroup::\n")
    );
    assert_eq!(run("BUILDKITE"), format!("--- attempt 1 of 2\n{own}"));
    let text = run("GITLAB_CI");
    let (start, rest) = text.split_once('\n').unwrap();
    assert!(start.starts_with("\x1b[0Ksection_start:"), "{text:?}");
    assert!(
        start.ends_with("[collapsed=true]\r\x1b[0Kattempt 1 of 2"),
        "{text:?}"
    );
    let end = rest.strip_prefix(own).unwrap_or_else(|| panic!("{text:?}"));
    let name = start.split(':').nth(2).unwrap().split('[').next().unwrap();
    assert!(name.len() > "retry_attempt_1_".len(), "{name}");
    assert!(
        end.starts_with("\x1b[0Ksection_end:") && end.ends_with(&format!(":{name}\r\x1b[0K\n")),
        "{text:?}"
    );
}

#[test]
fn the_attempt_known_to_be_the_last_is_neither_folded_nor_collapsed() {
    // Attempt 1 of 6 is the last when the deadline comes before the least delay the schedule
    // can draw next (`--jitter none`: 5 s, the deadline 2 s away): it is not folded away.
    let args = [
        "-d",
        "2s",
        "-b",
        "5s",
        "-j",
        "none",
        "--",
        "sh",
        "-c",
        "echo out; exit 3",
    ];
    let (code, text) = merged_release(&[("GITHUB_ACTIONS", "true")], &args);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.starts_with("attempt 1 of 6\nout\n"), "{text}");
    assert!(!text.contains("::group::"), "{text}");
    assert!(!text.contains("::endgroup::"), "{text}");
    let (code, text) = merged_release(&[("GITLAB_CI", "true")], &args);
    assert_eq!(code, Some(3), "{text}");
    assert_eq!(text.matches("section_start:").count(), 1, "{text}");
    assert!(!text.contains("collapsed"), "{text}");
    assert_eq!(text.matches("section_end:").count(), 1, "{text}");
    // With full jitter the next delay may be 0: attempt 1 may not be the last, so it folds.
    let args = ["-d", "2s", "-b", "5s", "--", "sh", "-c", "echo out; exit 3"];
    let (_, text) = merged_release(&[("GITHUB_ACTIONS", "true")], &args);
    assert!(
        text.starts_with("::group::attempt 1 of 6\nout\n::endgroup::\n"),
        "{text}"
    );
    // Attempt N of N under a plain run: the last.
    let (code, text) = merged_release(
        &[("GITHUB_ACTIONS", "true")],
        &["-n", "0", "--", "sh", "-c", "echo out; exit 3"],
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(text.starts_with("attempt 1 of 1\nout\n"), "{text}");
    assert!(!text.contains("group::"), "{text}");
}

#[test]
fn a_marker_starts_a_line_after_output_left_without_a_newline() {
    // curl -w '%{http_code}' prints 503 with no newline: the fold's end marker written after
    // it would sit in the middle of that line, unseen by the CI system, and every later line,
    // retry's own included, would be in the fold. retry stands between the attempt and the
    // log, and ends such a line first. One stream (GitLab, Buildkite, `2>&1`):
    let script = "printf 503; printf x >&2; exit 22";
    let args = ["-b", "0", "-n", "1", "--", "sh", "-c", script];
    for system in ["GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE"] {
        let (code, text) = merged_release(&[(system, "true")], &args);
        assert_eq!(code, Some(22), "{text:?}");
        for line in text.lines() {
            for marker in [
                "::endgroup::",
                "::group::",
                "section_end:",
                "section_start:",
                "--- ",
            ] {
                if let Some(at) = line.find(marker) {
                    let before = &line[..at];
                    assert!(
                        before.is_empty() || before == "\x1b[0K",
                        "{system}: a marker inside a line: {line:?} in {text:?}"
                    );
                }
            }
            assert!(
                !line.contains("retry:") || line.starts_with("retry:"),
                "{system}: {line:?} in {text:?}"
            );
        }
        assert!(
            text.contains("503x\n") || text.contains("503\nx\n"),
            "{system}: {text:?}"
        );
    }
    // Two streams (GitHub reads stdout and stderr apart): each ends its own last line.
    let out = release()
        .env("GITHUB_ACTIONS", "true")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(22));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "503\n503\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        timeless(&stderr).starts_with("::group::attempt 1 of 2\nx\n::endgroup::\nretry: "),
        "{stderr:?}"
    );
    // Outside CI nothing is added: the output is the attempt's, byte for byte.
    let out = release().args(args).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "503503");
}
