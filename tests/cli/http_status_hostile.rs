//! `--http-retry-on` against hostile and odd output (issue 34's adversarial pass): status
//! lines inside bodies, huge and malformed status codes, an enormous header block, a server
//! that hangs after its headers or cuts its body short, header blocks on both streams, and
//! `--http-retry-on` values with spaces, commas and classes. Real curl against the local
//! servers (tiny_http, and the raw one for bytes tiny_http will not send), or curl's output
//! replayed with `printf`. What reads wrongly and is left so says so in its test.

use std::time::Duration;

use crate::helpers::http::{HttpServer, RawServer, Reply};
use crate::helpers::{refused, release};
use crate::http_status::{Run, refusing_url, run};
use crate::tools::{self, require};

/// A fake response, as a body might quote one.
const FAKE_404: &str = "HTTP/1.1 404 Not Found\r\n\r\n";

/// Long enough for any hold: the raw server's connections close when it is dropped.
const HOLD: Duration = Duration::from_secs(30);

/// `sh -c 'curl -sS ARGS URL; exit 22'`: curl's output with `-f`'s status, whatever it got.
fn failing_curl(args: &str, url: &str) -> Vec<String> {
    let script = format!("curl -sS {args} \"$1\"; exit 22");
    ["sh", "-c", &script, "sh", url].map(String::from).to_vec()
}

/// [`run`] with owned command words.
fn run_owned(args: &[&str], command: &[String]) -> Run {
    let command: Vec<&str> = command.iter().map(String::as_str).collect();
    run(args, &command)
}

/// `sh -c 'printf FORMAT; exit 22'` (`>&2` with `to_stderr`).
fn printf(format: &str, to_stderr: bool) -> Vec<String> {
    let redirect = if to_stderr { " >&2" } else { "" };
    let script = format!("printf '{format}'{redirect}; exit 22");
    ["sh", "-c", &script].map(String::from).to_vec()
}

/// Asserts the run retried until `-n 1` ran out, its lines naming `http` (`None`: no status).
fn retried(r: &Run, http: Option<u16>, what: &str) {
    let (status, last) = match http {
        Some(code) => (
            format!(" (HTTP {code})"),
            format!(" (last response: HTTP {code})"),
        ),
        None => (String::new(), String::new()),
    };
    let program = r.lines()[0].split(' ').nth(4).unwrap_or("").to_string();
    assert_eq!(
        r.lines(),
        [
            format!("attempt 1 of 2: {program} exited with status 22{status}; retrying in 0s"),
            format!("attempt 2 of 2: {program} exited with status 22{status}"),
            format!("gave up after 2 attempts in T: no retries left{last}"),
        ],
        "{what}: {}",
        r.stderr
    );
    assert_eq!(r.code, Some(22), "{what}");
}

/// Asserts the run gave up after attempt 1 on `code`, with status `exit`.
fn not_retried(r: &Run, code: u16, exit: i32, what: &str) {
    assert_eq!(r.code, Some(exit), "{what}: {}", r.stderr);
    assert_eq!(
        r.lines().last().unwrap(),
        &format!("gave up after 1 attempt in T: HTTP {code} is not retried"),
        "{what}: {}",
        r.stderr
    );
    assert_eq!(r.lines().len(), 2, "{what}: {}", r.stderr);
}

#[test]
fn a_response_quoted_in_a_body_of_known_length_is_not_read() {
    if !require(&[tools::CURL]) {
        return;
    }
    // `curl -i` prints the 503's body after its block: at its start, or after a first line.
    let server = HttpServer::start(|path, _, _| match path {
        "/starts" => Reply::new(503, format!("{FAKE_404}busy\n")),
        _ => Reply::new(503, format!("quoted:\n{FAKE_404}busy\n")),
    });
    for path in ["/starts", "/later"] {
        let url = format!("{}{path}", server.url());
        let r = run_owned(&["-n", "1"], &failing_curl("-i", &url));
        retried(&r, Some(503), path);
        // Printed whole by both attempts.
        assert_eq!(r.stdout.matches(&format!("{FAKE_404}busy\n")).count(), 2);
    }
}

/// A 503 whose chunked body is [`FAKE_404`] then `busy`.
fn chunked_503() -> Vec<u8> {
    let body = format!("{FAKE_404}busy\n");
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n\
         0\r\n\r\n",
        body.len()
    )
    .into_bytes()
}

#[test]
fn a_response_quoted_in_a_body_of_unknown_length_passes_for_one_with_curl_i() {
    if !require(&[tools::CURL]) {
        return;
    }
    // Left so (src/hints/blocks/mod.rs says it): a chunked body is read line by line, and a
    // status line and an empty line in it make a response. Keeping the body out of the
    // stream (`-D /dev/stderr -o FILE`) reads the real 503.
    let server = RawServer::start(vec![chunked_503()], Duration::ZERO);
    let r = run_owned(&["-n", "1"], &failing_curl("-i", server.url()));
    not_retried(&r, 404, 22, "-i");
    assert!(r.stdout.ends_with(&format!("\r\n\r\n{FAKE_404}busy\n")));
    let r = run_owned(
        &["-n", "1"],
        &failing_curl("-D /dev/stderr -o /dev/null", server.url()),
    );
    retried(&r, Some(503), "-o /dev/null");
    assert_eq!(server.connections(), 3);
}

#[test]
fn a_body_alone_on_stdout_can_pass_for_a_response() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = HttpServer::start(|_, _, _| Reply::new(503, format!("{FAKE_404}busy\n")));
    let url = format!("{}/", server.url());
    // `-f` prints no body for an error: only the block on stderr is read.
    let r = run(&["-n", "1"], &["curl", "-fsS", "-D", "/dev/stderr", &url]);
    retried(&r, Some(503), "-f");
    assert_eq!(r.stdout, "");
    // Left so: with --fail-with-body the body alone is on stdout, which holds no block of its
    // own to say where a body starts, and its quoted response is read as one; of the two
    // streams' blocks the later one counts, by when each reader got it (which of two arriving
    // together is later is the scheduler's choice). Replayed with the body 300 ms after the
    // headers, as a slow server sends it: the quoted 404 counts.
    let head = "HTTP/1.1 503 Service Unavailable\\r\\nContent-Length: 31\\r\\n\\r\\n";
    let script = format!(
        "printf '{head}' >&2; sleep 0.3; printf '{}busy\\n'; exit 22",
        FAKE_404.replace("\r\n", "\\r\\n")
    );
    let r = run(&["-n", "1"], &["sh", "-c", &script]);
    not_retried(&r, 404, 22, "--fail-with-body");
    assert_eq!(r.stdout, format!("{FAKE_404}busy\n"));
}

#[test]
fn malformed_and_huge_status_codes_are_no_status() {
    // Three digits and a class (1xx to 5xx) or nothing: each of these fails with no status.
    for (line, stderr) in [
        ("HTTP/1.1 99999 X", false),
        ("HTTP/1.1 4040 Not Found", true),
        ("HTTP/1.1 600 Odd", false),
        ("HTTP/1.1 000 Zero", true),
        ("HTTP/1.1 -404 Negative", false),
        ("HTTP/1.1 40 Short", true),
        ("HTTP/1.1 404\\033[31m Escape", false),
    ] {
        let r = run_owned(
            &["-n", "1"],
            &printf(&format!("{line}\\r\\n\\r\\n"), stderr),
        );
        retried(&r, None, line);
    }
    // A status line whose block never ends, or with no line end: no status either.
    for cut in [
        "HTTP/1.1 404 Not Found\\r\\nServer: x\\r\\n",
        "HTTP/1.1 404",
    ] {
        retried(&run_owned(&["-n", "1"], &printf(cut, false)), None, cut);
    }
    // An odd code after a real response leaves the real one standing.
    let after = "HTTP/1.1 503 Busy\\r\\n\\r\\nHTTP/1.1 600 Odd\\r\\n\\r\\n";
    retried(
        &run_owned(&["-n", "1"], &printf(after, false)),
        Some(503),
        after,
    );
}

#[test]
fn a_600_from_a_real_server_is_no_status() {
    if !require(&[tools::CURL]) {
        return;
    }
    // curl -f fails on it (22) and prints it; retry reads no status from it.
    let reply = b"HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n".to_vec();
    let server = RawServer::start(vec![reply], Duration::ZERO);
    let r = run(
        &["-n", "1"],
        &["curl", "-fsS", "-D", "/dev/stderr", server.url()],
    );
    retried(&r, None, "600");
    assert!(r.stderr.contains("HTTP/1.1 600 Odd\r\n"), "{}", r.stderr);
}

#[test]
fn an_enormous_header_block_still_ends_and_an_enormous_status_line_is_none() {
    if !require(&[tools::CURL]) {
        return;
    }
    // 20 KiB field lines (past the 8 KiB read) and a thousand fields: the 404 still counts.
    let mut block = b"HTTP/1.1 404 Not Found\r\n".to_vec();
    for i in 0..1000 {
        block.extend(format!("X-Field-{i}: {i}\r\n").bytes());
    }
    block.extend(b"X-Padding: ");
    block.extend(std::iter::repeat_n(b'a', 20 * 1024));
    block.extend(b"\r\nContent-Length: 0\r\n\r\n");
    // A status line of 20 KiB is too long to be read as one.
    let mut long_status = b"HTTP/1.1 404 ".to_vec();
    long_status.extend(std::iter::repeat_n(b'x', 20 * 1024));
    long_status.extend(b"\r\nContent-Length: 0\r\n\r\n");
    // (`-fs`: without `-S`, curl prints no `curl: (22) ...: 404` line, which would give the
    // status of a block whose status line is not read.)
    for (reply, http, flags) in [(block, Some(404), "-fsS"), (long_status, None, "-fs")] {
        let server = RawServer::start(vec![reply], Duration::ZERO);
        let command = ["curl", flags, "-D", "/dev/stderr", server.url()];
        let r = run(&["-n", "1"], &command);
        match http {
            Some(code) => not_retried(&r, code, 22, "20 KiB field"),
            None => retried(&r, None, "20 KiB status line"),
        }
    }
}

#[test]
fn a_server_that_hangs_after_its_headers() {
    if !require(&[tools::CURL]) {
        return;
    }
    // A 404's block ended, then the body never comes (curl without -f waits for it): the
    // attempt times out (124), and the 404 it read is not retried: the server answered, and
    // will answer the same. (`-D /dev/stderr`, which curl flushes at once: with `-i` into a
    // pipe the headers wait in curl's buffer, and a killed curl never prints them.)
    let head = b"HTTP/1.1 404 Not Found\r\nContent-Length: 1000\r\n\r\nabc".to_vec();
    let server = RawServer::start(vec![head], HOLD);
    let r = run(&["-n", "1", "-t", "300ms"], &command_for(&server));
    let first = r.lines()[0].clone();
    assert!(
        first.starts_with("attempt 1 of 2: curl timed out after ")
            && first.ends_with(" (status 124) (HTTP 404)"),
        "{}",
        r.stderr
    );
    not_retried(&r, 404, 124, "404, then a hang");
    assert_eq!(server.connections(), 1);
    // A block cut before its empty line: no status, retried as any timeout.
    let cut = b"HTTP/1.1 404 Not Found\r\nContent-Length: 1000\r\n".to_vec();
    let server = RawServer::start(vec![cut], HOLD);
    let r = run(&["-n", "1", "-t", "300ms"], &command_for(&server));
    assert_eq!(r.code, Some(124), "{}", r.stderr);
    assert_eq!(
        r.lines().last().unwrap(),
        "gave up after 2 attempts in T: no retries left",
        "{}",
        r.stderr
    );
    assert_eq!(server.connections(), 2);
}

/// `curl -sS -D /dev/stderr URL` for `server`.
fn command_for(server: &RawServer) -> [&str; 5] {
    ["curl", "-sS", "-D", "/dev/stderr", server.url()]
}

#[test]
fn curl_i_and_dump_header_to_stderr_together() {
    if !require(&[tools::CURL]) {
        return;
    }
    // Both streams carry every block: the same status is read from each.
    let server = HttpServer::start(|path, n, _| match (path, n) {
        ("/moved", _) => Reply::new(301, "").header("Location", "/gone"),
        ("/gone", _) => Reply::new(404, "no such thing\n"),
        (_, 0) => Reply::new(503, "busy\n"),
        _ => Reply::new(200, "fine\n"),
    });
    let moved = format!("{}/moved", server.url());
    let command = ["curl", "-fsS", "-i", "-L", "-D", "/dev/stderr", &moved];
    let r = run(&["-n", "1"], &command);
    not_retried(&r, 404, 22, "-i -D /dev/stderr");
    assert!(r.stdout.starts_with("HTTP/1.1 301 Moved Permanently\r\n"));
    assert!(r.stdout.contains("\r\n\r\nHTTP/1.1 404 Not Found\r\n"));
    let flaky = format!("{}/flaky", server.url());
    let command = ["curl", "-fsS", "-i", "-D", "/dev/stderr", &flaky];
    let r = run(&["-n", "1"], &command);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.ends_with("\r\n\r\nfine\n"), "{}", r.stdout);
    assert_eq!(
        r.lines()[0],
        "attempt 1 of 2: curl exited with status 22 (HTTP 503); retrying in 0s"
    );
}

/// `printf` of a response with status `code`, on stderr, and `exit 22`.
fn replayed(code: u16) -> Vec<String> {
    printf(
        &format!("HTTP/2 {code} \\r\\ncontent-length: 0\\r\\n\\r\\n"),
        true,
    )
}

#[test]
fn sets_with_spaces_and_classes_in_any_case() {
    for set in [" 404 , 5xx ", "404,5XX", " 5xx,404 "] {
        let args = ["-n", "1", "--http-retry-on", set];
        retried(&run_owned(&args, &replayed(404)), Some(404), set);
        retried(&run_owned(&args, &replayed(503)), Some(503), set);
        not_retried(&run_owned(&args, &replayed(429)), 429, 22, set);
    }
    let any = ["-n", "1", "--http-retry-on", " ANY "];
    retried(&run_owned(&any, &replayed(404)), Some(404), "ANY");
}

#[test]
fn sets_that_are_no_sets_are_refused_saying_why() {
    for (set, why) in [
        (",", "empty item in list of HTTP statuses"),
        (" , ", "empty item in list of HTTP statuses"),
        ("404,,503", "empty item in list of HTTP statuses"),
        (
            "0xx",
            "'0xx' is neither an HTTP status (100-599), a class such as 5xx",
        ),
        ("6xx", "'6xx' is neither an HTTP status"),
        ("5xxx", "'5xxx' is neither an HTTP status"),
        ("4xx-5xx", "'4xx' is neither an HTTP status"),
        ("503-500", "range '503-500' runs backwards"),
        (
            "-404",
            "'-404' is not an HTTP status (100-599), nor a range",
        ),
        ("404;503", "'404;503' is neither an HTTP status"),
        ("any,404", "'any' stands alone"),
        ("404, ANY", "'any' stands alone"),
    ] {
        let line = refused(
            release().args(["--http-hints", "--http-retry-on", set, "--", "true"]),
            &["--http-retry-on", why],
        );
        assert!(line.contains(&format!("'{set}'")), "{line}");
    }
}

#[test]
fn a_download_cut_after_its_200_is_retried() {
    if !require(&[tools::CURL]) {
        return;
    }
    // The 200 said nothing against the request: the transfer failed after it (curl 18), as a
    // refused connection fails before any answer, and is retried.
    let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc".to_vec();
    let whole = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfine\n".to_vec();
    let server = RawServer::start(vec![cut.clone(), whole], Duration::ZERO);
    let r = run(
        &["-n", "1"],
        &["curl", "-fsS", "-D", "/dev/stderr", server.url()],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.lines()[0],
        "attempt 1 of 2: curl exited with status 18 (HTTP 200); retrying in 0s",
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "abcfine\n");
    // So is one that stalls past curl's --max-time (28).
    let server = RawServer::start(vec![cut], HOLD);
    let command = [
        "curl",
        "-fsS",
        "-m",
        "0.3",
        "-D",
        "/dev/stderr",
        server.url(),
    ];
    let r = run(&["-n", "1"], &command);
    assert_eq!(r.code, Some(28), "{}", r.stderr);
    assert_eq!(
        r.lines().last().unwrap(),
        "gave up after 2 attempts in T: no retries left (last response: HTTP 200)",
        "{}",
        r.stderr
    );
}

#[test]
fn a_redirect_to_a_refused_connection_is_retried() {
    if !require(&[tools::CURL]) {
        return;
    }
    // The 301 was followed; its target refused the connection: no answer to judge.
    let refusing = refusing_url();
    let server =
        HttpServer::start(move |_, _, _| Reply::new(301, "").header("Location", &refusing));
    let url = format!("{}/moved", server.url());
    let command = ["curl", "-fsS", "-L", "-D", "/dev/stderr", &url];
    let r = run(&["-n", "1"], &command);
    assert_eq!(r.code, Some(7), "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [
            "attempt 1 of 2: curl exited with status 7 (HTTP 301); retrying in 0s",
            "attempt 2 of 2: curl exited with status 7 (HTTP 301)",
            "gave up after 2 attempts in T: no retries left (last response: HTTP 301)",
        ],
        "{}",
        r.stderr
    );
    assert_eq!(server.requests().len(), 2);
}
