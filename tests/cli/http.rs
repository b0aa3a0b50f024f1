//! Retrying a real HTTP client (`curl -fsS`) against a local server that fails, then recovers.
//!
//! The server is a plain `TcpListener` on 127.0.0.1 in a thread: one HTTP/1.1 response per
//! connection (`Content-Length`, `Connection: close`), chosen by the request's number. It stops
//! by itself after a bounded number of connections or a time limit, so it never hangs a test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::helpers::{HANG_LIMIT, retry};

/// The body of the one successful response: distinctive, so stdout can be matched exactly.
const BODY: &str = "retry-http-test: ok 7f3a9c\n";

/// Connections the server accepts at most before it stops by itself.
const MAX_REQUESTS: usize = 16;

/// One canned response: status code, reason phrase, body.
type Reply = (u16, &'static str, &'static str);

const UNAVAILABLE: Reply = (503, "Service Unavailable", "unavailable\n");
const TOO_MANY: Reply = (429, "Too Many Requests", "slow down\n");
const OK: Reply = (200, "OK", BODY);

/// A local HTTP server answering request `i` (from 0) with `replies[i]`, or with the last
/// reply once they run out.
struct Server {
    url: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<String>>>,
}

impl Server {
    fn start(replies: &'static [Reply]) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}/status", listener.local_addr().unwrap());
        // Non-blocking accept, polled, so the thread can notice `stop` and its time limit.
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || serve(&listener, replies, &flag));
        Server {
            url,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the server and returns the request lines it answered, in order.
    fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("server thread panicked")
    }
}

impl Drop for Server {
    /// A failed assertion still stops the thread.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The accept loop: at most [`MAX_REQUESTS`] connections, within [`HANG_LIMIT`], until `stop`.
fn serve(listener: &TcpListener, replies: &[Reply], stop: &AtomicBool) -> Vec<String> {
    let start = Instant::now();
    let mut seen = Vec::new();
    while seen.len() < MAX_REQUESTS && !stop.load(Ordering::SeqCst) && start.elapsed() < HANG_LIMIT
    {
        match listener.accept() {
            Ok((stream, _)) => {
                let reply = replies[seen.len().min(replies.len() - 1)];
                if let Some(request_line) = answer(stream, reply) {
                    seen.push(request_line);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("accept failed: {e}"),
        }
    }
    seen
}

/// Reads one request head (up to the blank line) and writes `reply`; returns the request line,
/// or `None` when the client sent no complete head.
fn answer(mut stream: TcpStream, (code, reason, body): Reply) -> Option<String> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 64 * 1024 {
            return None;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let request_line = head.lines().next().unwrap_or_default().to_string();
    let response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).ok()?;
    stream.flush().ok()?;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    Some(request_line)
}

/// `retry ARGS -- curl -fsS URL`, with proxies out of the way so curl talks to 127.0.0.1, and
/// no `RETRY_<FLAG>` settings from the caller's environment. (assert_cmd gives the command an
/// empty, closed stdin.)
fn retry_curl(args: &[&str], url: &str) -> assert_cmd::assert::Assert {
    let mut cmd = retry();
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("RETRY_") {
            cmd.env_remove(var);
        }
    }
    for var in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(args).args(["--", "curl", "-fsS", url]).assert()
}

#[test]
fn retries_503_and_429_until_200() {
    static REPLIES: [Reply; 3] = [UNAVAILABLE, TOO_MANY, OK];
    let server = Server::start(&REPLIES);
    let url = server.url.clone();
    let assert = retry_curl(&["-b", "10ms", "-c", "50ms"], &url);
    let requests = server.finish();

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
        vec!["GET /status HTTP/1.1"; 3],
        "the server must see exactly 3 requests; stderr:\n{stderr}"
    );
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("retry: "))
        .collect();
    assert_eq!(progress.len(), 2, "two progress lines expected:\n{stderr}");
    assert!(
        progress[0].starts_with("retry: attempt 1 of 6: curl exited with status 22; retrying in "),
        "{stderr}"
    );
    assert!(
        progress[1].starts_with("retry: attempt 2 of 6: curl exited with status 22; retrying in "),
        "{stderr}"
    );
    // curl's own messages for the two HTTP errors reach stderr untouched.
    assert!(stderr.contains("503"), "{stderr}");
    assert!(stderr.contains("429"), "{stderr}");
}

#[test]
fn gives_up_with_curls_status_after_the_last_retry() {
    static REPLIES: [Reply; 1] = [UNAVAILABLE];
    let server = Server::start(&REPLIES);
    let url = server.url.clone();
    let assert = retry_curl(&["-n", "2", "-b", "10ms"], &url);
    let requests = server.finish();

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
        stderr.contains("retry: giving up after 3 attempts: no retries left"),
        "{stderr}"
    );
}
