//! What the countdown leaves on a real terminal's screen, under tmux (a terminal emulator with
//! deferred wrapping and reflow on resize, as xterm's descendants have): an attempt's last line
//! without a newline stays on the screen, also when the window is widened during the wait.
//! All through the release build, the binary users run.

use std::ffi::OsString;
use std::path::Path;

use crate::helpers::release::release_bin;
use crate::helpers::tmux::Tmux;

/// The line a failed first attempt of two gets before a wait of `delay`.
fn waiting_line(delay: &str) -> String {
    format!("retry: attempt 1 of 2: sh exited with status 1; retrying in {delay}")
}

/// `argv` on a new tmux terminal of `columns` by 12, in `dir`, with a bare environment (the
/// caller's `RETRY_*`, `CI` and colours never reach it).
fn on_tmux(dir: &Path, argv: &[&str], columns: u16) -> Tmux {
    let env: Vec<(&str, OsString)> = vec![
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("HOME", dir.as_os_str().to_owned()),
        ("PS1", "$ ".into()),
    ];
    Tmux::start_sized(&dir.join("tmux.sock"), argv, &env, dir, (columns, 12))
}

/// retry (the release build) with `-b DELAY`, no jitter, one retry, then `sh -c SCRIPT`.
fn retry_argv<'a>(delay: &'a str, script: &'a str) -> Vec<&'a str> {
    let bin = release_bin().to_str().expect("a UTF-8 path");
    vec![
        bin, "-b", delay, "-j", "none", "-n", "1", "--", "sh", "-c", script,
    ]
}

/// The terminal's lines, scrolled-off ones first, once the screen shows the closing line.
fn until_given_up(tmux: &Tmux) -> String {
    tmux.wait_for_screen("the closing line", |s| {
        s.contains("gave up after 2 attempts")
    });
    tmux.scrollback()
}

#[test]
fn an_unterminated_last_line_stays_on_the_screen() {
    // `curl -w '%{http_code}'` ends its output so.
    let dir = tempfile::tempdir().unwrap();
    let tmux = on_tmux(dir.path(), &retry_argv("1.5s", "printf 503; exit 1"), 80);
    let screen = until_given_up(&tmux);
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines[0], "503", "{screen}");
    assert_eq!(lines[1], waiting_line("1.5s"), "{screen}");
    // The last attempt's line is a plain one, as logs get it: right after the output.
    assert!(
        lines[2].starts_with("503retry: attempt 2 of 2: sh exited with status 1"),
        "{screen}"
    );
}

#[test]
fn a_line_that_fills_the_terminal_stays_and_an_ended_one_gets_no_blank_line() {
    let dir = tempfile::tempdir().unwrap();
    // Exactly the terminal's width, no newline: the cursor waits in the last column.
    let full = "x".repeat(80);
    let script = format!("printf {full}; exit 1");
    let tmux = on_tmux(dir.path(), &retry_argv("1.2s", &script), 80);
    let screen = until_given_up(&tmux);
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines[0], full, "{screen}");
    assert_eq!(lines[1], waiting_line("1.2s"), "{screen}");
    drop(tmux);
    // A line that ended: the countdown right under it, with no blank line between.
    let dir = tempfile::tempdir().unwrap();
    let tmux = on_tmux(dir.path(), &retry_argv("1.2s", "echo 503; exit 1"), 80);
    let screen = until_given_up(&tmux);
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines[..2], ["503", &waiting_line("1.2s")], "{screen}");
}

#[test]
fn widening_the_terminal_during_the_countdown_keeps_the_unterminated_line() {
    // The terminal rewraps at the new width: the countdown's row, continued from the attempt's
    // row, joins it; the next frame must not go back over the attempt's output, and the
    // countdown goes on on a line of its own.
    let dir = tempfile::tempdir().unwrap();
    let tmux = on_tmux(dir.path(), &retry_argv("3s", "printf 503; exit 1"), 70);
    tmux.wait_for_screen("the first frame", |s| s.contains(&waiting_line("3s")));
    tmux.resize(200);
    let screen = until_given_up(&tmux);
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines[..2], ["503", &waiting_line("3s")], "{screen}");
}
