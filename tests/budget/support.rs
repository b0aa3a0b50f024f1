//! Test support: a real `redis-server` on a free loopback port (stopped on drop), helper
//! child processes (this test binary run again in a helper mode), and the supervisor's
//! sequence of budget calls for an always-failing command.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use retry::budget::{AttemptOutcome, Budget, BudgetKey, Policy, RunEnd, Store};

/// A `redis-server` of our own, killed on drop.
pub struct RedisServer {
    child: Child,
    port: u16,
    password: Option<String>,
    _dir: tempfile::TempDir,
}

/// A port nobody listens on right now (bound to 127.0.0.1:0, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

fn answers_ping(port: u16, password: Option<&str>) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut request = String::new();
    if let Some(pw) = password {
        request.push_str(&format!("AUTH {pw}\r\n"));
    }
    request.push_str("PING\r\n");
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    if password.is_some() && (reader.read_line(&mut line).is_err() || line != "+OK\r\n") {
        return false;
    }
    line.clear();
    reader.read_line(&mut line).is_ok() && line == "+PONG\r\n"
}

impl RedisServer {
    /// Starts `redis-server` without persistence on a free loopback port and waits until it
    /// answers PING. Panics with a clear message when the program is missing.
    pub fn start() -> RedisServer {
        RedisServer::start_with(None)
    }

    /// As [`RedisServer::start`], requiring `password` (`requirepass`).
    pub fn start_with(password: Option<&str>) -> RedisServer {
        let mut last = String::new();
        // A port picked free may be taken before the server binds it: try a few.
        for _ in 0..5 {
            let port = free_port();
            let dir = tempfile::tempdir().unwrap();
            let mut cmd = Command::new("redis-server");
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .args(["--loglevel", "warning", "--maxclients", "1000"])
                .arg("--dir")
                .arg(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(pw) = password {
                cmd.args(["--requirepass", pw]);
            }
            let child = cmd.spawn().unwrap_or_else(|e| {
                panic!(
                    "cannot run redis-server ({e}): install the Debian package redis-server \
                     (apt-get install -y redis-server)"
                )
            });
            let mut server = RedisServer {
                child,
                port,
                password: password.map(str::to_string),
                _dir: dir,
            };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if answers_ping(port, password) {
                    return server;
                }
                if let Ok(Some(_)) = server.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = server.child.kill();
            let _ = server.child.wait();
            let mut out = String::new();
            if let Some(mut so) = server.child.stdout.take() {
                let _ = so.read_to_string(&mut out);
            }
            last = out;
        }
        panic!("redis-server did not start: {last}");
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://[:password@]127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        match &self.password {
            Some(pw) => format!("redis://:{pw}@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    /// Stops the server now (KILL) and waits for it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

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
        budget.cooldown();
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
