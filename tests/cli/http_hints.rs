//! `--http-hints` against a real local HTTP server (the shared tiny_http server) and a real
//! curl: every header form, as `curl -sS -D -`, `curl -i` and `curl -v` print it, the wait
//! measured between the requests the server saw; `--max-hint`, the deadline, and HTTP-dates
//! in `--delay-from-output`. Hints are 1 to 3 s and checks are wide ("at least 1.5 s").

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::helpers::http::{HttpServer, Reply, without_proxies};
use crate::helpers::{human_secs, retry, timeless};
use crate::tools::{self, require};

/// A server whose first answer to any request is `first` and every later one a 200 with body
/// `fine`; it notes when each request arrived.
struct Limited {
    server: HttpServer,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Limited {
    fn start(first: Reply) -> Limited {
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&arrivals);
        let server = HttpServer::start(move |_, n, _| {
            log.lock().unwrap().push(Instant::now());
            if n == 0 {
                first.clone()
            } else {
                Reply::new(200, "fine\n")
            }
        });
        Limited { server, arrivals }
    }

    fn url(&self) -> String {
        format!("{}/limited", self.server.url())
    }

    /// The time between the first two requests.
    fn gap(&self) -> Duration {
        let a = self.arrivals.lock().unwrap();
        assert!(a.len() >= 2, "the server saw {} request(s)", a.len());
        a[1] - a[0]
    }

    fn requests(&self) -> usize {
        self.arrivals.lock().unwrap().len()
    }
}

/// What a run said.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    /// retry's own lines.
    fn progress(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("retry: "))
            .collect()
    }

    /// The delay of the first "retrying in 1.5s" line in seconds, and what follows it.
    fn first_delay(&self) -> (f64, String) {
        let line = self
            .progress()
            .into_iter()
            .find(|l| l.contains("retrying in "))
            .unwrap_or_else(|| panic!("no retrying line:\n{}", self.stderr));
        let rest = line.split_once("retrying in ").unwrap().1;
        let (shown, after) = rest.split_at(rest.find(" (").unwrap_or(rest.len()));
        (human_secs(shown), after.to_string())
    }
}

/// `retry ARGS -- CURL...` with the proxies out of the way, so curl talks to 127.0.0.1.
fn run(args: &[&str], curl: &[&str]) -> Run {
    let mut cmd = retry();
    without_proxies(&mut cmd);
    cmd.args(args).arg("--").args(curl);
    let started = Instant::now();
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

/// Backoff that would wait no time at all: any wait comes from the hint.
const NO_BACKOFF: [&str; 6] = ["-b", "0", "-c", "0", "-n", "2"];

/// `retry --http-hints` (no backoff) around `curl -fsS -D - -o /dev/null URL`.
fn hinted(first: Reply) -> (Limited, Run) {
    let server = Limited::start(first);
    let url = server.url();
    let mut args = vec!["--http-hints"];
    args.extend(NO_BACKOFF);
    let r = run(&args, &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url]);
    (server, r)
}

/// Asserts the run succeeded on its second request, after a wait named `source` of at least
/// `at_least` seconds (and no more than `at_most` as printed, rounded to the tenth).
fn waited_for(server: &Limited, r: &Run, source: &str, at_least: f64, at_most: f64) {
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(server.requests(), 2, "{}", r.stderr);
    let (delay, after) = r.first_delay();
    assert_eq!(after, format!(" ({source})"), "{}", r.stderr);
    assert!(
        delay >= at_least - 0.05 && delay <= at_most,
        "delay {delay}:\n{}",
        r.stderr
    );
    assert!(
        server.gap() >= Duration::from_secs_f64(at_least),
        "the server saw its second request {:?} after the first",
        server.gap()
    );
}

/// An HTTP-date (IMF-fixdate) `secs` from now.
fn date_in(secs: u64) -> String {
    httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(secs))
}

#[test]
fn retry_after_in_seconds() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, r) = hinted(Reply::new(503, "busy\n").header("Retry-After", "2"));
    waited_for(&server, &r, "Retry-After", 1.5, 2.0);
    // The headers still reach stdout, as curl printed them.
    assert!(r.stdout.contains("Retry-After: 2"), "{}", r.stdout);
}

#[test]
fn lower_case_names_as_http2_sends_them() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, r) = hinted(Reply::new(429, "").header("retry-after", "2"));
    waited_for(&server, &r, "Retry-After", 1.5, 2.0);
}

#[test]
fn retry_after_as_a_date_a_few_seconds_ahead() {
    if !require(&[tools::CURL]) {
        return;
    }
    // A date has whole seconds: "3 s from now" is between 2 and 3 s away.
    let (server, r) = hinted(Reply::new(503, "").header("Retry-After", &date_in(3)));
    waited_for(&server, &r, "Retry-After", 1.5, 3.0);
}

#[test]
fn retry_after_as_a_date_in_the_past_adds_no_wait() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, r) =
        hinted(Reply::new(503, "").header("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(server.requests(), 2);
    let (delay, after) = r.first_delay();
    assert_eq!((delay, after.as_str()), (0.0, ""), "{}", r.stderr);
}

#[test]
fn ratelimit_with_nothing_remaining() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, r) = hinted(
        Reply::new(429, "")
            .header("RateLimit-Policy", "\"default\";q=100;w=60")
            .header("RateLimit", "\"default\";r=0;t=2"),
    );
    waited_for(&server, &r, "RateLimit", 1.5, 2.0);
}

#[test]
fn x_ratelimit_reset_is_an_epoch_when_remaining_is_zero() {
    if !require(&[tools::CURL]) {
        return;
    }
    let reset = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3;
    let (server, r) = hinted(
        Reply::new(403, "")
            .header("X-RateLimit-Remaining", "0")
            .header("X-RateLimit-Reset", &reset.to_string()),
    );
    // Whole seconds again: between 2 and 3 s away. Never the epoch value itself.
    waited_for(&server, &r, "X-RateLimit-Reset", 1.5, 3.0);

    // With requests remaining, the reset time is no reason to wait.
    let (server, r) = hinted(
        Reply::new(500, "")
            .header("X-RateLimit-Remaining", "4")
            .header("X-RateLimit-Reset", &reset.to_string()),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(server.requests(), 2);
    assert_eq!(r.first_delay(), (0.0, String::new()), "{}", r.stderr);
}

#[test]
fn amz_retry_after_is_milliseconds() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, r) = hinted(Reply::new(503, "").header("x-amz-retry-after", "1800"));
    waited_for(&server, &r, "x-amz-retry-after", 1.5, 1.8);
}

#[test]
fn the_longest_hint_wins() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, r) = hinted(
        Reply::new(503, "")
            .header("Retry-After", "1")
            .header("x-amz-retry-after", "2000"),
    );
    waited_for(&server, &r, "x-amz-retry-after", 1.5, 2.0);
}

#[test]
fn curl_i_and_curl_v_work_as_well_as_dump_header() {
    if !require(&[tools::CURL]) {
        return;
    }
    // -i: headers and body on stdout; -v: headers on stderr after "< ".
    for curl in [["-sS", "-i"], ["-sS", "-v"]] {
        let server = Limited::start(Reply::new(503, "busy\n").header("Retry-After", "2"));
        let url = server.url();
        let mut args = vec!["--http-hints", "--retry-if-output", "^busy$"];
        args.extend(NO_BACKOFF);
        let command = ["curl", curl[0], curl[1], url.as_str()];
        let r = run(&args, &command);
        waited_for(&server, &r, "Retry-After", 1.5, 2.0);
        assert!(r.stdout.contains("fine"), "{curl:?}: {}", r.stdout);
        if curl[1] == "-v" {
            assert!(r.stderr.contains("< Retry-After: 2"), "{}", r.stderr);
        }
    }
}

#[test]
fn without_http_hints_headers_are_not_read() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = Limited::start(Reply::new(503, "").header("Retry-After", "30"));
    let url = server.url();
    let r = run(
        &NO_BACKOFF,
        &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(20), "{:?}", r.took);
    assert_eq!(r.first_delay(), (0.0, String::new()));
}

#[test]
fn a_hint_longer_than_max_hint_gives_up_at_once_naming_it() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = Limited::start(Reply::new(503, "").header("Retry-After", "7200"));
    let url = server.url();
    let mut args = vec!["--http-hints", "--max-hint", "1m"];
    args.extend(NO_BACKOFF);
    let r = run(&args, &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url]);
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(server.requests(), 1);
    assert!(r.took < Duration::from_secs(30), "{:?}", r.took);
    // The wait counts from when the header arrived: a little under 7200 s by now, which
    // reads as 2h.
    let line = r
        .progress()
        .into_iter()
        .find(|l| l.starts_with("retry: gave up"))
        .unwrap()
        .to_string();
    let prefix =
        "retry: gave up after 1 attempt in T: the server's Retry-After asks for a wait of ";
    let line = timeless(&line);
    let rest = line
        .trim_end()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{line}"));
    let (shown, rest) = rest.split_once(", ").unwrap();
    assert!((7190.0..=7200.0).contains(&human_secs(shown)), "{line}");
    // The closing line names the last response's status (--http-retry-on).
    assert_eq!(
        rest,
        "longer than --max-hint (1m) (last response: HTTP 503)"
    );
    // The default is an hour, from RETRY_MAX_HINT too.
    let server = Limited::start(Reply::new(503, "").header("Retry-After", "3601"));
    let url = server.url();
    let mut cmd = retry();
    cmd.env("RETRY_HTTP_HINTS", "1").args(NO_BACKOFF).args([
        "--",
        "curl",
        "-fsS",
        "-D",
        "-",
        "-o",
        "/dev/null",
        &url,
    ]);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(22), "{stderr}");
    // A little over the hour it asked for, counted from when the header arrived: told
    // apart from the hour.
    assert!(
        stderr.contains("asks for a wait of 3600.9")
            || stderr.contains("asks for a wait of 3601.000s"),
        "{stderr}"
    );
    assert!(
        stderr.contains("longer than --max-hint (3600.000s)"),
        "{stderr}"
    );
    assert_eq!(server.requests(), 1);
}

#[test]
fn a_hint_past_the_deadline_gives_up_at_once() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = Limited::start(Reply::new(429, "").header("Retry-After", "600"));
    let url = server.url();
    let mut args = vec!["--http-hints", "-d", "20s"];
    args.extend(NO_BACKOFF);
    let r = run(&args, &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url]);
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(server.requests(), 1);
    assert!(r.took < Duration::from_secs(15), "{:?}", r.took);
    // About 600 s: counted from when the header arrived.
    let line = timeless(r.progress().into_iter().last().unwrap());
    let rest = line
        .trim_end()
        .strip_prefix("retry: gave up after 1 attempt in T: the next delay (")
        .unwrap_or_else(|| panic!("{line}"));
    let (shown, rest) = rest.split_once(") ").unwrap();
    assert!((590.0..=600.0).contains(&human_secs(shown)), "{line}");
    assert_eq!(
        rest,
        "would end at or past the deadline (last response: HTTP 429)"
    );
}

#[test]
fn delay_from_output_takes_an_http_date_and_names_itself() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = Limited::start(Reply::new(503, "").header("Retry-After", &date_in(3)));
    let url = server.url();
    let mut args = vec!["--delay-from-output", "(?i)^retry-after: *(.+)$"];
    args.extend(NO_BACKOFF);
    let r = run(&args, &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url]);
    waited_for(&server, &r, "--delay-from-output", 1.5, 3.0);
}

#[test]
fn the_json_wait_event_names_the_hint() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = Limited::start(Reply::new(503, "").header("Retry-After", "1"));
    let url = server.url();
    let mut args = vec!["--http-hints", "--log-format", "json"];
    args.extend(NO_BACKOFF);
    let r = run(&args, &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let events: Vec<serde_json::Value> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let wait = events.iter().find(|e| e["event"] == "wait").unwrap();
    assert_eq!(wait["hint"], "Retry-After", "{wait}");
    let delay = wait["delay"].as_f64().unwrap();
    assert!((0.5..=1.0).contains(&delay), "{wait}");
}

/// Lines that would ask for waits of an hour and more, or make retry give up, if they were
/// read as headers: a body that quotes headers, and a response printed inside it.
const HEADERS_IN_A_BODY: &str = "x-amz-retry-after: 99999999\nretry-after: 3000\n\
    RateLimit: \"q\";r=0;t=4000\nHTTP/1.1 429 Too Many Requests\r\nRetry-After: 5000\r\n\r\n";

/// A 503 with the real hint (1 s) and a body that quotes headers, ending in `busy`.
fn busy_quoting_headers() -> Reply {
    Reply::new(503, format!("{HEADERS_IN_A_BODY}busy\n")).header("Retry-After", "1")
}

#[test]
fn body_lines_are_not_headers_with_curl_i_or_dump_header_to_stdout() {
    if !require(&[tools::CURL]) {
        return;
    }
    // -i, and -D - without -o, print the body after the header block on the same stream.
    for curl in [&["-sS", "-i"][..], &["-sS", "-D", "-"][..]] {
        let server = Limited::start(busy_quoting_headers());
        let url = server.url();
        let mut args = vec!["--http-hints", "--retry-if-output", "^busy$"];
        args.extend(NO_BACKOFF);
        let mut command = vec!["curl"];
        command.extend(curl);
        command.push(&url);
        let r = run(&args, &command);
        // Only the real header counts: a wait of about 1 s, named.
        waited_for(&server, &r, "Retry-After", 0.5, 1.0);
        assert!(r.stdout.contains("retry-after: 3000"), "{}", r.stdout);
    }
}

#[test]
fn a_header_block_after_a_redirect_or_another_body_is_read() {
    if !require(&[tools::CURL]) {
        return;
    }
    // One curl, two URLs: a 200 whose body quotes headers, then a 503 with the real hint; and a
    // redirect (curl -L prints no body for it) to that 503. Both are read, the bodies are not.
    for (flags, first) in [(&["-i"][..], "/quotes"), (&["-i", "-L"][..], "/moved")] {
        let server = HttpServer::start(|path, n, _| match (path, n) {
            ("/quotes", _) => Reply::new(200, HEADERS_IN_A_BODY),
            ("/moved", _) => Reply::new(302, "Retry-After: 4000\n").header("Location", "/limited"),
            ("/limited", 0) => busy_quoting_headers(),
            _ => Reply::new(200, "fine\n"),
        });
        let mut command = vec!["curl".to_string(), "-sS".to_string()];
        command.extend(flags.iter().map(|f| f.to_string()));
        command.push(format!("{}{first}", server.url()));
        if first == "/quotes" {
            command.push(format!("{}/limited", server.url()));
        }
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        let mut args = vec!["--http-hints", "--retry-if-output", "^busy$"];
        args.extend(NO_BACKOFF);
        let r = run(&args, &command);
        assert_eq!(r.code, Some(0), "{command:?}: {}", r.stderr);
        let (delay, after) = r.first_delay();
        assert_eq!(after, " (Retry-After)", "{command:?}: {}", r.stderr);
        assert!((0.5..=1.0).contains(&delay), "{command:?}: {}", r.stderr);
    }
}

#[test]
fn an_enormous_retry_after_is_past_every_limit() {
    if !require(&[tools::CURL]) {
        return;
    }
    // 400 digits: too large for a float, yet a wait longer than any --max-hint.
    let digits = "9".repeat(400);
    let server = Limited::start(Reply::new(503, "").header("Retry-After", &digits));
    let url = server.url();
    let mut args = vec!["--http-hints"];
    args.extend(NO_BACKOFF);
    let r = run(&args, &["curl", "-fsS", "-D", "-", "-o", "/dev/null", &url]);
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(server.requests(), 1, "{}", r.stderr);
    assert!(
        timeless(&r.stderr).contains(
            "retry: gave up after 1 attempt in T: the server's Retry-After asks for a wait of "
        ) && r.stderr.contains("longer than --max-hint (1h)"),
        "{}",
        r.stderr
    );
}
