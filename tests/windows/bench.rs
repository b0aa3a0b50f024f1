//! The bench the Windows suite stands on: where retry.exe, probe.exe and Wine are (the
//! variables `.ci/windows test` sets), one run of retry.exe collected with its full 32-bit exit
//! code (read from `probe run`, the Windows-side parent: wine64's own Unix status keeps only the
//! low 8 bits), paths as Windows programs see them, and the waits the tests synchronise on
//! (files and processes, never a bare sleep).
//!
//! Runs are hermetic: the caller's `RETRY_*`, `GITHUB_*` and `OTEL_*` variables, the trace
//! context and the CI markers are removed; a test sets what it needs.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::waits::{collect, reader};
pub use crate::waits::{wait_for_file, wait_with_limit};

/// The variable naming the retry.exe under test.
pub const EXE_VARIABLE: &str = "RETRY_WINE_EXE";
/// The variable naming probe.exe (tests/windows/probe).
pub const PROBE_VARIABLE: &str = "RETRY_WINE_PROBE";
/// The variable naming the Wine loader (Debian's `/usr/lib/wine/wine64`, outside `PATH`).
pub const WINE_VARIABLE: &str = "RETRY_WINE";

/// Every run is killed after this long (a test's own bounds are much shorter).
pub const HANG_LIMIT: Duration = Duration::from_secs(60);

/// How long Wine may take to start a process, or to see one end, on a loaded machine (0.03 s
/// with the suite's wineserver kept alive, 0.3 s without, more when both cores are busy): the
/// margin every upper bound on time adds per process start.
pub const START: Duration = Duration::from_millis(1500);

/// What the suite needs: the two programs, and Wine where the tests do not run on Windows.
#[derive(Debug)]
pub struct Bench {
    /// retry.exe, as this (Linux or Windows) test process names it.
    pub retry: PathBuf,
    /// probe.exe, likewise.
    pub probe: PathBuf,
    /// The Wine loader; `None` on Windows, where the programs run themselves.
    pub wine: Option<PathBuf>,
}

/// The bench, or `None` (the test returns at once) when something is missing: the test is
/// then skipped with one line naming it, or fails under `RETRY_TESTS_REQUIRE_TOOLS=1`.
pub fn bench() -> Option<&'static Bench> {
    if !here() {
        return None;
    }
    static BENCH: OnceLock<Bench> = OnceLock::new();
    Some(BENCH.get_or_init(|| {
        let bench = Bench {
            retry: var_path(EXE_VARIABLE).expect("checked"),
            probe: var_path(PROBE_VARIABLE).expect("checked"),
            wine: cfg!(unix).then(wine_loader),
        };
        bench.start_wine();
        bench
    }))
}

/// The file a variable names, if it names one.
fn var_path(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os(name)?);
    path.is_file().then_some(path)
}

/// `RETRY_WINE`, else `wine64` on `PATH`, else Debian's place for it.
fn wine_loader() -> PathBuf {
    if let Some(path) = std::env::var_os(WINE_VARIABLE) {
        return path.into();
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("wine64"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| "/usr/lib/wine/wine64".into())
}

#[cfg(unix)]
mod needs {
    //! What the suite needs under Wine, as `tools::require` names it.
    use crate::tools::Tool;

    /// The Wine loader.
    pub const WINE: Tool = Tool::checked("wine64", "wine64", || super::wine_loader().is_file());
    /// retry.exe.
    pub const RETRY_EXE: Tool = Tool::elsewhere(
        "retry.exe named by RETRY_WINE_EXE",
        "`.ci/windows build` builds it, `.ci/windows test` names it",
        || super::var_path(super::EXE_VARIABLE).is_some(),
    );
    /// probe.exe.
    pub const PROBE_EXE: Tool = Tool::elsewhere(
        "probe.exe named by RETRY_WINE_PROBE",
        "`.ci/windows build` builds it, `.ci/windows test` names it",
        || super::var_path(super::PROBE_VARIABLE).is_some(),
    );
    /// A prefix where Rust programs start under Wine 8.
    pub const PREFIX: Tool = Tool::elsewhere(
        "a Wine prefix (WINEPREFIX) with the test-only bcryptprimitives.dll",
        "`.ci/windows prefix` makes it",
        || {
            std::env::var_os("WINEPREFIX").is_some_and(|prefix| {
                std::path::Path::new(&prefix)
                    .join("drive_c/windows/system32/bcryptprimitives.dll")
                    .is_file()
            })
        },
    );
}

/// Whether everything is here (see [`bench`]).
#[cfg(unix)]
fn here() -> bool {
    crate::tools::require(&[
        needs::WINE,
        needs::PREFIX,
        needs::RETRY_EXE,
        needs::PROBE_EXE,
    ])
}

/// Whether everything is here (see [`bench`]); on Windows the two variables alone.
#[cfg(not(unix))]
fn here() -> bool {
    let missing: Vec<&str> = [EXE_VARIABLE, PROBE_VARIABLE]
        .into_iter()
        .filter(|v| var_path(v).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("RETRY_TESTS_REQUIRE_TOOLS").is_none_or(|v| v != "1"),
        "RETRY_TESTS_REQUIRE_TOOLS=1 and {missing:?} name no file"
    );
    eprintln!("skipped: needs {missing:?}");
    false
}

impl Bench {
    /// Whether the programs run under Wine (whose limits some expectations follow).
    pub fn under_wine(&self) -> bool {
        self.wine.is_some()
    }

    /// `path` as a Windows program's argument: under Wine its `Z:` drive form (Wine maps `Z:`
    /// to `/`), on Windows as it is.
    pub fn win(&self, path: &Path) -> String {
        let text = path.to_string_lossy();
        if self.under_wine() {
            format!("Z:{}", text.replace('/', "\\"))
        } else {
            text.into_owned()
        }
    }

    /// probe.exe's path as retry.exe's command, followed by `args`.
    pub fn probe_cmd(&self, args: &[&str]) -> Vec<String> {
        let mut cmd = vec![self.win(&self.probe)];
        cmd.extend(args.iter().map(|a| a.to_string()));
        cmd
    }

    /// retry.exe's arguments: `flags`, `--`, then probe.exe with `probe_args`.
    pub fn probe_args(&self, flags: &[&str], probe_args: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        args.push("--".into());
        args.extend(self.probe_cmd(probe_args));
        args
    }

    /// A Windows program `exe` with `args`, through Wine where needed, hermetic.
    pub fn command(&self, exe: &Path, args: &[OsString]) -> Command {
        let mut cmd = match &self.wine {
            Some(wine) => {
                let mut cmd = Command::new(wine);
                cmd.arg(exe).env("WINEDEBUG", "-all");
                cmd
            }
            None => Command::new(exe),
        };
        cmd.args(args).stdin(Stdio::null());
        clear_outside_env(&mut cmd);
        cmd
    }

    /// Under Wine, one program with the null device for its standard handles, before any test's:
    /// the first Windows program a wineserver runs starts Wine's system processes
    /// (services.exe, explorer.exe, ...), which live as long as the server and keep the handles
    /// they inherited; a test's pipe would stay open after its run (`.ci/windows test` does the
    /// same before the suite).
    fn start_wine(&self) {
        if self.under_wine() {
            let status = self
                .command(&self.probe, &["exit".into(), "0".into()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("probe.exe starts under Wine");
            assert!(status.success(), "probe.exe under Wine: {status}");
        }
    }

    /// Whether process `pid` (a Windows pid) is running, by `probe alive`.
    pub fn alive(&self, pid: u32) -> bool {
        let mut cmd = self.command(&self.probe, &["alive".into(), pid.to_string().into()]);
        let status = cmd
            .stdout(Stdio::null())
            .status()
            .expect("probe alive starts");
        match status.code() {
            Some(0) => true,
            Some(1) => false,
            other => panic!("probe alive {pid}: {other:?}"),
        }
    }

    /// probe.exe run directly with `args` (stdout piped, stderr to the test's), its stdout once
    /// it exited 0 (it must, within [`HANG_LIMIT`]).
    pub fn probe_output(&self, args: &[&str]) -> String {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let mut child = self
            .command(&self.probe, &args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("probe.exe starts");
        let out = reader(child.stdout.take().expect("piped"));
        let status = wait_with_limit(&mut child, Instant::now() + HANG_LIMIT);
        let stdout = collect(&out, Instant::now() + Duration::from_secs(10))
            .unwrap_or_else(|| panic!("probe {args:?}: its stdout still open"));
        assert_eq!(status, Some(0), "probe {args:?}: {stdout}");
        stdout
    }

    /// Waits until process `pid` has ended, up to `limit`; whether it has.
    pub fn gone_within(&self, pid: u32, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        loop {
            if !self.alive(pid) {
                return true;
            }
            if Instant::now() > end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Removes the caller's `RETRY_*`, `GITHUB_*` and `OTEL_*` variables, the trace context, the CI
/// markers (`CI`, `GITLAB_CI`, `BUILDKITE`) and the colour settings from `cmd`'s environment.
pub fn clear_outside_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let n = name.to_string_lossy();
        if n.starts_with("RETRY_")
            || n.starts_with("GITHUB_")
            || n.starts_with("OTEL_")
            || [
                "TRACEPARENT",
                "TRACESTATE",
                "CI",
                "GITLAB_CI",
                "BUILDKITE",
                "NO_COLOR",
                "CLICOLOR",
                "CLICOLOR_FORCE",
            ]
            .contains(&n.as_ref())
        {
            cmd.env_remove(&name);
        }
    }
}

/// One run of retry.exe, being set up: `retry(b, ARGS).env(..).run()`.
pub struct Retry<'a> {
    bench: &'a Bench,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    path_dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    /// The probe.exe subcommand that starts retry.exe and reports its code: `run`,
    /// `run-io STDIN STDOUT` or `break-after MS`.
    parent: Vec<OsString>,
}

/// retry.exe with `args` (Windows paths already in their [`Bench::win`] form).
pub fn retry<'a, S: AsRef<str>>(bench: &'a Bench, args: &[S]) -> Retry<'a> {
    Retry {
        bench,
        args: args.iter().map(|a| a.as_ref().into()).collect(),
        env: Vec::new(),
        path_dir: None,
        stdin: None,
        parent: vec!["run".into()],
    }
}

/// A run collected to its end. Line ends are `\n` (cmd's `\r\n` made so).
#[derive(Debug)]
pub struct Run {
    /// retry.exe's exit code, all 32 bits.
    pub code: u32,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr, without probe's closing `exit=N` line.
    pub stderr: String,
    /// From the start of probe.exe (which starts retry.exe) to its end.
    pub elapsed: Duration,
}

impl Run {
    /// retry's own lines on stderr (`retry: ...`).
    pub fn lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("retry: "))
            .collect()
    }
}

impl Retry<'_> {
    /// Adds the variable `name`.
    pub fn env(mut self, name: &str, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Puts `dir` first on the Windows `PATH` (under Wine through `WINEPATH`, which Wine puts
    /// before the prefix's own `PATH`; Wine does not take the Unix `PATH`).
    pub fn path_dir(mut self, dir: &Path) -> Self {
        self.path_dir = Some(dir.to_path_buf());
        self
    }

    /// Starts retry.exe in a process group of its own and sends that group Ctrl-Break after
    /// `ms` milliseconds (`probe break-after`; Windows only, Wine delivers none).
    pub fn break_after(mut self, ms: u64) -> Self {
        self.parent = vec!["break-after".into(), ms.to_string().into()];
        self
    }

    /// Gives retry.exe `bytes` on stdin, then end of file.
    pub fn stdin(mut self, bytes: &[u8]) -> Self {
        self.stdin = Some(bytes.to_vec());
        self
    }

    /// Starts retry.exe (under [`Retry::run`]) with its stdin `inherit`, `nul` or `closed` (no
    /// handle at all) and its stdout `inherit` or `nul` as Windows programs see them, through
    /// `probe run-io`.
    pub fn io(mut self, stdin: &'static str, stdout: &'static str) -> Self {
        self.parent = vec!["run-io".into(), stdin.into(), stdout.into()];
        self
    }

    /// The command: `probe run retry.exe ARGS` when `through_probe`, else retry.exe itself.
    fn command(&self, through_probe: bool) -> Command {
        let b = self.bench;
        let mut cmd = if through_probe {
            let mut args = self.parent.clone();
            args.push(b.win(&b.retry).into());
            args.extend(self.args.iter().cloned());
            b.command(&b.probe, &args)
        } else {
            b.command(&b.retry, &self.args)
        };
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        if let Some(dir) = &self.path_dir {
            if b.under_wine() {
                cmd.env("WINEPATH", b.win(dir));
            } else {
                let path = std::env::var_os("PATH").unwrap_or_default();
                let dirs = std::iter::once(dir.clone()).chain(std::env::split_paths(&path));
                cmd.env("PATH", std::env::join_paths(dirs).expect("a PATH"));
            }
        }
        if self.stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        cmd
    }

    /// retry.exe started directly (its status is then wine64's, the low 8 bits), stdout and
    /// stderr to the null device: for a run that holds something while the test goes on.
    pub fn spawn(self) -> Child {
        self.command(false)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("retry.exe starts")
    }

    /// Runs retry.exe under `probe run` with its stdout and stderr written to the files `out`
    /// and `err` (not pipes: a process that keeps them open cannot hold the test), and collects
    /// it; `None` when it had not ended after `limit` (`probe run` is then killed, and what it
    /// started left to the caller).
    pub fn run_to_files(self, out: &Path, err: &Path, limit: Duration) -> Option<Run> {
        let mut cmd = self.command(true);
        cmd.stdout(std::fs::File::create(out).expect("stdout file"))
            .stderr(std::fs::File::create(err).expect("stderr file"));
        let start = Instant::now();
        let mut child = cmd.spawn().expect("probe.exe starts");
        let end = start + limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > end {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let elapsed = start.elapsed();
        let text = |path: &Path| {
            String::from_utf8_lossy(&std::fs::read(path).expect("output file"))
                .replace("\r\n", "\n")
        };
        let (stdout, stderr) = (text(out), text(err));
        assert_eq!(
            status.code(),
            Some(0),
            "probe run failed:\n{stdout}\n{stderr}"
        );
        let (stderr, last) = match stderr.trim_end_matches('\n').rsplit_once('\n') {
            Some((rest, last)) => (format!("{rest}\n"), last.to_string()),
            None => (String::new(), stderr.trim_end_matches('\n').to_string()),
        };
        let code = last
            .strip_prefix("exit=")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no exit=N last on stderr:\n{stdout}\n{stderr}{last}"));
        Some(Run {
            code,
            stdout,
            stderr,
            elapsed,
        })
    }

    /// Runs retry.exe to its end under `probe run` and collects it; panics after
    /// [`HANG_LIMIT`].
    pub fn run(self) -> Run {
        let mut cmd = self.command(true);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd.spawn().expect("probe.exe starts");
        if let Some(bytes) = &self.stdin {
            let mut input = child.stdin.take().expect("piped");
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                let _ = input.write_all(&bytes);
            });
        }
        let out = reader(child.stdout.take().expect("piped"));
        let err = reader(child.stderr.take().expect("piped"));
        let status = wait_with_limit(&mut child, start + HANG_LIMIT);
        let elapsed = start.elapsed();
        // A process that inherited a pipe and outlived retry.exe holds it open.
        let end = Instant::now() + Duration::from_secs(10);
        let (stdout, stderr) = match (collect(&out, end), collect(&err, end)) {
            (Some(stdout), Some(stderr)) => (stdout, stderr),
            (stdout, stderr) => panic!(
                "retry.exe {:?} ended ({status:?} after {elapsed:?}) but its {} still open 10 s \
                 later: a process that inherited it outlived retry.exe",
                self.args,
                match (&stdout, &stderr) {
                    (None, None) => "stdout and stderr were",
                    (None, _) => "stdout was",
                    _ => "stderr was",
                }
            ),
        };
        assert_eq!(status, Some(0), "probe run failed:\n{stdout}\n{stderr}");
        let (stderr, last) = match stderr.trim_end_matches('\n').rsplit_once('\n') {
            Some((rest, last)) => (format!("{rest}\n"), last.to_string()),
            None => (String::new(), stderr.trim_end_matches('\n').to_string()),
        };
        let code = last
            .strip_prefix("exit=")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no exit=N last on stderr:\n{stdout}\n{stderr}{last}"));
        Run {
            code,
            stdout,
            stderr,
            elapsed,
        }
    }
}
