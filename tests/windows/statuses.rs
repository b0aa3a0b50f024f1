//! Exit statuses and launches on Windows: every status passed through whole (all 32 bits),
//! attempts counted, a command that is not found (127) or cannot be run (126) never retried,
//! `PATHEXT` lookup (a `.cmd` found on `PATH` and run through cmd), `RETRY_ATTEMPT`, and the
//! refusals (125): bad flags, and the flags Windows cannot serve. The Unix side of each is in
//! tests/cli/outcomes.rs, fidelity.rs and cli_errors.rs.

use crate::bench::{bench, retry};

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn exit_statuses_pass_through_whole() {
    let Some(b) = bench() else { return };
    // 256 has a zero low byte; 3221225477 is 0xC0000005, STATUS_ACCESS_VIOLATION.
    for code in ["0", "3", "255", "256", "3221225477"] {
        let r = retry(b, &b.probe_args(&["-b", "0", "-n", "0"], &["exit", code])).run();
        assert_eq!(r.code.to_string(), code, "{r:?}");
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn a_failing_command_is_run_once_more_per_retry() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let args = b.probe_args(
        &["-b", "0", "-n", "2"],
        &["fail-until", "100", &b.win(&count)],
    );
    let r = retry(b, &args).run();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 3);
    assert_eq!(r.stdout, "run 1\nrun 2\nrun 3\n", "{r:?}");
    let lines = r.lines();
    assert_eq!(lines.len(), 4, "{r:?}");
    assert!(lines[0].contains("attempt 1 of 3") && lines[0].contains("status 1; retrying in 0s"));
    assert!(lines[2].contains("attempt 3 of 3"), "{lines:?}");
    assert!(
        lines[3].starts_with("retry: gave up after 3 attempts in "),
        "{lines:?}"
    );

    // Success on the second attempt ends it there.
    let count = dir.path().join("count2");
    let args = b.probe_args(
        &["-b", "0", "-n", "5"],
        &["fail-until", "2", &b.win(&count)],
    );
    let r = retry(b, &args).run();
    assert_eq!((r.code, r.stdout.as_str()), (0, "run 1\nrun 2\n"), "{r:?}");
    assert!(
        r.lines()
            .last()
            .unwrap()
            .starts_with("retry: succeeded on attempt 2 of 6 after "),
        "{r:?}"
    );
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn a_command_not_found_is_127_and_never_retried() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let missing = b.win(&dir.path().join("missing.exe"));
    for program in ["no-such-program-xyz", missing.as_str()] {
        let r = retry(b, &["-b", "0", "--retry-on", "1-255", "--", program]).run();
        assert_eq!(r.code, 127, "{program}: {r:?}");
        assert!(r.stderr.contains(program), "{r:?}");
        assert!(!r.stderr.contains("retrying"), "{r:?}");
        assert!(r.stderr.contains("gave up after 1 attempt in "), "{r:?}");
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn a_command_that_cannot_be_run_is_126_and_never_retried() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a program\n").unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for path in [&text, &folder] {
        let program = b.win(path);
        let r = retry(b, &["-b", "0", "--retry-on", "1-255", "--", &program]).run();
        assert_eq!(r.code, 126, "{program}: {r:?}");
        assert!(r.stderr.contains(&program), "{r:?}");
        assert!(!r.stderr.contains("retrying"), "{r:?}");
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn pathext_finds_a_cmd_script_on_path_and_runs_it_through_cmd() {
    let Some(b) = bench() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("build.cmd"),
        "@echo off\r\necho built %1 on attempt %RETRY_ATTEMPT%\r\nexit /b 7\r\n",
    )
    .unwrap();
    let r = retry(b, &["-b", "0", "-n", "1", "--", "build", "target"])
        .path_dir(dir.path())
        .run();
    assert_eq!(r.code, 7, "{r:?}");
    assert_eq!(
        r.stdout, "built target on attempt 1\nbuilt target on attempt 2\n",
        "{r:?}"
    );
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn the_attempt_sees_its_number_and_the_run_context() {
    let Some(b) = bench() else { return };
    for (name, want) in [
        ("RETRY_ATTEMPT", "1"),
        ("RETRY_MAX_ATTEMPTS", "4"),
        ("RETRY_INHERITED", "kept"),
    ] {
        let args = b.probe_args(&["-b", "0", "-n", "3"], &["env", name]);
        // RETRY_INHERITED: the attempt inherits retry's environment.
        let r = retry(b, &args).env("RETRY_INHERITED", "kept").run();
        assert_eq!((r.code, r.stdout.trim_end()), (0, want), "{name}: {r:?}");
    }
    let r = retry(
        b,
        &b.probe_args(&["-b", "0", "-n", "0"], &["env", "RETRY_RUN_ID"]),
    )
    .run();
    assert_eq!(r.stdout.trim_end().len(), 36, "a UUID: {r:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn bad_flags_are_125_with_one_line_and_nothing_runs() {
    let Some(b) = bench() else { return };
    for flags in [
        &["--bogus"][..],
        &["-n", "abc"],
        &["--jitter", "sideways"],
        &["-t", "-1s"],
    ] {
        let r = retry(b, &b.probe_args(flags, &["print", "ran"])).run();
        assert_eq!(r.code, 125, "{flags:?}: {r:?}");
        assert_eq!(r.stdout, "", "{flags:?}: {r:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{flags:?}: {r:?}");
        assert!(r.stderr.starts_with("retry: "), "{flags:?}: {r:?}");
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn a_signal_windows_cannot_send_is_refused_and_int_and_break_are_accepted() {
    let Some(b) = bench() else { return };
    let with = |signal: &str| {
        retry(
            b,
            &b.probe_args(&["-t", "30s", "--signal", signal], &["print", "ran"]),
        )
        .run()
    };
    for refused in ["TERM", "KILL", "HUP"] {
        let r = with(refused);
        assert_eq!(r.code, 125, "--signal {refused}: {r:?}");
        assert_eq!(r.stdout, "", "--signal {refused}: {r:?}");
        assert_eq!(r.stderr.lines().count(), 1, "--signal {refused}: {r:?}");
        assert!(r.stderr.contains("--signal"), "{r:?}");
        assert!(r.stderr.contains(refused), "{r:?}");
    }
    for accepted in ["INT", "BREAK"] {
        let r = with(accepted);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (0, "ran\n"),
            "--signal {accepted}: {r:?}"
        );
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn retry_exe_starts_and_says_its_version() {
    let Some(b) = bench() else { return };
    let r = retry(b, &["--version"]).run();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("retry "), "{r:?}");
}
