//! `--breaker N` through the binary: after N runs in a row with the KEY gave up, later runs exit
//! 75 without running the command and say until when; after `--breaker-cooldown` exactly one
//! run probes, whose success closes the breaker and whose failure opens it again.

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::budget::events;
use crate::helpers::{HANG_LIMIT, retry, retry_std, wait_with_limit};
use crate::tools::{self, require};

/// `retry -n 0 --budget K --budget-store STORE --breaker N --breaker-cooldown COOLDOWN`, then
/// `extra` and the command.
fn args(store: &Path, breaker: &str, cooldown: &str, extra: &[&str], cmd: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["-n", "0", "--budget", "K", "--budget-store"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push(store.display().to_string());
    a.extend(["--breaker", breaker, "--breaker-cooldown", cooldown].map(String::from));
    a.extend(extra.iter().map(|s| s.to_string()));
    a.push("--".into());
    a.extend(cmd.iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String]) -> Output {
    retry().args(args).output().unwrap()
}

/// The time of day in a `... until 2026-01-01T00:00:00Z...` line (RFC 3339, to the second).
fn until_in(text: &str) -> SystemTime {
    let at = text.find("until ").expect("until") + "until ".len();
    let stamp = &text[at..at + "2026-01-01T00:00:00Z".len()];
    humantime::parse_rfc3339(stamp).unwrap_or_else(|e| panic!("{stamp:?}: {e}"))
}

/// Starts a run whose command creates `started`, then waits for `go`; returns once it either
/// ended (refused: 75) or started the command (it is the probe).
fn try_probe(args: &[String], started: &Path) -> Result<Child, Output> {
    let mut child = retry_std()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if started.exists() {
            return Ok(child);
        }
        if child.try_wait().unwrap().is_some() {
            return Err(child.wait_with_output().unwrap());
        }
        assert!(start.elapsed() < HANG_LIMIT, "neither refused nor started");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs [`try_probe`] until a run is let through (each refused one must exit 75).
fn wait_for_probe(args: &[String], started: &Path) -> Child {
    let start = Instant::now();
    loop {
        match try_probe(args, started) {
            Ok(child) => return child,
            Err(out) => {
                assert_eq!(out.status.code(), Some(75), "{out:?}");
                assert!(start.elapsed() < HANG_LIMIT, "no probe was let through");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

#[test]
fn after_n_runs_gave_up_runs_exit_75_until_one_probe_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let d = dir.path();
    let flags = |extra: &[&str], cmd: &[&str]| args(&store, "2", "2s", extra, cmd);
    // Two runs in a row give up: the breaker opens.
    for _ in 0..2 {
        assert_eq!(run(&flags(&[], &["false"])).status.code(), Some(1));
    }
    let before = SystemTime::now();
    let marker = d.join("marker");
    let gave_up = d.join("gave-up");
    let out = run(&flags(
        &["--on-give-up", &format!("touch '{}'", gave_up.display())],
        &["touch", marker.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert!(!marker.exists(), "a refused run ran the command");
    assert!(!gave_up.exists(), "a refused run is not a give-up");
    let text = String::from_utf8(out.stderr).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("retry: circuit breaker for K is open until ")
            && text.ends_with(": not running touch (status 75)\n"),
        "{text}"
    );
    let until = until_in(&text);
    assert!(until > before - Duration::from_secs(1), "{text}");
    assert!(until < before + Duration::from_secs(3), "{text}");

    // The same in JSON: a `refused` event with status 75.
    let out = run(&flags(
        &["--log-format", "json"],
        &["touch", marker.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(75));
    assert!(!marker.exists());
    let ev = events(&out.stderr);
    let refused: Vec<&Value> = ev.iter().filter(|e| e["event"] == "refused").collect();
    assert_eq!(refused.len(), 1, "{ev:?}");
    assert_eq!(refused[0]["status"], 75);
    assert!(
        refused[0]["reason"]
            .as_str()
            .unwrap()
            .contains("is open until")
    );
    let begin = ev.iter().find(|e| e["event"] == "budget").unwrap();
    assert_eq!(begin["admission"], "refused");
    assert_eq!(begin["breaker"]["state"], "open");
    assert!(!ev.iter().any(|e| e["event"] == "attempt_start"), "{ev:?}");

    // After the cooldown, one run probes; while it runs, the others are still refused.
    let (started, go) = (d.join("started"), d.join("go"));
    let probe_cmd = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.01; done",
        started.display(),
        go.display()
    );
    let mut probe = wait_for_probe(&flags(&[], &["sh", "-c", &probe_cmd]), &started);
    let out = run(&flags(&[], &["touch", marker.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert!(!marker.exists());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("is half-open and another run is probing"),
        "{text}"
    );
    // The probe succeeds: the breaker closes and runs go ahead.
    std::fs::write(&go, b"").unwrap();
    assert_eq!(wait_with_limit(&mut probe).code(), Some(0));
    let out = run(&flags(&["-v"], &["touch", marker.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(marker.exists());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("budget K: breaker closed (0 of 2 runs in a row gave up)"),
        "{text}"
    );
}

#[test]
fn a_probe_that_gives_up_opens_the_breaker_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let d = dir.path();
    let flags = |extra: &[&str], cmd: &[&str]| args(&store, "1", "3s", extra, cmd);
    assert_eq!(run(&flags(&[], &["false"])).status.code(), Some(1));
    let started = d.join("started");
    let failing = format!("touch '{}'; exit 4", started.display());
    let mut probe = wait_for_probe(
        &flags(&["--log-format", "json"], &["sh", "-c", &failing]),
        &started,
    );
    assert_eq!(wait_with_limit(&mut probe).code(), Some(4));
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut probe.stderr.take().unwrap(), &mut stderr).unwrap();
    let ev = events(&stderr);
    let begin = ev.iter().find(|e| e["event"] == "budget").unwrap();
    assert_eq!(begin["admission"], "probe");
    let end = ev
        .iter()
        .find(|e| e["event"] == "budget" && e["phase"] == "end")
        .unwrap();
    assert_eq!(end["run"], "gave_up");
    assert_eq!(end["breaker"]["state"], "open", "{end}");
    // Open again for a whole cooldown.
    let marker = d.join("marker");
    let out = run(&flags(&[], &["touch", marker.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert!(!marker.exists());
}

#[test]
fn a_run_stopped_by_a_signal_is_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let ready = dir.path().join("ready");
    let flags = args(
        &store,
        "1",
        "1h",
        &["--log-format", "json"],
        &[
            "sh",
            "-c",
            &format!("touch '{}'; sleep 60", ready.display()),
        ],
    );
    let mut child = retry_std()
        .args(&flags)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::helpers::wait_for_lines(&ready, 0);
    crate::helpers::send(child.id(), libc::SIGTERM);
    wait_with_limit(&mut child);
    let out = child.wait_with_output().unwrap();
    let ev = events(&out.stderr);
    let end = ev
        .iter()
        .find(|e| e["event"] == "budget" && e["phase"] == "end")
        .unwrap();
    assert_eq!(end["run"], "abandoned");
    assert_eq!(end["breaker"]["state"], "closed");
    // With a threshold of 1, a counted give-up would have opened it.
    let out = run(&args(&store, "1", "1h", &[], &["true"]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn under_github_actions_a_refused_run_is_an_error_annotation_and_status_75() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    assert_eq!(
        run(&args(&store, "1", "1h", &[], &["false"])).status.code(),
        Some(1)
    );
    let outputs = dir.path().join("outputs");
    let out = retry()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &outputs)
        .args(args(&store, "1", "1h", &[], &["true"]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    let annotation = text
        .lines()
        .find(|l| l.starts_with("::error title=retry%3A true::"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        annotation.contains("gave up after 0 attempts (circuit breaker for K is open until"),
        "{annotation}"
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "attempts=0\nstatus=75\n"
    );
}

/// Polls `path` until it holds `needle` (within the hang limit); returns its text.
fn wait_for_text(path: &Path, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            start.elapsed() < HANG_LIMIT,
            "{needle:?} never came: {text}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_run_still_in_its_splay_when_the_breaker_opens_is_refused_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (marker, log) = (dir.path().join("marker"), dir.path().join("log"));
    // The fleet's cron line with a shorter splay: seed 4 draws 2.718 s of a 4 s splay (2.7s).
    let mut splaying = retry_std()
        .args(args(
            &store,
            "1",
            "1h",
            &["-v", "--splay", "4s", "--seed", "4"],
            &["touch", marker.to_str().unwrap()],
        ))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    wait_for_text(&log, "splay: waiting 2.7s before");
    // Meanwhile another run gives up: the breaker (1 run) opens.
    assert_eq!(
        run(&args(&store, "1", "1h", &[], &["false"])).status.code(),
        Some(1)
    );
    assert_eq!(wait_with_limit(&mut splaying).code(), Some(75));
    assert!(!marker.exists(), "the run ran the command after its splay");
    let text = std::fs::read_to_string(&log).unwrap();
    let refusal = text
        .lines()
        .find(|l| l.starts_with("retry: circuit breaker for K is open until "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        refusal.ends_with(": not running touch (status 75)"),
        "{text}"
    );
    // Refused before its first attempt, it is not counted: one run gave up, not two.
    let state = std::fs::read_to_string(store.join("K.json")).unwrap();
    assert!(state.contains("\"consecutive\":1,"), "{state}");
}

#[test]
fn a_breaker_that_opens_between_attempts_ends_the_retries() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let tally = dir.path().join("tally");
    let failing = format!("echo x >> '{}'; exit 4", tally.display());
    let mut flags = args(&store, "1", "1h", &[], &["sh", "-c", &failing]);
    // Five retries, three seconds apart.
    flags.splice(
        0..2,
        ["-n", "5", "-b", "3s", "--jitter", "none"].map(String::from),
    );
    let mut retrying = retry_std()
        .args(&flags)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::helpers::wait_for_lines(&tally, 1);
    // During the first delay another run gives up: the breaker (1 run) opens.
    assert_eq!(
        run(&args(&store, "1", "1h", &[], &["false"])).status.code(),
        Some(1)
    );
    assert_eq!(wait_with_limit(&mut retrying).code(), Some(4));
    let out = retrying.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        count_lines(&tally),
        1,
        "it retried past the open breaker: {text}"
    );
    let give_up = text
        .lines()
        .find(|l| l.starts_with("retry: gave up after 1 attempt in "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        give_up.contains("circuit breaker for K is open until "),
        "{give_up}"
    );
}

fn count_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn a_cooldown_past_year_9999_is_refused_with_125_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for (how, cooldown) in [("flag", "10000y"), ("env", "10000y"), ("flag", "200y")] {
        let mut cmd = retry();
        let flags = args(&store, "1", cooldown, &[], &["false"]);
        if how == "env" {
            cmd.env("RETRY_BREAKER_COOLDOWN", cooldown);
            let at = flags
                .iter()
                .position(|a| a == "--breaker-cooldown")
                .unwrap();
            let mut flags = flags.clone();
            flags.drain(at..at + 2);
            cmd.args(flags);
        } else {
            cmd.args(flags);
        }
        let needles: &[&str] = match how {
            "env" => &[
                "--breaker-cooldown",
                "from RETRY_BREAKER_COOLDOWN",
                "100 years",
            ],
            _ => &["--breaker-cooldown", "years", "100 years"],
        };
        crate::helpers::refused(&mut cmd, needles);
    }
    // The longest accepted works, and its refusal line is in year 9999 at the latest.
    assert_eq!(
        run(&args(&store, "1", "100y", &[], &["false"]))
            .status
            .code(),
        Some(1)
    );
    let out = run(&args(&store, "1", "100y", &[], &["true"]));
    assert_eq!(out.status.code(), Some(75), "{out:?}");
}

#[test]
fn a_stored_time_past_year_9999_is_one_warning_not_a_panic() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    // One millisecond past 9999-12-31T23:59:59.999Z.
    let far = 253_402_300_800_000u64;
    let states = [
        format!(
            r#"{{"version":1,"updated_ms":0,"tokens":null,"breaker":{{"consecutive":0,"open_until_ms":null,"probe":null}},"not_before_ms":{far}}}"#
        ),
        format!(
            r#"{{"version":1,"updated_ms":0,"tokens":null,"breaker":{{"consecutive":3,"open_until_ms":{far},"probe":null}},"not_before_ms":null}}"#
        ),
        format!(
            r#"{{"version":1,"updated_ms":0,"tokens":null,"breaker":{{"consecutive":3,"open_until_ms":1,"probe":{{"id":1,"expires_ms":{far}}}}},"not_before_ms":null}}"#
        ),
    ];
    let check = |out: Output| {
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{text}");
        let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{text}");
        assert!(
            warnings[0].contains("is corrupt") && warnings[0].contains("9999-12-31T23:59:59.999Z"),
            "{text}"
        );
        assert!(!text.contains("panicked"), "{text}");
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let server = crate::redis_server::RedisServer::start();
    let mut con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    for state in &states {
        std::fs::write(store.join("K.json"), state).unwrap();
        check(run(&args(&store, "1", "1m", &[], &["true"])));
        let _: () = redis::cmd("SET")
            .arg("retry:budget:K")
            .arg(state)
            .query(&mut con)
            .unwrap();
        let url = Path::new(&server.url()).to_path_buf();
        check(run(&args(&url, "1", "1m", &[], &["true"])));
    }
}
