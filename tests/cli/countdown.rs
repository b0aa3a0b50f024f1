//! The countdown on a terminal (a real pty): while retry waits, the failed attempt's line is
//! redrawn in place with the time left, cut to the terminal's width (read again at each frame,
//! so a resize is followed), on a line of its own (spaces across the terminal, then a carriage
//! return: see countdown_screen.rs for what a terminal shows), and finalised as the line logs
//! get before the next attempt's first byte; a signal ends it at once with the line whole. Off a terminal (a pipe, a file, or
//! a terminal with TERM=dumb) the lines are the logs' own: no carriage return, no escape.
//! All through the release build, the binary users run.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use crate::helpers::pty::{Attach, Screen, resize, retry_on_pty, spawn_on_pty_sized};
use crate::helpers::{release, release_std, send, wait_with_limit};

/// The attempt: says which it is on stdout, then fails.
const ATTEMPT: [&str; 3] = ["sh", "-c", "echo \"attempt $RETRY_ATTEMPT\"; exit 1"];

/// `-b DELAY` without jitter, one retry, then ATTEMPT.
fn args(delay: &str) -> Vec<&str> {
    let mut args = vec!["-b", delay, "-j", "none", "-n", "1", "--"];
    args.extend(ATTEMPT);
    args
}

/// What the attempt's line is on the terminal: `head; retrying in ...`.
const HEAD: &[u8] = b"retry: attempt 1 of 2: sh exited with status 1; retrying in ";

/// The frames drawn between `from` and `to` in `seen` (bytes between carriage returns), each
/// without its erase-to-end-of-line.
fn frames(seen: &[u8]) -> Vec<String> {
    seen.split(|&b| b == b'\r')
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f.strip_suffix(b"\x1b[K").unwrap_or(f)).into_owned())
        .collect()
}

/// The bytes of `seen` between the first `from` and the first `to` after it.
fn between<'a>(seen: &'a [u8], from: &[u8], to: &[u8]) -> &'a [u8] {
    let at = find(seen, from).unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(seen)));
    let rest = &seen[at + from.len()..];
    let end = find(rest, to).unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(seen)));
    &rest[..end]
}

/// What starts the countdown on a line of its own on a terminal `columns` wide: as many spaces,
/// then a carriage return.
fn lead(columns: usize) -> String {
    format!("{}\r", " ".repeat(columns))
}

/// `wait` without the `lead` it starts with; panics if it does not.
fn after_lead<'a>(wait: &'a [u8], lead: &str) -> &'a [u8] {
    wait.strip_prefix(lead.as_bytes())
        .unwrap_or_else(|| panic!("no lead: {:?}", String::from_utf8_lossy(wait)))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn the_wait_counts_down_in_place_and_is_final_before_the_next_attempt() {
    let (mut child, master) = retry_on_pty(&args("3.5s"), &[("TERM", "xterm")], 120);
    let seen = Screen::read(&master).until_closed();
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
    // Between the first attempt's line and the second's: frames only, each the attempt's line
    // with the time left, the last the line logs get, ended by its newline (the terminal
    // turns it into CR LF) right before the next attempt's first byte.
    let wait = after_lead(between(&seen, b"attempt 1\r\n", b"attempt 2"), &lead(120));
    assert!(
        wait.ends_with(b"retrying in 3.5s\x1b[K\r\n"),
        "{:?}",
        String::from_utf8_lossy(wait)
    );
    let shown: Vec<String> = frames(&wait[..wait.len() - 1])
        .iter()
        .map(|f| {
            f.strip_prefix(std::str::from_utf8(HEAD).unwrap())
                .unwrap_or_else(|| panic!("not a frame: {f:?} in {wait:?}"))
                .to_string()
        })
        .collect();
    assert_eq!(shown.first().map(String::as_str), Some("3.5s"), "{shown:?}");
    assert_eq!(shown.last().map(String::as_str), Some("3.5s"), "{shown:?}");
    // Once a second in between, counting down (a loaded machine may skip one, never add one).
    let middle = &shown[1..shown.len() - 1];
    assert!(!middle.is_empty(), "no frame counted down: {shown:?}");
    let mut secs: Vec<u32> = middle
        .iter()
        .map(|s| s.strip_suffix('s').unwrap().parse().unwrap())
        .collect();
    assert!(secs.iter().all(|s| (1..=3).contains(s)), "{shown:?}");
    let before = secs.clone();
    secs.dedup();
    assert_eq!(secs, before, "a second was drawn twice: {shown:?}");
    assert!(secs.is_sorted_by(|a, b| a > b), "{shown:?}");
    // The last attempt's line and the closing line are plain lines.
    let end = &seen[find(&seen, b"attempt 2\r\n").unwrap()..];
    let text = String::from_utf8_lossy(end);
    assert!(
        text.contains("\r\nretry: attempt 2 of 2: sh exited with status 1\r\n"),
        "{text:?}"
    );
    assert!(text.contains("gave up after 2 attempts in "), "{text:?}");
}

#[test]
fn frames_fit_the_terminal_and_follow_a_resize() {
    let (mut child, master) = retry_on_pty(&args("4s"), &[("TERM", "xterm")], 50);
    let mut screen = Screen::read(&master);
    // The first frame is on the screen: the terminal is made narrower meanwhile.
    screen.wait_for(b"retrying in 4s\x1b[K", 1);
    resize(&master, 30);
    let seen = screen.until_closed();
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
    let wait = after_lead(between(&seen, b"attempt 1\r\n", b"attempt 2"), &lead(50));
    // After the resize the countdown starts afresh: the last frame (49 columns) is erased from
    // its start, then a line of its own at the new width. Once.
    let relead = format!("\x1b[K\x1b[49D\x1b[K{}", lead(30));
    let at = find(wait, relead.as_bytes())
        .unwrap_or_else(|| panic!("no fresh line: {:?}", String::from_utf8_lossy(wait)));
    let rest = &wait[at + relead.len()..];
    assert!(find(rest, b"D\x1b[K").is_none(), "{rest:?}");
    let wait = [&wait[..at], b"\x1b[K\r", rest].concat();
    let all = frames(&wait[..wait.len() - 1]);
    let (last, drawn) = all.split_last().unwrap();
    // Every frame but the final line fits in the width less a column, the attempt's
    // description cut short; the final line is whole (the terminal wraps it).
    assert!(drawn.len() >= 2, "{all:?}");
    for frame in drawn {
        assert!(frame.chars().count() < 50, "{frame:?} in {all:?}");
        assert!(frame.contains("...; retrying in "), "{frame:?}");
    }
    assert!(last.starts_with("retry: attempt 1 of 2: sh exited with status 1; retrying in 4s"));
    // The frame of the last second, drawn seconds after the resize, fits the new width.
    let latest = drawn.last().unwrap();
    assert!(latest.ends_with(" 1s"), "{all:?}");
    assert!(latest.chars().count() < 30, "{all:?}");
}

#[test]
fn a_signal_during_the_countdown_ends_it_at_once_with_the_line_whole() {
    let mut flags = vec!["-c", "2h"];
    flags.extend(args("1h"));
    let (mut child, master) = retry_on_pty(&flags, &[("TERM", "xterm")], 120);
    let mut screen = Screen::read(&master);
    screen.wait_for(b"retrying in 1h\x1b[K", 1);
    let sent = std::time::Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(sent.elapsed() < std::time::Duration::from_secs(20));
    let seen = screen.until_closed();
    let text = String::from_utf8_lossy(&seen);
    assert!(
        text.ends_with("retrying in 1h\x1b[K\r\nretry: stopped by SIGTERM: not retrying\r\n"),
        "{text:?}"
    );
}

#[test]
fn off_a_terminal_the_lines_are_the_logs_own() {
    // stderr a pipe, whatever stdout is, and TERM says a capable terminal.
    let out = release()
        .env("TERM", "xterm")
        .args(args("1.2s"))
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains(['\r', '\x1b']), "{stderr:?}");
    assert!(
        stderr.starts_with("retry: attempt 1 of 2: sh exited with status 1; retrying in 1.2s\n"),
        "{stderr:?}"
    );
    // stdout a terminal, stderr a file: still the logs' lines.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr");
    let mut cmd = release_std();
    cmd.args(args("1.2s"))
        .env("TERM", "xterm")
        .stderr(std::fs::File::create(&log).unwrap());
    let (mut child, master) = spawn_on_pty_sized(cmd, Attach::Stdout, Some(80));
    let seen = Screen::read(&master).until_closed();
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
    assert_eq!(seen, b"attempt 1\r\nattempt 2\r\n");
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(!stderr.contains(['\r', '\x1b']), "{stderr:?}");
}

#[test]
fn term_dumb_gets_neither_countdown_nor_colour() {
    let (mut child, master) = retry_on_pty(&args("1.2s"), &[("TERM", "dumb")], 80);
    let seen = Screen::read(&master).until_closed();
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
    let text = String::from_utf8_lossy(&seen);
    assert!(!text.contains('\x1b'), "{text:?}");
    // Only the terminal's own CR before each LF.
    assert!(!text.replace("\r\n", "\n").contains('\r'), "{text:?}");
    assert!(text.contains("retrying in 1.2s\r\n"), "{text:?}");
}

#[test]
fn stderr_on_a_terminal_with_stdout_in_a_pipe_counts_down_and_keeps_stdout_clean() {
    let mut cmd = release_std();
    cmd.args(args("1.5s")).env("TERM", "xterm");
    // The pty gets stdout first (Attach::Stdout), then stderr is moved there and stdout
    // piped: stderr on the terminal, stdout in a pipe.
    let pty = crate::helpers::pty::open_pty(None);
    let slave = std::fs::File::from(pty.slave);
    cmd.stderr(slave.try_clone().unwrap())
        .stdout(Stdio::piped())
        .stdin(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    drop(slave);
    let master = std::fs::File::from(pty.master);
    let screen = Screen::read(&master);
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
    assert_eq!(stdout, "attempt 1\nattempt 2\n");
    let seen = String::from_utf8_lossy(&screen.until_closed()).into_owned();
    assert!(seen.contains("retrying in 1s\x1b[K"), "{seen:?}");
}

#[test]
fn a_terminal_paused_with_ctrl_s_never_holds_retry_past_a_stop_signal() {
    // The terminal holds its output (Ctrl-S, XOFF) before the countdown's first write, the
    // spaces across its 2000 columns and the frame: that write waits; SIGTERM ends retry all
    // the same, at once.
    let flags = [
        "-c", "2h", "-b", "1h", "-j", "none", "-n", "1", "--", "sh", "-c", "exit 1",
    ];
    let (mut child, mut master) = retry_on_pty(&flags, &[("TERM", "xterm")], 2000);
    std::io::Write::write_all(&mut master, b"\x13").unwrap();
    // The attempt is over and reaped, every thread of retry asleep: in the write or the wait.
    let pid = child.id() as i32;
    let waiting = || {
        let asleep = std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
            tasks.flatten().all(|t| {
                crate::helpers::proc::stat_at(&t.path().join("stat")).is_none_or(|s| s.state == 'S')
            })
        });
        let childless = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .is_ok_and(|c| c.trim().is_empty());
        asleep && childless
    };
    let start = std::time::Instant::now();
    while !waiting() {
        assert!(
            start.elapsed() < crate::helpers::HANG_LIMIT,
            "retry never waited"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let sent = std::time::Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(sent.elapsed() < std::time::Duration::from_secs(20));
    std::io::Write::write_all(&mut master, b"\x11").unwrap();
}
