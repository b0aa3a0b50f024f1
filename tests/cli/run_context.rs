//! What attempts and hooks are told about their run: `RETRY_RUN_ID` (the same for every
//! attempt and hook of a run, new for every run, also in every JSON event) and
//! `RETRY_TIME_LEFT`; and `--reset-after`, which starts the schedule afresh after a long
//! attempt.

use std::path::Path;

use crate::helpers::retry;

/// The lines of `path`.
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `retry -b 0 -n 2 --on-retry ... -- sh -c ...`, each attempt and hook appending
/// `$RETRY_RUN_ID` to `log`; returns the JSON events.
fn logged_run(log: &Path) -> Vec<serde_json::Value> {
    let out = retry()
        .args(["--log-format", "json", "-b", "0", "-n", "2"])
        .arg("--on-retry")
        .arg(format!("echo \"hook $RETRY_RUN_ID\" >> {}", log.display()))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo \"attempt $RETRY_RUN_ID\" >> {}; exit 1",
            log.display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_run_id_is_the_same_for_a_run_and_new_for_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let events = logged_run(&first);
    logged_run(&second);
    let ids = |path: &Path| -> Vec<(String, String)> {
        lines(path)
            .iter()
            .map(|l| {
                let (who, id) = l.split_once(' ').unwrap();
                (who.to_string(), id.to_string())
            })
            .collect()
    };
    let (a, b) = (ids(&first), ids(&second));
    let who: Vec<&str> = a.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(who, ["attempt", "hook", "attempt", "hook", "attempt"]);
    let id = &a[0].1;
    // A version 4 UUID in its canonical form (RFC 9562): 8-4-4-4-12 lowercase hex digits,
    // version 4, variant 10xx.
    let groups: Vec<&str> = id.split('-').collect();
    assert_eq!(
        groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{id}"
    );
    assert!(
        groups
            .iter()
            .all(|g| g.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))),
        "{id}"
    );
    assert!(groups[2].starts_with('4'), "{id}");
    assert!(
        matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'),
        "{id}"
    );
    assert!(a.iter().all(|(_, i)| i == id), "{a:?}");
    assert!(b.iter().all(|(_, i)| i == &b[0].1), "{b:?}");
    assert_ne!(&b[0].1, id, "a new run has a new id");
    // Every JSON event of the run carries it.
    assert!(!events.is_empty());
    for e in &events {
        assert_eq!(e["run_id"].as_str(), Some(id.as_str()), "{e}");
    }
}

#[test]
fn time_left_counts_down_to_the_deadline_and_is_empty_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("left");
    retry()
        .args(["-d", "40s", "-b", "0.5", "-j", "none", "-n", "1"])
        .arg("--on-give-up")
        .arg(format!(
            "echo \"hook $RETRY_TIME_LEFT\" >> {}",
            log.display()
        ))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo \"attempt $RETRY_TIME_LEFT\" >> {}; exit 1",
            log.display()
        ))
        .assert()
        .code(1);
    let seen = lines(&log);
    assert_eq!(seen.len(), 3, "{seen:?}");
    let left: Vec<f64> = seen
        .iter()
        .map(|l| l.split_once(' ').unwrap().1.parse().unwrap())
        .collect();
    // Three decimals; within the 40 s, each later than the one before (0.5 s apart at least).
    assert!(
        seen.iter().all(|l| l.split_once('.').unwrap().1.len() == 3),
        "{seen:?}"
    );
    assert!(left[0] <= 40.0 && left[0] > 20.0, "{left:?}");
    assert!(left[1] <= left[0] - 0.4, "{left:?}");
    assert!(left[2] <= left[1], "{left:?}");

    let log = dir.path().join("none");
    retry()
        .args(["-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "echo \"[${{RETRY_TIME_LEFT-unset}}]\" >> {}",
            log.display()
        ))
        .assert()
        .success();
    assert_eq!(lines(&log), ["[]"], "set, and empty");
}

/// A command that fails at once, except attempt 3, which runs for 3 s first; each attempt
/// logs `RETRY_ATTEMPT RETRY_MAX_ATTEMPTS`.
fn slow_third(log: &Path) -> String {
    format!(
        "echo \"$RETRY_ATTEMPT $RETRY_MAX_ATTEMPTS\" >> {}; \
         if [ $RETRY_ATTEMPT = 3 ]; then sleep 3; fi; exit 1",
        log.display()
    )
}

#[test]
fn a_long_attempt_starts_the_schedule_afresh() {
    let dir = tempfile::tempdir().unwrap();
    // Delays without jitter: 0.1 s, then 1 s; 2 retries.
    let policy = ["-b", "0.1", "-m", "10", "-c", "10", "-j", "none", "-n", "2"];

    // Without --reset-after: three attempts.
    let log = dir.path().join("plain");
    retry()
        .args(policy)
        .args(["--", "sh", "-c", &slow_third(&log)])
        .assert()
        .code(1);
    assert_eq!(lines(&log), ["1 3", "2 3", "3 3"]);

    // With it: attempt 3 ran 3 s, at least the 1.5 s asked (the others take far less); the next delay is the first one
    // again, and two more retries follow it.
    let log = dir.path().join("reset");
    let out = retry()
        .args(policy)
        .args(["--reset-after", "1.5s", "--", "sh", "-c", &slow_third(&log)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(lines(&log), ["1 3", "2 3", "3 3", "4 5", "5 5"], "{stderr}");
    let stderr = crate::helpers::timeless(&stderr);
    let progress: Vec<&str> = stderr.lines().collect();
    let expected_start = [
        "retry: attempt 1 of 3: sh exited with status 1; retrying in 100ms",
        "retry: attempt 2 of 3: sh exited with status 1; retrying in 1s",
    ];
    assert_eq!(progress[..2], expected_start, "{stderr}");
    assert!(
        progress[2].starts_with("retry: attempt 3 ran for 3")
            && progress[2].ends_with(
                "s, at least --reset-after (1.5s): the backoff and the retry count start afresh"
            ),
        "{stderr}"
    );
    assert_eq!(
        progress[3..],
        [
            "retry: attempt 3 of 5: sh exited with status 1; retrying in 100ms",
            "retry: attempt 4 of 5: sh exited with status 1; retrying in 1s",
            "retry: attempt 5 of 5: sh exited with status 1",
            "retry: gave up after 5 attempts in T: no retries left",
        ],
        "{stderr}"
    );
}

#[test]
fn reset_after_from_the_environment_and_zero_means_never() {
    let dir = tempfile::tempdir().unwrap();
    let policy = ["-b", "0", "-n", "2"];
    let log = dir.path().join("env");
    retry()
        .env("RETRY_RESET_AFTER", "1.5s")
        .args(policy)
        .args(["--", "sh", "-c", &slow_third(&log)])
        .assert()
        .code(1);
    assert_eq!(lines(&log).len(), 5);
    let log = dir.path().join("zero");
    retry()
        .args(policy)
        .args(["--reset-after", "0", "--", "sh", "-c", &slow_third(&log)])
        .assert()
        .code(1);
    assert_eq!(lines(&log).len(), 3);
}
