//! Colour of retry's own words: `--color always` colours even into a pipe (give-up red,
//! success after retries green, a hint's name cyan), `--color never` and `NO_COLOR` never, on a
//! terminal too; `auto` colours on a terminal and, with `CLICOLOR_FORCE`, in a pipe; JSON
//! events and the command's output are never coloured. Through the release build, the binary
//! users run.

use crate::helpers::pty::{Screen, retry_on_pty};
use crate::helpers::{refuses_env, release, wait_with_limit};

/// SGR sequences of the closing lines and the hint: bold red, bold green, cyan.
const RED: &str = "\x1b[1m\x1b[31m";
const GREEN: &str = "\x1b[1m\x1b[32m";
const CYAN: &str = "\x1b[36m";

/// Fails until attempt 2, printing an escape sequence of its own on stdout and stderr.
const UNTIL_2: [&str; 3] = [
    "sh",
    "-c",
    "printf '\\033[35mown\\n'; printf '\\033[35mown\\n' >&2; test $RETRY_ATTEMPT -ge 2",
];

/// `retry ARGS` with the variables `env`; returns (status, stdout, stderr).
fn run(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String, String) {
    let out = release()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// retry's own lines of `stderr` (the command's begin with its escape or `own`).
fn own(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("retry: ")).collect()
}

#[test]
fn always_colours_the_closing_lines_and_the_hint_into_a_pipe() {
    let mut args = vec!["--color", "always", "-b", "0", "--"];
    args.extend(UNTIL_2);
    let (code, stdout, stderr) = run(&[], &args);
    assert_eq!(code, Some(0), "{stderr}");
    // The command's output is passed on as it is.
    assert_eq!(stdout, "\x1b[35mown\n\x1b[35mown\n");
    let lines = own(&stderr);
    assert_eq!(lines.len(), 2, "{stderr:?}");
    assert!(!lines[0].contains("\x1b["), "{stderr:?}");
    assert!(
        lines[1].starts_with(&format!("retry: {GREEN}succeeded on attempt 2 of 6 after "))
            && lines[1].ends_with("\x1b[0m"),
        "{stderr:?}"
    );
    let (code, _, stderr) = run(
        &[("RETRY_COLOR", "always")],
        &[
            "--delay-from-output",
            "^wait (.*)$",
            "-b",
            "0",
            "-n",
            "1",
            "--",
            "sh",
            "-c",
            // Half a second: a hint counts from when its line was read, and under qemu-user
            // the attempt ends tens of milliseconds later, which would use up a shorter one.
            "echo wait 0.5; exit 3",
        ],
    );
    assert_eq!(code, Some(3), "{stderr}");
    let lines = own(&stderr);
    assert!(
        lines[0].contains("; retrying in ")
            && lines[0].ends_with(&format!("ms ({CYAN}--delay-from-output\x1b[0m)")),
        "{stderr:?}"
    );
    assert!(
        lines[2].starts_with(&format!("retry: {RED}gave up after 2 attempts in ")),
        "{stderr:?}"
    );
}

#[test]
fn never_and_no_color_give_no_escape_on_a_terminal() {
    let mut args = vec!["-b", "0", "-n", "1", "--"];
    args.extend(["sh", "-c", "exit 3"]);
    for (flags, env) in [
        (&["--color", "never"][..], &[("TERM", "xterm")][..]),
        (&[][..], &[("TERM", "xterm"), ("NO_COLOR", "1")][..]),
        // NO_COLOR outranks CLICOLOR_FORCE.
        (
            &[][..],
            &[
                ("TERM", "xterm"),
                ("NO_COLOR", "1"),
                ("CLICOLOR_FORCE", "1"),
            ][..],
        ),
        (&[][..], &[("TERM", "xterm"), ("RETRY_COLOR", "never")][..]),
    ] {
        let all: Vec<&str> = flags.iter().chain(&args).copied().collect();
        let (mut child, master) = retry_on_pty(&all, env, 100);
        let seen = Screen::read(&master).until_closed();
        assert_eq!(wait_with_limit(&mut child).code(), Some(3));
        let text = String::from_utf8_lossy(&seen);
        assert!(text.contains("gave up after 2 attempts"), "{text:?}");
        assert!(!text.contains('\x1b'), "{flags:?} {env:?}: {text:?}");
    }
    // auto on the same terminal colours.
    let (mut child, master) = retry_on_pty(&args, &[("TERM", "xterm")], 100);
    let seen = Screen::read(&master).until_closed();
    assert_eq!(wait_with_limit(&mut child).code(), Some(3));
    let text = String::from_utf8_lossy(&seen);
    assert!(text.contains(&format!("retry: {RED}gave up")), "{text:?}");
}

#[test]
fn auto_colours_a_pipe_only_when_forced() {
    let args = ["-b", "0", "-n", "0", "--", "sh", "-c", "exit 3"];
    let (_, _, plain) = run(&[("TERM", "xterm")], &args);
    assert!(!plain.contains('\x1b'), "{plain:?}");
    let (_, _, forced) = run(&[("CLICOLOR_FORCE", "1")], &args);
    assert!(
        forced.contains(&format!("retry: {RED}gave up")),
        "{forced:?}"
    );
}

#[test]
fn json_events_are_never_coloured() {
    let mut args = vec!["--color", "always", "--log-format", "json", "-b", "0", "--"];
    args.extend(UNTIL_2);
    let (code, _, stderr) = run(&[], &args);
    assert_eq!(code, Some(0), "{stderr}");
    let events: Vec<&str> = stderr.lines().filter(|l| l.starts_with('{')).collect();
    assert!(events.len() >= 4, "{stderr:?}");
    for line in events {
        assert!(
            !line.contains('\x1b') && !line.contains("\\u001b"),
            "{line:?}"
        );
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

#[test]
fn a_bad_color_names_the_flag_or_the_variable() {
    crate::helpers::refuses(
        &["--color", "rainbow", "--", "true"],
        &["--color", "rainbow"],
    );
    refuses_env(
        &[("RETRY_COLOR", "rainbow")],
        &["--", "true"],
        &["RETRY_COLOR", "rainbow"],
    );
}
