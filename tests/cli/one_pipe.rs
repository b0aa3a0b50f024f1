//! One pipe for an attempt's stdout and stderr whenever retry reads them (`--http-hints`,
//! `--idle-timeout`, `--retry-if-output`, `--stop-if-output`) and its own stdout and stderr are
//! one file, pipe or terminal: what the attempt writes comes out in the order it was written,
//! as it would without retry (issue 41, item 8), and a real `curl -sv`, `-i` or `-D
//! /dev/stderr` prints exactly what curl alone prints, its hints still read. On two files the
//! streams stay apart. `--chronic`'s order is in `chronic_order.rs`, the CI folds' in
//! `folds.rs`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::http::{HttpServer, Reply};
use crate::helpers::{release_std, wait_with_limit};
use crate::tools::{self, require};

/// Each flag that has retry read the attempt's output, with a value that changes nothing.
const FLAGS: [&[&str]; 4] = [
    &["--http-hints"],
    &["--idle-timeout", "1m"],
    &["--retry-if-output", "^never$"],
    &["--stop-if-output", "^never$"],
];

/// Three writes, across both streams, the first without its newline: on one file `AB`, `C`.
const SCRIPT: &str = r#"printf A >&2; printf "B\n"; printf "C\n" >&2"#;

/// Runs of each case: two pipes read by two threads got the order wrong in most runs (55 of
/// 60), so twenty runs in order are no luck.
const RUNS: usize = 20;

/// `retry FLAGS -n 0 -- sh -c SCRIPT`.
fn args<'a>(flags: &[&'a str], script: &'a str) -> Vec<&'a str> {
    let mut args = flags.to_vec();
    args.extend(["-n", "0", "--", "sh", "-c", script]);
    args
}

/// What `retry ARGS` writes with its stdout and stderr one pipe (`2>&1 | cat`), and its status.
fn on_one_pipe(cmd: &mut Command) -> (Option<i32>, Vec<u8>) {
    let (read, write) = retry::process::cloexec_pipe().unwrap();
    cmd.stdout(write.try_clone().unwrap()).stderr(write);
    let mut child = cmd.spawn().unwrap();
    // (The command keeps its copies of the write end until it is dropped.)
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut all = Vec::new();
    std::fs::File::from(read).read_to_end(&mut all).unwrap();
    (wait_with_limit(&mut child).code(), all)
}

/// What `retry ARGS` writes with its stdout and stderr one file (`>log 2>&1`).
fn into_one_file(args: &[&str]) -> Vec<u8> {
    let log = tempfile::NamedTempFile::new().unwrap();
    let file = log.reopen().unwrap();
    let mut child = release_std()
        .args(args)
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    assert_eq!(wait_with_limit(&mut child).code(), Some(0));
    std::fs::read(log.path()).unwrap()
}

/// What `retry ARGS` shows on a terminal (its stdin, stdout and stderr), line ends as `\n`.
fn on_a_terminal(args: &[&str]) -> Vec<u8> {
    let (mut child, mut master) = crate::helpers::pty::retry_on_pty(args, &[], 80);
    let seen = crate::helpers::pty::read_until_closed(&mut master);
    assert_eq!(wait_with_limit(&mut child).code(), Some(0));
    String::from_utf8_lossy(&seen)
        .replace("\r\n", "\n")
        .into_bytes()
}

/// Asserts that every run of `run` with every flag of [`FLAGS`] gave `AB`, `C`.
fn in_order_every_time(how: &str, run: impl Fn(&[&str]) -> Vec<u8>) {
    for flags in FLAGS {
        let args = args(flags, SCRIPT);
        for n in 1..=RUNS {
            let got = run(&args);
            assert_eq!(
                String::from_utf8_lossy(&got),
                "AB\nC\n",
                "{how}, {flags:?}, run {n} of {RUNS}: not in the order written"
            );
        }
    }
}

#[test]
fn on_one_pipe_every_flag_that_reads_output_keeps_the_order_written() {
    in_order_every_time("one pipe", |args| {
        let (code, all) = on_one_pipe(release_std().args(args));
        assert_eq!(code, Some(0));
        all
    });
}

#[test]
fn into_one_file_every_flag_that_reads_output_keeps_the_order_written() {
    in_order_every_time("one file", into_one_file);
}

#[test]
fn on_a_terminal_every_flag_that_reads_output_keeps_the_order_written() {
    in_order_every_time("a terminal", on_a_terminal);
}

#[test]
fn on_two_pipes_stdout_and_stderr_stay_apart() {
    for flags in FLAGS {
        let out = crate::helpers::release()
            .args(args(flags, SCRIPT))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "B\n", "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "AC\n", "{flags:?}");
    }
}

#[test]
fn output_conditions_match_the_lines_one_file_shows() {
    // On one file the attempt's stdout and stderr are one stream, and its lines are the lines
    // that file shows: `A` written to stderr without a newline, then `B` to stdout, is the
    // line `AB` there, and is matched as such.
    let script = r#"printf A >&2; echo B"#;
    let (code, all) = on_one_pipe(release_std().args(args(&["--stop-if-output", "^AB$"], script)));
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&all));
    let (code, all) = on_one_pipe(release_std().args(args(&["--retry-if-output", "^AB$"], script)));
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&all));
    // On two pipes, each stream's lines are its own: `B` alone on stdout.
    let out = crate::helpers::release()
        .args(args(&["--retry-if-output", "^B$"], script))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = crate::helpers::release()
        .args(args(&["--retry-if-output", "^AB$"], script))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// A server answering `/missing` 404, `/busy` 503 with `Retry-After: 1`, and `/later` 503
/// with `Retry-After: 1` once, then 200.
fn server() -> HttpServer {
    HttpServer::start(|path, n, _| match path {
        "/missing" => Reply::new(404, "nothing here\n"),
        "/later" if n > 0 => Reply::new(200, "fine\n"),
        _ => Reply::new(503, "busy\n").header("Retry-After", "1"),
    })
}

/// `cmd` with the proxy variables removed, so curl talks to 127.0.0.1.
fn direct(mut cmd: Command) -> Command {
    for var in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Lines of output without the server's `Date` (which changes by the second) and retry's own.
fn comparable(all: &[u8]) -> String {
    String::from_utf8_lossy(all)
        .lines()
        .filter(|l| !(l.starts_with("retry: ") || l.contains("Date: ")))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn real_curl_on_one_pipe_prints_what_curl_alone_prints_and_its_status_is_read() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server();
    let (busy, missing) = (
        format!("{}/busy", server.url()),
        format!("{}/missing", server.url()),
    );
    // curl writes stderr as it goes and stdout through a buffer: on one pipe its error, or
    // `-v`'s last lines, come before the headers or body it printed on stdout. The status read
    // shows in retry's lines (`-fv` stops before the end of the block: its `curl: (22)` line
    // gives the status).
    let cases: [(&[&str], &str); 4] = [
        (&["-sv", &busy], "(last response: HTTP 503)"),
        (&["-fsSi", &missing], "HTTP 404 is not retried"),
        (
            &["-fsS", "-D", "/dev/stderr", &busy],
            "(last response: HTTP 503)",
        ),
        (&["-fsSv", &missing], "HTTP 404 is not retried"),
    ];
    for (curl, closing) in cases {
        let mut alone = direct(Command::new("curl"));
        alone.args(curl).stdin(Stdio::null());
        let (_, want) = on_one_pipe(&mut alone);
        let want = comparable(&want);
        assert!(want.lines().count() > 3, "{curl:?}: {want}");
        for n in 1..=RUNS / 2 {
            let mut cmd = direct(release_std());
            cmd.args([
                "--http-hints",
                "--retry-if-output",
                "^(< )?HTTP/1.1 503",
                "-n",
                "0",
            ])
            .arg("--")
            .arg("curl")
            .args(curl);
            let (_, all) = on_one_pipe(&mut cmd);
            assert_eq!(comparable(&all), want, "{curl:?}, run {n}");
            let text = String::from_utf8_lossy(&all);
            let last = text.lines().last().unwrap_or_default();
            assert!(
                last.starts_with("retry: gave up") && last.contains(closing),
                "{curl:?}: {text}"
            );
        }
    }
}

#[test]
fn real_curl_on_one_pipe_still_waits_as_its_headers_ask() {
    if !require(&[tools::CURL]) {
        return;
    }
    // `-v` (headers on stderr, after `< `, body on stdout) and `-i` (both on stdout): the
    // server's `Retry-After: 1` is read from the one stream and waited for.
    for curl in [["-sv"], ["-sSi"]] {
        let server = server();
        let url = format!("{}/later", server.url());
        let mut cmd = direct(release_std());
        cmd.args([
            "--http-hints",
            "--retry-if-output",
            "^(< )?HTTP/1.1 503",
            "-b",
            "0",
            "-c",
            "0",
            "-n",
            "1",
            "--",
            "curl",
        ])
        .args(curl)
        .arg(&url);
        let started = Instant::now();
        let (code, all) = on_one_pipe(&mut cmd);
        let text = String::from_utf8_lossy(&all);
        assert_eq!(code, Some(0), "{curl:?}: {text}");
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "{curl:?}: no wait: {text}"
        );
        assert!(text.contains("(Retry-After)"), "{curl:?}: {text}");
        // The progress line comes after all of attempt 1's output, and before attempt 2's.
        let retrying = text.find("retry: attempt 1 of 2").unwrap();
        assert!(text[..retrying].contains("busy"), "{curl:?}: {text}");
        assert!(text[retrying..].contains("fine"), "{curl:?}: {text}");
    }
}

#[test]
fn a_fifo_opened_twice_as_stdout_and_stderr_is_one_file() {
    // `>fifo 2>fifo`: two opens, one pipe behind them (the same device and inode).
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    in_order_every_time("a FIFO opened twice", |args| {
        let path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(path).unwrap());
        let open = || std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let mut child = release_std()
            .args(args)
            .stdout(open())
            .stderr(open())
            .spawn()
            .unwrap();
        assert_eq!(wait_with_limit(&mut child).code(), Some(0));
        reader.join().unwrap()
    });
}

#[test]
fn with_chronic_or_ci_folds_too_the_order_is_kept() {
    let failing = format!("{SCRIPT}; exit 1");
    let attempt_lines = |all: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(all)
            .lines()
            .filter(|l| !(l.starts_with("retry: ") || l.starts_with("::")))
            .map(str::to_string)
            .collect()
    };
    for flags in FLAGS {
        let mut chronic = vec!["--chronic"];
        chronic.extend(flags);
        let (code, all) = on_one_pipe(release_std().args(args(&chronic, &failing)));
        assert_eq!(code, Some(1));
        assert_eq!(attempt_lines(&all), ["AB", "C"], "--chronic {flags:?}");
        let mut cmd = release_std();
        cmd.envs([("CI", "true"), ("GITHUB_ACTIONS", "true")])
            .args(args(flags, &failing));
        let (code, all) = on_one_pipe(&mut cmd);
        assert_eq!(code, Some(1));
        // (The last line of each stream is ended before `::endgroup::` or retry's line.)
        assert_eq!(
            attempt_lines(&all),
            ["attempt 1 of 1", "AB", "C"],
            "CI {flags:?}"
        );
    }
}

#[test]
fn sigterm_during_output_keeps_the_order_and_retry_dies_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "i=1; while [ $i -le 200 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done; \
         touch {d}/written; sleep 100",
        d = dir.path().display()
    );
    let (read, write) = retry::process::cloexec_pipe().unwrap();
    let mut child = release_std()
        .args(["--http-hints", "-n", "0", "--", "sh", "-c", &script])
        .stdout(write.try_clone().unwrap())
        .stderr(write)
        .spawn()
        .unwrap();
    crate::helpers::wait_for_lines(&dir.path().join("written"), 0);
    crate::helpers::send(child.id(), libc::SIGTERM);
    let mut all = Vec::new();
    std::fs::File::from(read).read_to_end(&mut all).unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(wait_with_limit(&mut child).signal(), Some(libc::SIGTERM));
    let want: Vec<String> = (1..=200)
        .flat_map(|i| [format!("out{i}"), format!("err{i}")])
        .collect();
    let got: Vec<&str> = std::str::from_utf8(&all)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("retry: "))
        .collect();
    assert_eq!(got, want);
}
