//! What the tests share: a scratch directory per test (its own HOME and TMPDIR, so that a test
//! sees everything a run leaves), the shells `dist/install.sh` runs under, a run of
//! `dist/install.sh` or of the action's script as a runner runs it, with the environment
//! cleared of the caller's `RETRY_*`, `GITHUB_*`, `RUNNER_*`, `OTEL_*`, `CI` and proxy
//! variables, and a listing of a directory tree to compare before and after a run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::release::{Release, repository};
use crate::server::{Answer, Server};
use crate::tools::{self, Tool};

/// The shells `dist/install.sh` is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// Debian's /bin/sh.
    Dash,
    /// bash.
    Bash,
    /// BusyBox's ash with BusyBox's own tools alone on PATH (its wget, tar, sha256sum), as in
    /// an Alpine or a BusyBox image.
    Busybox,
    /// zsh in its sh mode (`zsh --emulate sh`).
    ZshSh,
}

impl Shell {
    /// Every shell.
    pub const ALL: [Shell; 4] = [Shell::Dash, Shell::Bash, Shell::Busybox, Shell::ZshSh];

    /// The tools every shell needs.
    pub const TOOLS: [Tool; 4] = [tools::DASH, tools::BASH, tools::BUSYBOX, tools::ZSH];

    /// A command running `script` under this shell.
    pub fn command(self, script: &Path) -> Command {
        // Each by its path: std looks a program up in the child's PATH when the test sets one.
        let mut cmd = match self {
            Shell::Dash => Command::new(which("dash")),
            Shell::Bash => Command::new(which("bash")),
            Shell::Busybox => {
                let mut cmd = Command::new(which("busybox"));
                cmd.arg("sh").env("PATH", busybox_applets());
                cmd
            }
            Shell::ZshSh => {
                let mut cmd = Command::new(which("zsh"));
                cmd.args(["--emulate", "sh"]);
                cmd
            }
        };
        cmd.arg(script);
        cmd
    }

    /// Whether downloads go through curl (not BusyBox's wget).
    pub fn has_curl(self) -> bool {
        self != Shell::Busybox
    }
}

/// A directory holding a link to busybox for each of its applets (`busybox --install -s`),
/// under cargo's scratch directory for tests: made once, then used by every run.
fn busybox_applets() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("busybox-applets");
        if dir.join("wget").exists() {
            return dir;
        }
        // Made beside it, then renamed into place (another test run may be doing the same).
        let made = dir.with_extension(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&made);
        std::fs::create_dir_all(&made).unwrap();
        let out = Command::new(which("busybox"))
            .arg("--install")
            .arg("-s")
            .arg(&made)
            .output()
            .unwrap();
        assert!(out.status.success(), "busybox --install: {out:?}");
        if std::fs::rename(&made, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&made);
        }
        assert!(dir.join("wget").exists(), "{}", dir.display());
        dir
    })
}

/// The path of `program` on PATH.
pub fn which(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

/// Runs `test` for each of `shells`, each in a thread of its own (a failure in one is the
/// test's failure, once all have ended).
pub fn each_shell(shells: &[Shell], test: impl Fn(Shell) + Sync) {
    let test = &test;
    std::thread::scope(|scope| {
        let runs: Vec<_> = shells
            .iter()
            .map(|&shell| scope.spawn(move || test(shell)))
            .collect();
        for run in runs {
            if let Err(panic) = run.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// A test's scratch directory: `home/` (HOME), `tmp/` (TMPDIR), and whatever the test adds.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("retry install test ")
            .tempdir()
            .unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Scratch { dir }
    }

    /// The scratch directory (its name has a space in it, as paths may).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// HOME.
    pub fn home(&self) -> PathBuf {
        self.path().join("home")
    }

    /// TMPDIR, which must be empty again after every run.
    pub fn tmp(&self) -> PathBuf {
        self.path().join("tmp")
    }

    /// Every path under the scratch directory, relative, sorted (directories end in `/`).
    pub fn tree(&self) -> Vec<String> {
        tree(self.path())
    }
}

/// Every path under `root`, relative, sorted; directories end in `/`, links in ` -> TARGET`.
pub fn tree(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.push(format!(
                    "{rel} -> {}",
                    std::fs::read_link(&path).unwrap().display()
                ));
            } else if meta.is_dir() {
                out.push(format!("{rel}/"));
                walk(root, &path, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    if root.exists() {
        walk(root, root, &mut out);
    }
    out.sort();
    out
}

/// Removes the caller's variables that would change what the scripts do: `RETRY_*`,
/// `GITHUB_*`, `RUNNER_*`, `OTEL_*`, `CI`, the proxies; and sets HOME and TMPDIR to the
/// scratch directory's.
pub fn hermetic(cmd: &mut Command, scratch: &Scratch) {
    for (name, _) in std::env::vars_os() {
        let name_str = name.to_string_lossy();
        if ["RETRY_", "GITHUB_", "RUNNER_", "OTEL_"]
            .iter()
            .any(|p| name_str.starts_with(p))
            || name_str.to_ascii_lowercase().ends_with("_proxy")
            || name_str == "CI"
        {
            cmd.env_remove(&name);
        }
    }
    cmd.env("HOME", scratch.home())
        .env("TMPDIR", scratch.tmp())
        .current_dir(scratch.path())
        .stdin(Stdio::null());
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Run {
    /// Asserts that it succeeded.
    pub fn ok(&self) -> &Run {
        assert_eq!(self.status, Some(0), "{self:#?}");
        self
    }

    /// Asserts that it failed with status 1 and exactly one line on stderr, which it returns.
    pub fn one_line_failure(&self) -> &str {
        assert_eq!(self.status, Some(1), "{self:#?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{self:#?}");
        assert!(lines[0].starts_with("install.sh: "), "{self:#?}");
        lines[0]
    }
}

/// Runs `cmd` to its end (killed after [`crate::HANG_LIMIT`]).
pub fn run(cmd: Command) -> Run {
    run_with_stdin(cmd, None)
}

/// [`run`], with `stdin` as its standard input (else none).
pub fn run_with_stdin(cmd: Command, stdin: Option<Vec<u8>>) -> Run {
    let started = Instant::now();
    let mut cmd = assert_cmd::Command::from_std(cmd);
    cmd.timeout(crate::HANG_LIMIT);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    let out = cmd.output().expect("run the command");
    Run {
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

/// `dist/install.sh ARGS` under `shell`, hermetic, with `env` set.
pub fn install_sh(shell: Shell, scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = shell.command(&repository().join("dist/install.sh"));
    hermetic(&mut cmd, scratch);
    cmd.args(args).envs(env.iter().copied());
    let run = run(cmd);
    assert_eq!(
        tree(&scratch.tmp()),
        Vec::<String>::new(),
        "TMPDIR after {run:#?}"
    );
    run
}

/// A server that serves `release`'s files and answers 404 to anything else.
pub fn serve(release: &Release) -> Server {
    let release = release.clone();
    Server::start(
        move |path| match release.file(path.trim_start_matches('/')) {
            Some(bytes) => Answer::Body(bytes),
            None => Answer::Status(404),
        },
    )
}

/// The lines of file `path`, none if it is missing.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().map(String::from).collect())
        .unwrap_or_default()
}

/// `PROGRAM --version`'s stdout, run from `path`.
pub fn version_of(path: &Path) -> String {
    let out = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?} --version: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
/// Whether the tests run as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The PATH `shell` runs with (BusyBox's applets for BusyBox, else the tests' own).
pub fn shell_path(shell: Shell) -> String {
    let mut cmd = shell.command(Path::new("x"));
    let own = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()));
    let _ = &mut cmd;
    own.unwrap_or_else(|| std::env::var("PATH").unwrap())
}

/// Sets mode 755 on `path`.
pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
