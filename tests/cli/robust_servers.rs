//! Robustness: servers and their hints, from hostile or odd output printed with `printf` as
//! curl would print it: hints too large for a float are past every limit, only a response's
//! header block holds hints (not a body, a request, a line before any status line, or a
//! bare-CR trick), and a hint that is neither seconds nor a date is reported once per attempt.
//! Each attempt fails with status 1; a hint that was read shows in the progress line.
//!
//! Not here: hints from a real HTTP server, Retry-After dates and `--max-hint` (`http_hints.rs`,
//! `http.rs`); the values of retry's own flags (`robust_input*.rs`); a budget's Redis server
//! (`robust_stores.rs`).

use crate::helpers::run::{retry_with, run};
use crate::helpers::{retry, timeless};

/// What `retry ARGS -b 0 -c 0 -n 1 -- sh -c "printf FORMAT; exit 1"` said: status, stderr.
fn printed(args: &[&str], format: &str) -> (Option<i32>, String) {
    let out = retry()
        .args(args)
        .args(["-b", "0", "-c", "0", "-n", "1", "--max-hint", "1m", "--"])
        .args(["sh", "-c", &format!("printf '{format}'; exit 1"), "sh"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts the run gave up after attempt 1, a hint named `source` asking for more than
/// `--max-hint`.
fn gave_up_on(run: &(Option<i32>, String), source: &str, what: &str) {
    let (code, stderr) = run;
    assert_eq!(*code, Some(1), "{what}: {stderr}");
    let want =
        format!("retry: gave up after 1 attempt in T: the server's {source} asks for a wait of ");
    assert!(
        timeless(stderr).contains(&want) && stderr.contains("longer than --max-hint (1m)"),
        "{what}: {stderr}"
    );
}

/// Asserts the run retried at once, no hint read (the status of a header block that ended
/// may show, as `(HTTP 200)`).
fn read_no_hint(run: &(Option<i32>, String), what: &str) {
    let (code, stderr) = run;
    assert_eq!(*code, Some(1), "{what}: {stderr}");
    let first = stderr
        .lines()
        .find_map(|l| l.strip_prefix("retry: attempt 1 of 2: sh exited with status 1"))
        .unwrap_or_else(|| panic!("{what}: {stderr}"));
    // ` (HTTP 200)`, or nothing.
    let rest = match first
        .strip_prefix(" (HTTP ")
        .and_then(|s| s.get(..4).zip(s.get(4..)))
    {
        Some((code, rest))
            if code[..3].bytes().all(|b| b.is_ascii_digit()) && code.ends_with(')') =>
        {
            rest
        }
        _ => first,
    };
    assert_eq!(rest, "; retrying in 0s", "{what}: {stderr}");
    assert!(
        stderr.contains("gave up after 2 attempts in "),
        "{what}: {stderr}"
    );
}

#[test]
fn hints_too_large_for_a_float_are_past_every_limit() {
    for digits in [300, 400, 5000] {
        let n = "9".repeat(digits);
        let block =
            |field: &str| format!("HTTP/1.1 429 Too Many Requests\\r\\n{field}\\r\\n\\r\\n");
        let hinted = ["--http-hints"];
        for (field, source) in [
            (format!("Retry-After: {n}"), "Retry-After"),
            (format!("x-amz-retry-after: {n}"), "x-amz-retry-after"),
            (format!("RateLimit: \"q\";r=0;t={n}"), "RateLimit"),
            (
                format!("RateLimit-Remaining: 0\\r\\nRateLimit-Reset: {n}"),
                "RateLimit",
            ),
            (
                format!("X-RateLimit-Remaining: 0\\r\\nX-RateLimit-Reset: {n}"),
                "X-RateLimit-Reset",
            ),
        ] {
            gave_up_on(&printed(&hinted, &block(&field)), source, &field[..20]);
        }
        let delay = ["--delay-from-output", "^wait ([0-9.]+)$"];
        let run = printed(&delay, &format!("wait {n}.5\\n"));
        gave_up_on(&run, "--delay-from-output", "a capture");
    }
    // With no --max-hint, the deadline is the limit.
    let n = "9".repeat(400);
    let out = retry()
        .args([
            "--http-hints",
            "--max-hint",
            "0",
            "-d",
            "30s",
            "-b",
            "0",
            "--",
        ])
        .args(["sh", "-c"])
        .arg(format!(
            "printf 'HTTP/2 503\\r\\nretry-after: {n}\\r\\n\\r\\n'; exit 1"
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        timeless(&stderr).contains("gave up after 1 attempt in T: the next delay (")
            && stderr.contains("would end at or past the deadline"),
        "{stderr}"
    );
}

/// A 200 response with `body` (a printf format), its Content-Length counted.
fn with_body(body: &str) -> String {
    let len = body.replace("\\r", "\r").replace("\\n", "\n").len();
    format!("HTTP/1.1 200 OK\\r\\nContent-Length: {len}\\r\\n\\r\\n{body}")
}

#[test]
fn only_a_header_block_holds_hints() {
    let hinted = ["--http-hints"];
    let known = with_body("x-amz-retry-after: 9\\n");
    let quoted = with_body("quoted:\\nHTTP/1.1 429 Slow down\\r\\nRetry-After: 3000\\r\\n\\r\\n");
    let chunked = "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nretry-after: 3000\\n";
    for (output, what) in [
        // No status line before them: not a response.
        ("Retry-After: 3000\\r\\n", "no status line"),
        // The body, after the blank line; its length known, or not (chunked, compressed).
        (known.as_str(), "a body of known length"),
        (chunked, "a body of unknown length"),
        // A response quoted inside a body of known length.
        (quoted.as_str(), "a response inside a body"),
        // curl -v: a request header it sent, not one it received.
        (
            "> GET / HTTP/1.1\\r\\n> Retry-After: 3000\\r\\n>\\r\\n< HTTP/1.1 500 Oops\\r\\n< \\r\\n",
            "a request header",
        ),
        // A bare CR inside a line does not end it.
        (
            "HTTP/1.1 500 Oops\\r\\nX-Note: a\\rRetry-After: 3000\\r\\n\\r\\n",
            "a bare CR",
        ),
        (
            "HTTP/1.1 500 Oops\\rRetry-After: 3000\\r\\n\\r\\n",
            "a bare CR in a status line",
        ),
        // Not a status line: a version or code of the wrong form.
        (
            "HTTP/1.1 5000 Oops\\r\\nRetry-After: 3000\\r\\n\\r\\n",
            "a four-digit status",
        ),
        ("HTTPS/1.1 503\\r\\nRetry-After: 3000\\r\\n\\r\\n", "HTTPS/"),
    ] {
        read_no_hint(&printed(&hinted, output), what);
    }
}

#[test]
fn header_blocks_are_read_however_curl_prints_them() {
    let hinted = ["--http-hints"];
    for (output, what) in [
        // -D - with -o: blocks one after another; a body of known length then the next block.
        (
            "HTTP/1.1 301 Moved\\r\\nContent-Length: 5\\r\\n\\r\\n\
             HTTP/1.1 429 Slow down\\r\\nRetry-After: 3000\\r\\n\\r\\n",
            "a block right after a block",
        ),
        (
            "HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok\
             HTTP/1.1 429 Slow down\\r\\nRetry-After: 3000\\r\\n\\r\\n",
            "a block right after a body",
        ),
        // An interim response, then the real one.
        (
            "HTTP/1.1 100 Continue\\r\\n\\r\\nHTTP/2 503\\nretry-after: 3000\\n\\n",
            "after a 100 Continue",
        ),
        // curl -v on stderr, with an info line inside the block.
        (
            "< HTTP/1.1 429 Slow down\\r\\n* note\\r\\n< Retry-After: 3000\\r\\n< \\r\\n",
            "curl -v",
        ),
    ] {
        gave_up_on(&printed(&hinted, output), "Retry-After", what);
    }
    // Many responses: the hints of every one count, the longest wins.
    let mut many = String::new();
    for i in 0..1000 {
        many.push_str(&format!(
            "HTTP/1.1 503 Busy\\r\\nRetry-After: {}\\r\\nContent-Length: 3\\r\\n\\r\\nab\\n",
            i % 7
        ));
    }
    many.push_str("HTTP/1.1 503 Busy\\r\\nx-amz-retry-after: 3600001\\r\\n\\r\\n");
    gave_up_on(
        &printed(&hinted, &many),
        "x-amz-retry-after",
        "many responses",
    );
}

#[test]
fn a_hint_that_is_neither_seconds_nor_a_date_is_reported_once_per_attempt() {
    let mut cmd = retry_with(&["--delay-from-output", "(?i)^retry-after: *(.+)$"]);
    cmd.args(["-b", "0", "-n", "2", "--", "sh", "-c"])
        .arg("echo 'retry-after: Wed, 21 Oct 2015 07:28 GMT'; exit 1");
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(1));
    let hints: Vec<&str> = r
        .retry_lines()
        .into_iter()
        .filter(|l| l.contains("--delay-from-output"))
        .collect();
    // Attempts 1 and 2 are followed by a delay; attempt 3 is not.
    assert_eq!(hints.len(), 2, "{}", r.stderr);
    assert!(
        hints[0].contains(
            "'Wed, 21 Oct 2015 07:28 GMT', which is neither a number of seconds nor an HTTP-date"
        ),
        "{}",
        r.stderr
    );
}
