//! What the countdown leaves on a real terminal's screen, under tmux (a terminal emulator with
//! deferred wrapping and reflow on resize, as xterm's descendants have): an attempt's last line
//! without a newline stays on the screen, also when the window is widened during the wait; a
//! run in the background (`&`) never draws over the shell's prompt and what the user types,
//! and draws its countdown once brought to the foreground (`fg`); Ctrl-Z and `fg` or `bg`
//! during the wait lose nothing. All through the release build, the binary users run.

use std::ffi::OsString;
use std::path::Path;

use crate::helpers::release::release_bin;
use crate::helpers::tmux::Tmux;
use crate::tools::{self, require};

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
    if !require(&[tools::TMUX]) {
        return;
    }
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
    if !require(&[tools::TMUX]) {
        return;
    }
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
    if !require(&[tools::TMUX]) {
        return;
    }
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

/// An interactive bash (job control on, no rc files, prompt `$ `) on a new tmux terminal 100
/// columns wide, at its prompt, in `dir`, where `./retry` is a symbolic link to the release
/// build (see [`command_line`]).
fn shell(dir: &Path) -> Tmux {
    std::os::unix::fs::symlink(release_bin(), dir.join("retry")).unwrap();
    let tmux = on_tmux(dir, &["bash", "--norc", "--noprofile", "-i"], 100);
    tmux.wait_for_screen("the prompt", |s| s.lines().any(|l| l == "$"));
    tmux
}

/// The shell command line that runs retry (see [`retry_argv`]) with an attempt that says
/// which it is, then fails: 73 columns (74 with `-b 50s`), whatever the path of the checkout.
/// With the binary's own path it was as long as that path: from a clone in a longer directory
/// than a developer's (CI's, or `target/platforms/`'s AArch64 binary under qemu) the line bash
/// echoes after `fg` took two rows of the 100, and the assertions read the wrong rows. The
/// failure's screen then showed no frame after `fg` (the frames drawn there are erased at the
/// end, as they should be), which read as "no countdown frame after fg" (issue 30).
fn command_line(delay: &str) -> String {
    format!("./retry -b {delay} -j none -n 1 -- sh -c 'echo attempt $RETRY_ATTEMPT; exit 1'")
}

/// Whether `screen` shows a frame of the countdown with fewer than `delay` whole seconds left.
fn shows_a_later_frame(screen: &str, delay: u32) -> bool {
    (1..delay).any(|left| screen.contains(&format!("retrying in {left}s")))
}

#[test]
fn a_run_in_the_background_never_draws_over_the_prompt() {
    if !require(&[tools::TMUX]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = shell(dir.path());
    tmux.type_text(&format!("{} &", command_line("3s")));
    tmux.press(&["Enter"]);
    // The line logs get, once; then the user types at the prompt while retry waits.
    tmux.wait_for_screen("the wait's line", |s| s.contains(&waiting_line("3s")));
    tmux.type_text("echo typed");
    tmux.wait_for_screen("the typed text", |s| s.contains("echo typed"));
    let screen = tmux.wait_for_screen("the closing line", |s| {
        s.contains("gave up after 2 attempts")
    });
    // What was typed is still on the screen, the wait's line is there once, and no frame of
    // the countdown was drawn.
    assert!(screen.contains("echo typed"), "{screen}");
    assert_eq!(screen.matches("retrying in").count(), 1, "{screen}");
    assert!(screen.contains(&waiting_line("3s")), "{screen}");
}

#[test]
fn a_run_brought_to_the_foreground_draws_its_countdown() {
    if !require(&[tools::TMUX]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = shell(dir.path());
    tmux.type_text(&format!("{} &", command_line("6s")));
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("the wait's line", |s| s.contains(&waiting_line("6s")));
    tmux.type_text("fg");
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("a frame of the countdown", |s| shows_a_later_frame(s, 6));
    let screen = tmux.wait_for_screen("the closing line", |s| {
        s.contains("gave up after 2 attempts")
    });
    // The countdown is erased at the end: the wait's line, written in the background, is
    // there once, and the next attempt's output follows the command line `fg` echoes (`fg`
    // was typed where the prompt left the cursor, after the background run's lines).
    assert_eq!(screen.matches("retrying in").count(), 1, "{screen}");
    let lines: Vec<&str> = screen.lines().collect();
    let fg = lines
        .iter()
        .position(|l| *l == "fg")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        lines[fg + 1].ends_with("-- sh -c 'echo attempt $RETRY_ATTEMPT; exit 1'"),
        "{screen}"
    );
    assert_eq!(lines[fg + 2], "attempt 2", "{screen}");
}

#[test]
fn ctrl_z_then_fg_or_bg_during_the_countdown_loses_nothing() {
    if !require(&[tools::TMUX]) {
        return;
    }
    // Ctrl-Z and `fg`: the countdown goes on under the shell's lines, and ends as the line.
    let dir = tempfile::tempdir().unwrap();
    let tmux = shell(dir.path());
    tmux.type_text(&command_line("6s"));
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("the first frame", |s| s.contains(&waiting_line("6s")));
    tmux.press(&["C-z"]);
    tmux.wait_for_screen("the job stopped", |s| s.contains("Stopped"));
    tmux.type_text("fg");
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("a frame after fg", |s| {
        s.split("$ fg")
            .nth(1)
            .is_some_and(|after| shows_a_later_frame(after, 6))
    });
    let screen = tmux.wait_for_screen("the closing line", |s| {
        s.contains("gave up after 2 attempts")
    });
    let after = screen.split("$ fg").nth(1).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(
        lines[2..4],
        [waiting_line("6s").as_str(), "attempt 2"],
        "{screen}"
    );
    drop(tmux);
    // Ctrl-Z and `bg`: no frame is drawn over the prompt; the line logs get ends the wait.
    let dir = tempfile::tempdir().unwrap();
    let tmux = shell(dir.path());
    tmux.type_text(&command_line("4s"));
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("the first frame", |s| s.contains(&waiting_line("4s")));
    tmux.press(&["C-z"]);
    tmux.wait_for_screen("the job stopped", |s| s.contains("Stopped"));
    tmux.type_text("bg");
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("the prompt after bg", |s| s.lines().any(|l| l == "$"));
    tmux.type_text("echo typed");
    tmux.wait_for_screen("the typed text", |s| s.contains("echo typed"));
    let screen = tmux.wait_for_screen("the closing line", |s| {
        s.contains("gave up after 2 attempts")
    });
    let after = screen.split("$ bg").nth(1).unwrap();
    assert!(after.contains("echo typed"), "{screen}");
    assert!(
        after.contains(&format!("{}\n", waiting_line("4s"))),
        "{screen}"
    );
    assert!(!shows_a_later_frame(after, 4), "{screen}");
}

#[test]
fn a_stop_signal_in_the_background_ends_the_wait_at_once_with_the_line_once() {
    if !require(&[tools::TMUX]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = shell(dir.path());
    tmux.type_text(&format!("{} &", command_line("50s")));
    tmux.press(&["Enter"]);
    tmux.wait_for_screen("the wait's line", |s| s.contains(&waiting_line("50s")));
    tmux.type_text("kill %1; wait %1; echo \"status $?\"");
    let sent = std::time::Instant::now();
    tmux.press(&["Enter"]);
    let screen = tmux.wait_for_screen("the job's status", |s| s.contains("status 143"));
    // Well before the 50 s wait would have ended.
    assert!(sent.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(screen.matches("retrying in").count(), 1, "{screen}");
    assert!(
        screen.contains("retry: stopped by SIGTERM: not retrying"),
        "{screen}"
    );
}
