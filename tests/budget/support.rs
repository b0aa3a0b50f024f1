//! Test support: a real `redis-server` on a free loopback port (stopped on drop, from
//! `tests/common/redis_server.rs`), helper child processes (this test binary run again in a
//! helper mode), and the supervisor's sequence of budget calls for an always-failing command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use retry::budget::{AttemptOutcome, Budget, BudgetKey, Policy, RunEnd, Store};

#[path = "../common/redis_server.rs"]
mod redis_server;
pub use redis_server::RedisServer;

/// The environment variable that puts this test binary in a helper mode.
pub const HELPER_ENV: &str = "BUDGET_TEST_HELPER";

/// Runs this test binary as a helper: `mode` and its arguments go in [`HELPER_ENV`]
/// (fields separated by newlines), and the ignored test `helper_entry` does the work.
pub fn helper(fields: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "helper_entry",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(HELPER_ENV, fields.join("\n"))
    .env_remove("RUST_TEST_THREADS")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("RETRY_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// What one always-failing run did.
#[derive(Debug, Default, Clone, Copy)]
pub struct RunReport {
    /// Attempts made.
    pub attempts: u32,
    /// Warnings (store errors) seen.
    pub warnings: u32,
}

/// The supervisor's sequence for a command that fails every attempt, with `-n retries`:
/// begin; before each attempt the cooldown; after each failure `attempt_end`, retrying only
/// while retries are left and the budget allows; finish. Counts attempts and warnings.
pub fn always_failing_run(store: Store, key: &BudgetKey, retries: u32) -> RunReport {
    let mut budget = Budget::with_store(store, key.clone(), Policy::default());
    let mut report = RunReport::default();
    let warn = |b: &mut Budget, report: &mut RunReport| {
        if let Some(w) = b.take_warning() {
            eprintln!("warning: {w}");
            report.warnings += 1;
        }
    };
    budget.begin();
    warn(&mut budget, &mut report);
    loop {
        budget.before_attempt();
        warn(&mut budget, &mut report);
        report.attempts += 1;
        let after = budget.attempt_end(AttemptOutcome::Failure, None);
        warn(&mut budget, &mut report);
        let allowed = after.is_none_or(|a| a.retry_allowed);
        if report.attempts > retries || !allowed {
            break;
        }
    }
    budget.finish(RunEnd::GaveUp);
    warn(&mut budget, &mut report);
    report
}

/// Waits until `path` exists (a helper's signal), up to `limit`.
pub fn wait_for_file(path: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// Parses a helper's `attempts=N warnings=W` line.
pub fn parse_report(stdout: &[u8]) -> RunReport {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .find_map(|l| l.find("attempts=").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("no report in helper output: {text}"));
    let mut report = RunReport::default();
    for field in line.split_whitespace() {
        let (name, value) = field.split_once('=').unwrap();
        let value = value.parse().unwrap();
        match name {
            "attempts" => report.attempts = value,
            "warnings" => report.warnings = value,
            _ => {}
        }
    }
    report
}

/// A fresh store directory under a temporary directory (mode 0700 by the store itself).
pub fn store_dir(tmp: &tempfile::TempDir) -> PathBuf {
    tmp.path().join("store")
}
