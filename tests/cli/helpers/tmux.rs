//! An interactive program under tmux, on a tmux server of its own: keys typed into it, its
//! screen read back as text (tmux renders the terminal, so no escape sequences to parse), its
//! window resized as a user resizes a terminal emulator's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::HANG_LIMIT;

/// One tmux server with one session, killed on drop.
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// Starts `argv` in `dir` on a new 200x50 terminal, with exactly `env` as its environment,
    /// on a tmux server listening at `socket` (no tmux configuration read). If `argv` exits,
    /// its last screen stays readable.
    pub fn start(socket: &Path, argv: &[&str], env: &[(&str, OsString)], dir: &Path) -> Tmux {
        Tmux::start_sized(socket, argv, env, dir, (200, 50))
    }

    /// [`Tmux::start`] on a terminal of `size` (columns, rows).
    pub fn start_sized(
        socket: &Path,
        argv: &[&str],
        env: &[(&str, OsString)],
        dir: &Path,
        size: (u16, u16),
    ) -> Tmux {
        let tmux = Tmux {
            socket: socket.to_path_buf(),
        };
        let config = socket.with_extension("conf");
        std::fs::write(&config, "set -g remain-on-exit on\nset -g status off\n").unwrap();
        let mut cmd = Command::new("tmux");
        cmd.env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .arg("-S")
            .arg(socket)
            .arg("-f")
            .arg(&config)
            .args(["new-session", "-d", "-x"])
            .arg(size.0.to_string())
            .arg("-y")
            .arg(size.1.to_string())
            .args(["-s", "t", "-c"])
            .arg(dir)
            .args(argv);
        check(&run(&mut cmd), "tmux new-session");
        tmux
    }

    /// Types `text` as it is.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Presses the keys tmux names so: `Tab`, `C-t`, ...
    pub fn press(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Makes the terminal `columns` wide, as a user widening or narrowing the window (the
    /// program gets SIGWINCH; tmux rewraps the lines it wrapped).
    pub fn resize(&self, columns: u16) {
        self.tmux(&["resize-window", "-t", "t", "-x", &columns.to_string()]);
    }

    /// The screen now, as text: one line per row, trailing blanks trimmed.
    pub fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What the terminal holds now, the lines scrolled off the top first (tmux scrolls when a
    /// dead pane's notice is written at the bottom), as [`Tmux::screen`] gives the screen.
    pub fn scrollback(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-S", "-", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the screen until `done` holds, within [`HANG_LIMIT`]; panics with `what` and the
    /// last screen if it never does.
    pub fn wait_for_screen(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < HANG_LIMIT,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs a tmux command against this server; panics if it fails.
    fn tmux(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("tmux");
        cmd.env_clear().arg("-S").arg(&self.socket).args(args);
        let out = run(&mut cmd);
        check(&out, &format!("tmux {}", args.join(" ")));
        out
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .env_clear()
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stdin(Stdio::null())
            .output();
    }
}

/// `cmd`'s output (stdin null); panics if it cannot be started.
fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Panics unless `out` is a success, naming `what` and its stderr.
fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
