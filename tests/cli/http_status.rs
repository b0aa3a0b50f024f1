//! `--http-retry-on` through the binary users run, against the local HTTP server and a real
//! curl as users call it (`curl -fsS -D /dev/stderr URL`: the body alone on stdout, the headers
//! on stderr for `--http-hints` to read; `-v`, and `-i` without `-f`, in a test each): a 503
//! and a 429 are retried, a 404 is not (after a redirect too), a refused connection is retried
//! as before, with the status in the progress and closing lines. HTTP/2 is replayed from two
//! `curl -sSv --fail-with-body` transcripts in `fixtures/` (`curl-v-http2-404.txt`,
//! `curl-v-http2-503.txt`: TLS notes, `> ` request, `< HTTP/2 404 `, lower-case fields, `< `).
//! The shared run, server and curl command are here. The sets (`any`, `5xx`, the variable,
//! the values refused) and the JSON and step summary: `http_status_sets.rs`; hostile output
//! (status lines in bodies, odd codes, hangs): `http_status_hostile.rs`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::helpers::http::{HttpServer, Reply, without_proxies};
use crate::helpers::{human_secs, release, timeless};
use crate::tools::{self, require};

/// How a run ended.
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// retry's own lines without `retry: `, the closing line's time as `T`.
    pub(crate) fn lines(&self) -> Vec<String> {
        timeless(&self.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix("retry: "))
            .map(String::from)
            .collect()
    }

    /// The JSON events (`--log-format json`).
    pub(crate) fn events(&self) -> Vec<serde_json::Value> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// `retry --http-hints -b 0 ARGS -- COMMAND` (the release binary, no proxies), with `vars`.
pub(crate) fn run_with(vars: &[(&str, &str)], args: &[&str], command: &[&str]) -> Run {
    let mut cmd = release();
    without_proxies(&mut cmd);
    let out = cmd
        .envs(vars.iter().copied())
        .args(["--http-hints", "-b", "0"])
        .args(args)
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`run_with`] and no variables.
pub(crate) fn run(args: &[&str], command: &[&str]) -> Run {
    run_with(&[], args, command)
}

/// A server for one test: `/flaky` answers 503 then 200, `/limited` 429 (`Retry-After: 1`)
/// then 200, `/gone` 404, `/moved-gone` and `/moved-flaky` redirect (301) to those; the time
/// of each request is noted.
pub(crate) fn server() -> (HttpServer, Arc<Mutex<Vec<Instant>>>) {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&arrivals);
    let server = HttpServer::start(move |path, n, _| {
        log.lock().unwrap().push(Instant::now());
        match (path, n) {
            ("/flaky", 0) => Reply::new(503, "busy\n"),
            ("/limited", 0) => Reply::new(429, "slow down\n").header("Retry-After", "1"),
            ("/gone", _) => Reply::new(404, "no such thing\n"),
            ("/moved-gone", _) => Reply::new(301, "").header("Location", "/gone"),
            ("/moved-flaky", _) => Reply::new(301, "").header("Location", "/flaky"),
            _ => Reply::new(200, "fine\n"),
        }
    });
    (server, arrivals)
}

/// The paths the server was asked for, in order.
pub(crate) fn paths(server: &HttpServer) -> Vec<String> {
    server.requests().into_iter().map(|r| r.path).collect()
}

/// `curl -fsS -D /dev/stderr [EXTRA] URL`.
pub(crate) fn curl<'a>(extra: &[&'a str], url: &'a str) -> Vec<&'a str> {
    let mut command = vec!["curl", "-fsS", "-D", "/dev/stderr"];
    command.extend(extra);
    command.push(url);
    command
}

/// Asserts `r` succeeded on attempt 2 of `of` after an attempt that got `first` (its line
/// ending in `retrying in DELAY` plus `after`), the closing line naming HTTP 200.
pub(crate) fn succeeded_second_time(r: &Run, first: &str, of: u32, after: &str) {
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let lines = r.lines();
    let want = format!("attempt 1 of {of}: {first}; retrying in ");
    assert!(
        lines[0].starts_with(&want) && lines[0].ends_with(after),
        "{}",
        r.stderr
    );
    let closing = r
        .stderr
        .lines()
        .find(|l| l.starts_with("retry: succeeded"))
        .unwrap_or_else(|| panic!("no closing line: {}", r.stderr));
    assert!(
        closing.starts_with(&format!("retry: succeeded on attempt 2 of {of} after "))
            && closing.ends_with(" (HTTP 200)"),
        "{closing}"
    );
}

#[test]
fn a_503_is_retried_and_the_200_after_it_succeeds() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/flaky", server.url());
    let r = run(&["-n", "2"], &curl(&[], &url));
    succeeded_second_time(&r, "curl exited with status 22 (HTTP 503)", 3, "in 0s");
    assert_eq!(r.stdout, "fine\n", "stdout is the body alone");
    assert!(r.stderr.contains("HTTP/1.1 503 Service Unavailable\r\n"));
    assert_eq!(paths(&server), ["/flaky", "/flaky"]);
}

#[test]
fn a_429_waits_for_its_retry_after_then_the_200_succeeds() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, arrivals) = server();
    let url = format!("{}/limited", server.url());
    let r = run(&["-n", "2"], &curl(&[], &url));
    succeeded_second_time(
        &r,
        "curl exited with status 22 (HTTP 429)",
        3,
        " (Retry-After)",
    );
    let shown = r.lines()[0]
        .split_once("retrying in ")
        .unwrap()
        .1
        .trim_end_matches(" (Retry-After)")
        .to_string();
    assert!((0.5..=1.0).contains(&human_secs(&shown)), "{}", r.stderr);
    let a = arrivals.lock().unwrap();
    assert_eq!(a.len(), 2);
    assert!(
        a[1] - a[0] >= Duration::from_millis(900),
        "{:?}",
        a[1] - a[0]
    );
    assert_eq!(r.stdout, "fine\n");
}

/// Asserts `r` is curl's 404 after attempt 1 of `of`, not retried.
fn not_retried_404(r: &Run, of: u32) {
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [
            format!("attempt 1 of {of}: curl exited with status 22 (HTTP 404)"),
            "gave up after 1 attempt in T: HTTP 404 is not retried".to_string(),
        ],
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("curl: (22) "), "{}", r.stderr);
    assert_eq!(r.stdout, "", "curl -f prints no body for an error");
}

#[test]
fn a_404_is_not_retried() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/gone", server.url());
    not_retried_404(&run(&["-n", "2"], &curl(&[], &url)), 3);
    assert_eq!(paths(&server), ["/gone"]);
}

#[test]
fn a_redirect_to_a_404_is_not_retried() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/moved-gone", server.url());
    not_retried_404(&run(&["-n", "2"], &curl(&["-L"], &url)), 3);
    assert_eq!(paths(&server), ["/moved-gone", "/gone"]);
}

#[test]
fn a_redirect_to_a_503_is_retried_and_succeeds() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/moved-flaky", server.url());
    let r = run(&["-n", "2"], &curl(&["-L"], &url));
    succeeded_second_time(&r, "curl exited with status 22 (HTTP 503)", 3, "in 0s");
    assert_eq!(r.stdout, "fine\n");
    assert_eq!(
        paths(&server),
        ["/moved-flaky", "/flaky", "/moved-flaky", "/flaky"]
    );
}

/// A port on 127.0.0.1 that nothing listens on (bound, then let go).
pub(crate) fn refusing_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/")
}

#[test]
fn a_refused_connection_is_retried_with_no_http_status() {
    if !require(&[tools::CURL]) {
        return;
    }
    let url = refusing_url();
    let r = run(&["-n", "2", "--log-format", "json"], &curl(&[], &url));
    assert_eq!(r.code, Some(7), "{}", r.stderr);
    let events = r.events();
    let ends: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "attempt_end")
        .collect();
    assert_eq!(ends.len(), 3, "{}", r.stderr);
    assert!(
        events.iter().all(|e| e.get("http_status").is_none()),
        "{}",
        r.stderr
    );
    let give_up = events.iter().find(|e| e["event"] == "give_up").unwrap();
    assert_eq!(give_up["reason"], "no retries left");
    // And in text: the same three attempts, no HTTP anywhere in retry's lines.
    let r = run(&["-n", "2"], &curl(&[], &url));
    assert_eq!(r.code, Some(7), "{}", r.stderr);
    assert_eq!(r.lines().len(), 4, "{}", r.stderr);
    assert!(
        r.lines()[0].starts_with("attempt 1 of 3: curl exited with status 7; retrying in "),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.lines()[3],
        "gave up after 3 attempts in T: no retries left"
    );
    assert!(
        r.lines().iter().all(|l| !l.contains("HTTP")),
        "{}",
        r.stderr
    );
}

/// A `curl -sSv --fail-with-body` transcript of an HTTP/2 response in `fixtures/`.
fn transcript(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "cli", "fixtures", name]
        .iter()
        .collect();
    assert!(path.is_file(), "{}", path.display());
    path.to_str().unwrap().to_string()
}

/// `sh -c 'cat FILE >&2; exit 22' sh FILE`: curl's stderr and status replayed.
fn replay(file: &str) -> [&str; 5] {
    ["sh", "-c", "cat \"$1\" >&2; exit 22", "sh", file]
}

#[test]
fn http2_transcripts_of_curl_v_are_read() {
    let busy = transcript("curl-v-http2-503.txt");
    let r = run(&["-n", "1"], &replay(&busy));
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [
            "attempt 1 of 2: sh exited with status 22 (HTTP 503); retrying in 0s",
            "attempt 2 of 2: sh exited with status 22 (HTTP 503)",
            "gave up after 2 attempts in T: no retries left (last response: HTTP 503)",
        ],
        "{}",
        r.stderr
    );
    let gone = transcript("curl-v-http2-404.txt");
    let r = run(&["-n", "1"], &replay(&gone));
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [
            "attempt 1 of 2: sh exited with status 22 (HTTP 404)",
            "gave up after 1 attempt in T: HTTP 404 is not retried",
        ],
        "{}",
        r.stderr
    );
    // The transcript reached stderr as curl printed it.
    assert!(
        r.stderr
            .contains("< HTTP/2 404 \r\n< content-type: application/json\r\n")
    );
}

#[test]
fn curl_f_v_cuts_its_block_and_fail_with_body_v_ends_it_both_read() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let gone = format!("{}/gone", server.url());
    // curl -f -v stops at an error status before printing the `< ` that ends the block; its
    // `curl: (22) The requested URL returned error: 404` gives the block cut so its status,
    // and the 404 is not retried (`http_clients.rs` has more).
    let r = run(&["-n", "1"], &["curl", "-fsSv", &gone]);
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert!(
        r.stderr.contains("< HTTP/1.1 404 Not Found\r\n"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("\n< \r\n"), "{}", r.stderr);
    assert_eq!(
        r.lines().last().unwrap(),
        "gave up after 1 attempt in T: HTTP 404 is not retried",
        "{}",
        r.stderr
    );
    // --fail-with-body prints the whole block: the 404 is read, and not retried.
    let r = run(&["-n", "1"], &["curl", "-sSv", "--fail-with-body", &gone]);
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(
        r.lines().last().unwrap(),
        "gave up after 1 attempt in T: HTTP 404 is not retried",
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "no such thing\n");
    assert_eq!(paths(&server), ["/gone", "/gone"]);
}

#[test]
fn curl_i_without_f_succeeds_on_any_status_unless_the_output_says_to_retry() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    // Without -f curl exits 0 on a 404: a success, whatever it printed.
    let gone = format!("{}/gone", server.url());
    let r = run(&["-n", "2"], &["curl", "-sS", "-i", &gone]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.starts_with("HTTP/1.1 404 Not Found\r\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with("\r\n\r\nno such thing\n"),
        "{}",
        r.stdout
    );
    assert_eq!(r.lines(), Vec::<String>::new(), "{}", r.stderr);
    // --retry-if-output makes an answer a failure: the 503 is retried, the 404 is not.
    let flaky = format!("{}/flaky", server.url());
    let busy = ["-n", "2", "--retry-if-output", "^(busy|no such thing)$"];
    let r = run(&busy, &["curl", "-sS", "-i", &flaky]);
    succeeded_second_time(
        &r,
        "curl exited with status 0 but its output matched --retry-if-output (HTTP 503)",
        3,
        "in 0s",
    );
    assert!(
        r.stdout.contains("busy\nHTTP/1.1 200 OK\r\n"),
        "{}",
        r.stdout
    );
    let r = run(&busy, &["curl", "-sS", "-i", &gone]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [
            "attempt 1 of 3: curl exited with status 0 but its output matched \
             --retry-if-output (HTTP 404)",
            "gave up after 1 attempt in T: HTTP 404 is not retried",
        ]
    );
    assert_eq!(paths(&server), ["/gone", "/flaky", "/flaky", "/gone"]);
}
