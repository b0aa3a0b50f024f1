//! The features around an attempt, on Windows: hooks run by `cmd.exe /C`, `--log-format json`,
//! the GitHub Actions folds, annotation, step outputs and step summary, `--stdout-on-success`,
//! `--replay-stdin`, `--chronic`, `--lock` held by another run (75), the metrics file counting
//! across runs, and 64 MiB of output passed through. The Unix side is in tests/cli/hooks.rs,
//! events.rs, folds.rs, github.rs, step_summary.rs, pipeline.rs, chronic.rs, lock.rs and
//! metrics.rs.

use std::time::Duration;

use serde_json::Value;

use crate::bench::{START, bench, retry, wait_for_file, wait_with_limit};

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn hooks_run_through_cmd_with_the_run_context() {
    let Some(b) = bench() else { return };
    let flags = [
        "-b",
        "0",
        "-n",
        "2",
        "--on-retry",
        "echo hook %RETRY_ATTEMPT% of %RETRY_MAX_ATTEMPTS% status %RETRY_LAST_STATUS%",
        "--on-give-up",
        "echo gave up after %RETRY_ATTEMPT%",
    ];
    let r = retry(b, &b.probe_args(&flags, &["exit", "3"])).run();
    assert_eq!(r.code, 3, "{r:?}");
    // A hook's stdout goes to retry's stderr.
    let hooks: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("retry: "))
        .map(str::trim_end)
        .collect();
    assert_eq!(
        hooks,
        [
            "hook 1 of 3 status 3",
            "hook 2 of 3 status 3",
            "gave up after 3"
        ],
        "{r:?}"
    );
    assert_eq!(r.stdout, "", "{r:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn json_events_describe_the_run() {
    let Some(b) = bench() else { return };
    let flags = ["--log-format", "json", "-b", "0", "-n", "1"];
    let r = retry(b, &b.probe_args(&flags, &["exit", "3221225477"])).run();
    assert_eq!(r.code, 3221225477, "{r:?}");
    let events: Vec<Value> = r
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "start",
            "attempt_start",
            "attempt_end",
            "wait",
            "attempt_start",
            "attempt_end",
            "give_up"
        ],
        "{r:?}"
    );
    let run_id = &events[0]["run_id"];
    assert!(events.iter().all(|e| &e["run_id"] == run_id), "{r:?}");
    assert_eq!(events[2]["status"], 3221225477u64, "{r:?}");
    assert_eq!(events[2]["outcome"], "exited", "{r:?}");
    assert_eq!(events[6]["status"], 3221225477u64, "{r:?}");
    assert_eq!(events[6]["attempts"], 2, "{r:?}");
    assert_eq!(events[6]["reason"], "no retries left", "{r:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn github_folds_annotation_and_step_outputs() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("github_output");
    std::fs::write(&output, "").unwrap();
    let r = retry(b, &b.probe_args(&["-b", "0", "-n", "1"], &["exit", "3"]))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", b.win(&output))
        .run();
    assert_eq!(r.code, 3, "{r:?}");
    let stderr: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(stderr[0], "::group::attempt 1 of 2", "{r:?}");
    assert_eq!(stderr[1], "::endgroup::", "{r:?}");
    assert!(
        stderr[2].starts_with("retry: attempt 1 of 2: ") && stderr[2].ends_with("retrying in 0s"),
        "{r:?}"
    );
    assert!(
        stderr
            .last()
            .unwrap()
            .starts_with("::error title=retry%3A "),
        "{r:?}"
    );
    let outputs = std::fs::read_to_string(&output)
        .unwrap()
        .replace("\r\n", "\n");
    let lines: Vec<&str> = outputs.lines().collect();
    assert!(lines.contains(&"attempts=2"), "{outputs:?}");
    assert!(lines.contains(&"status=3"), "{outputs:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn stdout_on_success_prints_only_the_successful_attempts_stdout() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let count = b.win(&dir.path().join("count"));
    let flags = ["--stdout-on-success", "-b", "0", "-n", "2"];
    let r = retry(b, &b.probe_args(&flags, &["fail-until", "2", &count])).run();
    assert_eq!((r.code, r.stdout.as_str()), (0, "run 2\n"), "{r:?}");
    // A failed attempt's held stdout goes to stderr: nothing is lost.
    assert!(r.stderr.lines().any(|l| l == "run 1"), "{r:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn replay_stdin_gives_every_attempt_the_same_stdin() {
    let Some(b) = bench() else { return };
    let flags = ["--replay-stdin", "--successes", "3", "-b", "0"];
    let r = retry(b, &b.probe_args(&flags, &["stdin-copy"]))
        .stdin(b"line1\nline2\n")
        .run();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "line1\nline2\n".repeat(3), "{r:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn a_lock_held_by_another_run_is_75_and_nothing_runs() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("job.lock");
    let mut holder = retry(
        b,
        &b.probe_args(&["--lock", &b.win(&lock)], &["sleep", "20"]),
    )
    .spawn();
    // The holder writes its pid into the lock file once it holds the lock.
    let holder_pid = wait_for_file(&lock, Duration::from_secs(10) + START, &mut holder);
    let r = retry(
        b,
        &b.probe_args(&["--lock", &b.win(&lock)], &["print", "ran"]),
    )
    .run();
    let _ = holder.kill();
    let _ = wait_with_limit(&mut holder, std::time::Instant::now() + START);
    assert_eq!(r.code, 75, "{r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
    assert_eq!(r.lines().len(), 1, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("is held by pid {}", holder_pid.trim())),
        "{r:?}"
    );
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn huge_output_passes_through_whole() {
    let Some(b) = bench() else { return };
    let size = 64 << 20;
    let r = retry(b, &b.probe_args(&["-n", "0"], &["spew", &size.to_string()])).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.len(), size, "{}", r.stderr);
    // probe spew's lines: 99 `x` and a newline, the last one shorter.
    let line = format!("{}\n", "x".repeat(99));
    let chunks: Vec<&[u8]> = r.stdout.as_bytes().chunks(100).collect();
    let (last, whole) = chunks.split_last().expect("output");
    assert!(whole.iter().all(|c| *c == line.as_bytes()));
    assert!(last.ends_with(b"\n") && last[..last.len() - 1].iter().all(|&c| c == b'x'));
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn chronic_prints_nothing_on_success_and_everything_on_failure() {
    let Some(b) = bench() else { return };
    let flags = ["--chronic", "-b", "0", "-n", "1"];
    let r = retry(b, &b.probe_args(&flags, &["print", "quiet"])).run();
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let dir = tempfile::tempdir().unwrap();
    let count = b.win(&dir.path().join("count"));
    let r = retry(b, &b.probe_args(&flags, &["fail-until", "100", &count])).run();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "run 1\nrun 2\n", "{r:?}");
    let lines = r.lines();
    assert_eq!(lines.len(), 3, "{r:?}");
    assert!(lines[0].contains("attempt 1 of 2"), "{r:?}");
    assert!(
        lines[2].starts_with("retry: gave up after 2 attempts"),
        "{r:?}"
    );
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn github_step_summary_is_a_table_of_the_attempts() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let r = retry(b, &b.probe_args(&["-b", "0", "-n", "1"], &["exit", "3"]))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", b.win(&summary))
        .run();
    assert_eq!(r.code, 3, "{r:?}");
    let text = std::fs::read_to_string(&summary)
        .unwrap()
        .replace("\r\n", "\n");
    assert!(text.contains("### retry: "), "{text}");
    assert!(
        text.contains("| 1 | exited with status 3 |")
            && text.contains("| 2 | exited with status 3 |"),
        "{text}"
    );
    assert!(text.contains("Gave up after 2 attempts in "), "{text}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn the_metrics_file_counts_runs_across_runs() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("retry.prom");
    let flags = ["--metrics-file", &b.win(&metrics), "-b", "0", "-n", "1"];
    let r = retry(b, &b.probe_args(&flags, &["exit", "3"])).run();
    assert_eq!(r.code, 3, "{r:?}");
    let r = retry(b, &b.probe_args(&flags, &["exit", "0"])).run();
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&metrics).unwrap();
    // `NAME{LABELS} VALUE` for the sample whose name and labels contain `what`.
    let value = |what: &[&str]| -> String {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .find(|l| what.iter().all(|w| l.contains(w)))
            .and_then(|l| l.rsplit(' ').next())
            .unwrap_or_else(|| panic!("no {what:?} in {text}"))
            .to_string()
    };
    assert_eq!(value(&["retry_runs_total{", "result=\"gave_up\""]), "1");
    assert_eq!(value(&["retry_runs_total{", "result=\"success\""]), "1");
    assert_eq!(value(&["retry_attempts_total{"]), "3");
    assert_eq!(value(&["retry_last_exit_status{"]), "0");
}
