//! Retrying a real HTTP client (`curl -fsS`) against a local server that fails, then recovers
//! (the shared test server, [`crate::helpers::http`]).

use crate::helpers::http::{HttpServer, Reply, without_proxies};
use crate::helpers::retry;
use crate::tools::{self, require};

/// The body of the one successful response: distinctive, so stdout can be matched exactly.
const BODY: &str = "retry-http-test: ok 7f3a9c\n";

/// A server answering its `n`-th request (from 0) with `replies[n]`, or with the last reply
/// once they run out: 503, 429 or 200 with [`BODY`].
fn server(replies: &'static [u16]) -> HttpServer {
    HttpServer::start(move |_, n, _| match replies[n.min(replies.len() - 1)] {
        200 => Reply::new(200, BODY),
        code => Reply::new(code, "unavailable\n"),
    })
}

/// `retry ARGS -- curl -fsS URL`, with proxies out of the way so curl talks to 127.0.0.1.
/// (assert_cmd gives the command an empty, closed stdin.)
fn retry_curl(args: &[&str], url: &str) -> assert_cmd::assert::Assert {
    let mut cmd = retry();
    without_proxies(&mut cmd);
    cmd.args(args).args(["--", "curl", "-fsS", url]).assert()
}

#[test]
fn retries_503_and_429_until_200() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server(&[503, 429, 200]);
    let url = format!("{}/status", server.url());
    let assert = retry_curl(&["-b", "10ms", "-c", "50ms"], &url);
    let requests: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();

    let out = assert.get_output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "retry failed; stderr:\n{stderr}"
    );
    assert_eq!(stdout, BODY, "stdout must be the body, once");
    assert_eq!(
        requests,
        vec!["GET /status"; 3],
        "the server must see exactly 3 requests; stderr:\n{stderr}"
    );
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("retry: "))
        .collect();
    assert_eq!(
        progress.len(),
        3,
        "three progress lines expected:\n{stderr}"
    );
    assert!(
        progress[0].starts_with("retry: attempt 1 of 6: curl exited with status 22; retrying in "),
        "{stderr}"
    );
    assert!(
        progress[1].starts_with("retry: attempt 2 of 6: curl exited with status 22; retrying in "),
        "{stderr}"
    );
    assert!(
        progress[2].starts_with("retry: succeeded on attempt 3 of 6 after "),
        "{stderr}"
    );
    // curl's own messages for the two HTTP errors reach stderr untouched.
    assert!(stderr.contains("503"), "{stderr}");
    assert!(stderr.contains("429"), "{stderr}");
}

#[test]
fn gives_up_with_curls_status_after_the_last_retry() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server(&[503]);
    let url = format!("{}/status", server.url());
    let assert = retry_curl(&["-n", "2", "-b", "10ms"], &url);
    let requests = server.requests();

    let out = assert.get_output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // curl -f exits 22 when the server answers with an HTTP error.
    assert_eq!(out.status.code(), Some(22), "stderr:\n{stderr}");
    assert!(out.stdout.is_empty(), "no body on stdout with -f");
    assert_eq!(
        requests.len(),
        3,
        "1 attempt + 2 retries; stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("retry: attempt 3 of 3: curl exited with status 22\n"),
        "{stderr}"
    );
    assert!(
        crate::helpers::timeless(&stderr)
            .contains("retry: gave up after 3 attempts in T: no retries left"),
        "{stderr}"
    );
}
