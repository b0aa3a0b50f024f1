//! `--http-hints` and `--http-retry-on` through the release binary with what curl and GNU wget
//! print when they are not asked for the headers `-D` gives: `curl -fsS -v -o /dev/null` (curl
//! stops a 4xx or 5xx before the block's `<`, then says `curl: (22) The requested URL returned
//! error: 404`), `curl -fsS` alone (that line is all), and `wget -S` (the blocks indented by two
//! spaces, no empty line after them; wget exits 8 for an error status). A 404 is given up at
//! once with the client's own status, a 503 is retried after its `Retry-After`. The shared run
//! and server are `http_status.rs`'s.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::http_status::{Run, paths, run, server, succeeded_second_time};
use crate::helpers::http::{HttpServer, Reply};
use crate::helpers::human_secs;
use crate::tools::{self, require};

/// `curl -fsS -v -o /dev/null URL`, as the issue has it.
fn curl_fv(url: &str) -> Vec<&str> {
    vec!["curl", "-fsS", "-v", "-o", "/dev/null", url]
}

/// `wget --no-config -S -O /dev/null [EXTRA] URL` (no `~/.wgetrc` of the machine's).
fn wget_s<'a>(extra: &[&'a str], url: &'a str) -> Vec<&'a str> {
    let mut command = vec!["wget", "--no-config", "-S", "-O", "/dev/null"];
    command.extend(extra);
    command.push(url);
    command
}

/// Asserts `r` gave up after attempt 1 of 3, whose `program` exited with `status` after an
/// HTTP 404.
fn gave_up_on_404(r: &Run, program: &str, status: i32) {
    assert_eq!(r.code, Some(status), "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [
            format!("attempt 1 of 3: {program} exited with status {status} (HTTP 404)"),
            "gave up after 1 attempt in T: HTTP 404 is not retried".to_string(),
        ],
        "{}",
        r.stderr
    );
}

/// A server whose `/busy` answers 503 with `Retry-After: 1` first, then 200; it notes when
/// each request arrived.
fn busy_server() -> (HttpServer, Arc<Mutex<Vec<Instant>>>) {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&arrivals);
    let server = HttpServer::start(move |_, n, _| {
        log.lock().unwrap().push(Instant::now());
        match n {
            0 => Reply::new(503, "busy\n").header("Retry-After", "1"),
            _ => Reply::new(200, "fine\n"),
        }
    });
    (server, arrivals)
}

/// Asserts `r` waited for the `Retry-After: 1` of its first answer, an HTTP 503 after which
/// `program` exited with `status`, then succeeded on attempt 2.
fn waited_for_the_503_s_hint(r: &Run, arrivals: &Mutex<Vec<Instant>>, program: &str, status: i32) {
    let first = format!("{program} exited with status {status} (HTTP 503)");
    succeeded_second_time(r, &first, 3, " (Retry-After)");
    let delay = r.lines()[0]
        .split_once("retrying in ")
        .unwrap()
        .1
        .trim_end_matches(" (Retry-After)")
        .to_string();
    assert!((0.5..=1.0).contains(&human_secs(&delay)), "{}", r.stderr);
    let a = arrivals.lock().unwrap();
    assert_eq!(a.len(), 2, "{}", r.stderr);
    assert!(
        a[1] - a[0] >= Duration::from_millis(900),
        "{:?}",
        a[1] - a[0]
    );
}

#[test]
fn curl_fv_a_404_is_given_up_at_once_with_22() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/gone", server.url());
    let r = run(&["-n", "2"], &curl_fv(&url));
    gave_up_on_404(&r, "curl", 22);
    assert!(
        r.stderr.contains("< HTTP/1.1 404 Not Found\r\n"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("\n< \r\n"),
        "curl ended the block: {}",
        r.stderr
    );
    assert_eq!(paths(&server), ["/gone"]);
    // After a redirect -L follows: the 404's, not the 301's.
    let url = format!("{}/moved-gone", server.url());
    let mut command = curl_fv(&url);
    command.insert(1, "-L");
    gave_up_on_404(&run(&["-n", "2"], &command), "curl", 22);
}

#[test]
fn curl_fv_a_503_is_retried_after_its_retry_after() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, arrivals) = busy_server();
    let url = format!("{}/busy", server.url());
    let r = run(&["-n", "2"], &curl_fv(&url));
    waited_for_the_503_s_hint(&r, &arrivals, "curl", 22);
}

#[test]
fn curl_fss_alone_a_404_is_given_up_from_curl_s_last_line() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/gone", server.url());
    let r = run(&["-n", "2"], &["curl", "-fsS", &url]);
    gave_up_on_404(&r, "curl", 22);
    assert_eq!(paths(&server), ["/gone"]);
    // Another line after curl's: not its last word, retried as before.
    let script = format!("curl -fsS '{url}'; s=$?; echo done >&2; exit $s");
    let r = run(&["-n", "1"], &["sh", "-c", &script]);
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(r.lines().len(), 3, "{}", r.stderr);
    assert!(r.lines()[2].ends_with(": no retries left"), "{}", r.stderr);
}

#[test]
fn wget_s_a_404_is_given_up_at_once_with_8() {
    if !require(&[tools::WGET]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/gone", server.url());
    let r = run(&["-n", "2"], &wget_s(&[], &url));
    gave_up_on_404(&r, "wget", 8);
    assert!(
        r.stderr.contains("\n  HTTP/1.1 404 Not Found\n"),
        "{}",
        r.stderr
    );
    assert_eq!(paths(&server), ["/gone"]);
    // After a redirect (301 then 404), and with -q: the blocks alone, the last ended by the
    // stream's end.
    let url = format!("{}/moved-gone", server.url());
    for extra in [&[][..], &["-q"]] {
        gave_up_on_404(&run(&["-n", "2"], &wget_s(extra, &url)), "wget", 8);
    }
}

#[test]
fn wget_s_a_503_is_retried_after_its_retry_after() {
    if !require(&[tools::WGET]) {
        return;
    }
    let (server, arrivals) = busy_server();
    let url = format!("{}/busy", server.url());
    let r = run(&["-n", "2"], &wget_s(&[], &url));
    waited_for_the_503_s_hint(&r, &arrivals, "wget", 8);
    assert!(r.stderr.contains("\n  Retry-After: 1\n"), "{}", r.stderr);
}
