//! A run of retry collected to its end ([`Run`]: its status, stdout and stderr, and retry's
//! own lines), for the robustness tests that read what it wrote: `robust_pipes.rs`,
//! `robust_stdin.rs`, `robust_terminal.rs`, `robust_servers.rs`.

use std::fs::File;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};

use super::{retry_std, wait_with_limit};

/// How a run ended: status, stdout (empty when it went elsewhere), stderr.
pub(crate) struct Run {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
}

impl Run {
    /// retry's own lines on stderr.
    pub(crate) fn retry_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("retry: "))
            .collect()
    }
}

/// Collects what `child` writes to its piped stdout and stderr until it ends (within the hang
/// limit).
pub(crate) fn collect(mut child: Child) -> Run {
    let out = child.stdout.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = s.read_to_end(&mut v);
            v
        })
    });
    let mut stderr = Vec::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_end(&mut stderr).unwrap();
    }
    let status = wait_with_limit(&mut child);
    Run {
        status,
        stdout: out.map(|h| h.join().unwrap()).unwrap_or_default(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs `cmd` (stderr piped; stdout piped unless `cmd` set it) and collects its end.
pub(crate) fn run(mut cmd: Command) -> Run {
    cmd.stderr(Stdio::piped());
    collect(cmd.spawn().unwrap())
}

/// retry with `args`, stdout piped unless set later.
pub(crate) fn retry_with(args: &[&str]) -> Command {
    let mut cmd = retry_std();
    cmd.args(args).stdout(Stdio::piped());
    cmd
}

pub(crate) fn dev_full() -> File {
    File::options().write(true).open("/dev/full").unwrap()
}
