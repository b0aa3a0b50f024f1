//! Shared helpers: the binary under test (hermetic: no caller's `RETRY_*`, `GITHUB_*`, `OTEL_*`), time
//! limits, waiting on files instead of sleeps, and the check that retry refused its input. The
//! submodules hold the one HTTP test server ([`http`]), the one pty launcher ([`pty`]), the one
//! terminal emulator driven by keys and read as a screen ([`tmux`]), the one `/proc/PID/stat`
//! reader ([`proc`]), the binary users run, the release build under `.ci/run` ([`release`]), and
//! a run collected to its end with its status, stdout and stderr ([`run`]).

pub mod http;
pub mod jammed;
pub mod otlp;
pub mod proc;
pub mod prometheus;
pub mod pty;
pub mod release;
pub mod run;
pub mod seccomp;
pub mod tmux;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use self::proc::alive;

/// Every test that could hang is killed after this long.
pub const HANG_LIMIT: Duration = Duration::from_secs(60);

/// The test binary's variable that names another `retry` binary to test instead of the one
/// cargo built: `.ci/platforms` points it at the static AArch64 release binary, which runs
/// under qemu-user.
pub const BINARY_VARIABLE: &str = "RETRY_TESTS_BINARY";

/// The `retry` under test: [`BINARY_VARIABLE`]'s, else the one cargo built.
pub fn bin() -> &'static Path {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var_os(BINARY_VARIABLE).map_or_else(
            || assert_cmd::cargo::cargo_bin!("retry").to_path_buf(),
            std::path::PathBuf::from,
        )
    })
}

/// `retry` as an assert_cmd command with a hang limit, in a process group of its own (so it
/// never finds itself in a terminal's foreground group, whoever runs the tests).
pub fn retry() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::from_std(retry_std());
    cmd.timeout(HANG_LIMIT);
    cmd
}

/// `retry` as a std command (stdin null, own process group), for tests that signal it.
/// Hermetic: every `RETRY_*` and `GITHUB_*` variable of the caller's environment is removed
/// (docs/ci-and-cron.md recommends setting `RETRY_*` for a whole CI job); a test sets what it
/// needs.
/// With [`seccomp::VARIABLE`] set, the system calls it names are refused to retry.
pub fn retry_std() -> Command {
    let mut cmd = Command::new(bin());
    cmd.stdin(Stdio::null()).process_group(0);
    clear_outside_env(&mut cmd);
    default_signals(&mut cmd);
    seccomp::apply_from_env(&mut cmd);
    cmd
}

/// [`retry`], but the binary users run ([`release::release_bin`]: the release build when
/// `RETRY_TESTS_RELEASE_BINARY` names it, as under `.ci/run`): for what a run shows.
pub fn release() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::from_std(release_std());
    cmd.timeout(HANG_LIMIT);
    cmd
}

/// [`retry_std`], but the binary users run ([`release::release_bin`]).
pub fn release_std() -> Command {
    let mut cmd = Command::new(release::release_bin());
    cmd.stdin(Stdio::null()).process_group(0);
    clear_outside_env(&mut cmd);
    default_signals(&mut cmd);
    cmd
}

/// Sets every signal back to its default action in `cmd`'s child before exec, so that retry
/// starts as a shell with job control starts it even when the tests themselves were started
/// with signals ignored (`nohup` ignores HUP; `cargo test &` in a script ignores INT and
/// QUIT), which retry keeps ignored for itself and its attempts, on purpose. Handlers need no
/// reset (exec sets them to the default); a test that wants a signal ignored adds its own
/// `pre_exec` after this one.
pub fn default_signals(cmd: &mut Command) {
    // SAFETY: signal() is async-signal-safe; SIG_DFL installs no handler. Numbers that are not
    // signals, KILL and STOP fail with EINVAL, which changes nothing.
    unsafe {
        cmd.pre_exec(|| {
            for sig in 1..=64 {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

/// Removes the caller's `RETRY_*`, `GITHUB_*` and `OTEL_*` variables, and the trace context
/// (`TRACEPARENT`, `TRACESTATE`), from `cmd`'s environment, and those that would make retry
/// write CI markers (`GITLAB_CI`, `BUILDKITE`) or change its colours (`NO_COLOR`, `CLICOLOR`,
/// `CLICOLOR_FORCE`, and `CI`, with which anstream colours a terminal whatever `TERM` says)
/// when the tests run in such a place.
pub fn clear_outside_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let name_str = name.to_string_lossy();
        if name_str.starts_with("RETRY_")
            || name_str.starts_with("GITHUB_")
            || name_str.starts_with("OTEL_")
            || name_str == "TRACEPARENT"
            || name_str == "TRACESTATE"
        {
            cmd.env_remove(&name);
        }
    }
    for name in [
        "GITLAB_CI",
        "BUILDKITE",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "CI",
    ] {
        cmd.env_remove(name);
    }
}

/// Whether this build of retry finds an attempt's processes that left its process group
/// (`setsid`, `set -m`): Linux's native build through `/proc`, FreeBSD through its reaper; not
/// macOS nor the `portable` build on Linux, where the group is all there is
/// (docs/platforms.md).
pub const FINDS_PROCESSES_OUTSIDE_THE_GROUP: bool = cfg!(any(
    all(target_os = "linux", not(feature = "portable")),
    target_os = "freebsd"
));

/// For a test of processes that left the attempt's group: prints why it is skipped and
/// returns true where retry cannot find them ([`FINDS_PROCESSES_OUTSIDE_THE_GROUP`]).
pub fn skip_unless_finds_processes_outside_the_group() -> bool {
    if !FINDS_PROCESSES_OUTSIDE_THE_GROUP {
        eprintln!(
            "skipped: this build stops an attempt's process group only (macOS, the portable \
             build); processes that left it are found through Linux's /proc or FreeBSD's reaper"
        );
    }
    !FINDS_PROCESSES_OUTSIDE_THE_GROUP
}

/// Waits (polling a file, within [`HANG_LIMIT`]) until `path` exists and holds at least
/// `lines` lines; panics on the hang limit.
pub fn wait_for_lines(path: &Path, lines: usize) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.lines().count() >= lines
        {
            return text;
        }
        assert!(
            start.elapsed() < HANG_LIMIT,
            "timed out waiting for {} line(s) in {}",
            lines,
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The lines of the file at `path`; none while it does not exist.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// Waits for `child` to exit, within [`HANG_LIMIT`]; kills it and panics on the limit.
pub fn wait_with_limit(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            panic!("process did not exit within {HANG_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits (within [`HANG_LIMIT`]) until no process with these pids is alive.
pub fn wait_gone(pids: &[i32]) {
    let start = Instant::now();
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "processes still alive: {:?}",
            pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `signal` to `pid`.
pub fn send(pid: u32, signal: i32) {
    // SAFETY: kill(2) with a pid we started and a valid signal number.
    let rc = unsafe { libc::kill(pid as i32, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
}

/// Runs `cmd` (retry with the input at fault) and checks that it refused it: status 125, one
/// line on stderr, `retry: ...` naming each of `needles` (the flag or variable, the value), no
/// panic or backtrace, nothing on stdout. Returns that line.
pub fn refused(cmd: &mut assert_cmd::Command, needles: &[&str]) -> String {
    let out = cmd.assert().code(125).get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(stderr.starts_with("retry: "), "{stderr:?}");
    for n in needles {
        assert!(stderr.contains(n), "{stderr:?} lacks {n:?}");
    }
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr:?}"
    );
    assert!(out.stdout.is_empty(), "stdout {:?}", out.stdout);
    stderr
}

/// `retry ARGS` refused (see [`refused`]), naming each of `needles`.
pub fn refuses(args: &[&str], needles: &[&str]) -> String {
    refused(retry().args(args), needles)
}

/// `retry ARGS` with the variables `vars` set refused (see [`refused`]), naming each of
/// `needles`.
pub fn refuses_env(vars: &[(&str, &str)], args: &[&str], needles: &[&str]) -> String {
    refused(retry().envs(vars.iter().copied()).args(args), needles)
}

/// What a run left in `tmpdir` (its `TMPDIR`), but for retry's own directory `retry-UID`, which
/// is kept (mode 0700) as long as it is empty: `RETRY_ENV_FILE` files live there and each run
/// removes its own.
pub fn tmp_left(tmpdir: &Path) -> Vec<std::path::PathBuf> {
    // SAFETY: geteuid has no preconditions and cannot fail (POSIX).
    let own = format!("retry-{}", unsafe { libc::geteuid() });
    std::fs::read_dir(tmpdir)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let empty = std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none());
            let private = std::fs::symlink_metadata(path)
                .is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o777 == 0o700);
            !(path.file_name() == Some(own.as_ref()) && empty && private)
        })
        .collect()
}

/// `text` with the elapsed time of each closing line (`gave up after 3 attempts in 1m 3s: ...`,
/// `succeeded on attempt 3 of 6 after 12.4s`) replaced by `T`, for exact comparisons.
pub fn timeless(text: &str) -> String {
    text.lines()
        .map(|line| {
            if let Some(at) = line.find("retry: gave up after ")
                && let Some(start) = line[at..].find(" in ").map(|i| at + i + 4)
                && let Some(end) = line[start..].find(": ").map(|i| start + i)
            {
                format!("{}T{}", &line[..start], &line[end..])
            } else if let Some(at) = line.find("retry: succeeded on attempt ")
                && let Some(start) = line[at..].find(" after ").map(|i| at + i + 7)
            {
                format!("{}T", &line[..start])
            } else {
                line.to_string()
            }
        })
        .map(|line| line + "\n")
        .collect()
}

/// The rows of a `--dry-run` table (`retry  delay  cumulative`): each row's first cell (the
/// retry number, or `splay`) and its two durations as written (`1m 4s`), the header and the
/// lines after the rows left out. The cells are in fixed columns (6, 12 and 14 wide, one space
/// between), a duration possibly of two words.
pub fn dry_run_cells(table: &str) -> Vec<(String, String, String)> {
    let mut lines = table.lines();
    let header = lines.next().expect("a header");
    assert!(header.starts_with("retry "), "{table}");
    lines
        .take_while(|l| l.starts_with(|c: char| c.is_ascii_digit()) || l.starts_with("splay "))
        .map(|l| {
            let cell = |from: usize, to: usize| l.get(from..to.min(l.len())).unwrap_or("").trim();
            let row = (cell(0, 6), cell(7, 19), cell(20, l.len()));
            assert!(
                !row.0.is_empty() && !row.1.is_empty() && !row.2.is_empty(),
                "{l:?} in:\n{table}"
            );
            (row.0.to_string(), row.1.to_string(), row.2.to_string())
        })
        .collect()
}

/// Seconds in a duration as retry's text lines show it (`250us`, `250ms`, `12.4s`, `1m 30s`,
/// `2h 5m`, `3d 4h`); panics on anything else.
pub fn human_secs(text: &str) -> f64 {
    text.split(' ')
        .map(|part| {
            let digits = part
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or_else(|| panic!("no unit in {text:?}"));
            let n: f64 = part[..digits].parse().unwrap();
            n * match &part[digits..] {
                "ns" => 1e-9,
                "us" => 1e-6,
                "ms" => 1e-3,
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                "d" => 86400.0,
                unit => panic!("unit {unit:?} in {text:?}"),
            }
        })
        .sum()
}
