//! The one local HTTP test server: tiny_http (<https://github.com/tiny-http/tiny-http>) on
//! 127.0.0.1 in a thread, answering each request with what a handler returns and recording
//! every request. It stops when dropped, or by itself after [`HANG_LIMIT`].
//!
//! Beside it, [`RawServer`] for what tiny_http will not send: canned bytes, written as they
//! are (a body cut short, a chunked body, a header line of any length), the connection then
//! held open as long as asked (a server that hangs after its headers).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::HANG_LIMIT;

/// A request the server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path and query, as sent (`/status`).
    pub path: String,
    /// The body, empty without one.
    pub body: Vec<u8>,
}

/// A response: status code, extra headers (names sent as written) and body.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    /// Status `status` with `body`.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// Adds header `name: value`; the name keeps its case (HTTP/2 sends lower case names).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// The running server; dropping it stops it.
pub struct HttpServer {
    url: String,
    seen: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Starts a server whose answer to a request is `handler(path, n, body)`, `n` counting the
    /// earlier requests to the same path (from 0). A request is recorded before it is answered,
    /// so a client that got its answer finds it in [`HttpServer::requests`].
    pub fn start<F>(handler: F) -> HttpServer
    where
        F: Fn(&str, usize, &[u8]) -> Reply + Send + 'static,
    {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = server.server_addr().to_ip().expect("an IP address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, flag) = (Arc::clone(&seen), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut per_path: HashMap<String, usize> = HashMap::new();
            while !flag.load(Ordering::SeqCst) && started.elapsed() < HANG_LIMIT {
                let Ok(Some(mut request)) = server.recv_timeout(Duration::from_millis(20)) else {
                    continue;
                };
                let mut body = Vec::new();
                if request.as_reader().read_to_end(&mut body).is_err() {
                    continue;
                }
                let path = request.url().to_string();
                let n = per_path.entry(path.clone()).or_default();
                let reply = handler(&path, *n, &body);
                *n += 1;
                log.lock().unwrap().push(Request {
                    method: request.method().to_string(),
                    path,
                    body,
                });
                let mut response =
                    tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
                for (name, value) in &reply.headers {
                    let header = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
                        .expect("a valid header");
                    response.add_header(header);
                }
                let _ = request.respond(response);
            }
        });
        HttpServer {
            url: format!("http://{addr}"),
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests answered so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for HttpServer {
    /// Stops the thread, also when a failed assertion unwinds.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `cmd` with the proxy variables removed, so that curl talks to the test server on 127.0.0.1
/// directly.
pub fn without_proxies(cmd: &mut assert_cmd::Command) -> &mut assert_cmd::Command {
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
    cmd
}

/// A server that answers its `n`-th connection (from 0) with the bytes `replies[n]` (the last
/// one for every later connection), whatever the request, then keeps that connection open for
/// `hold` (or until it is dropped) before closing it.
pub struct RawServer {
    url: String,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RawServer {
    /// Starts it on 127.0.0.1.
    pub fn start(replies: Vec<Vec<u8>>, hold: Duration) -> RawServer {
        assert!(!replies.is_empty(), "no reply to send");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, flag) = (Arc::clone(&accepted), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut open = Vec::new();
            while !flag.load(Ordering::SeqCst) && started.elapsed() < HANG_LIMIT {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let n = count.fetch_add(1, Ordering::SeqCst);
                let reply = replies[n.min(replies.len() - 1)].clone();
                let flag = Arc::clone(&flag);
                open.push(std::thread::spawn(move || {
                    stream.set_nonblocking(false).unwrap();
                    stream
                        .set_read_timeout(Some(Duration::from_secs(5)))
                        .unwrap();
                    // The request's head first: closing a socket with unread bytes resets it.
                    let mut head = Vec::new();
                    let mut byte = [0u8];
                    while !head.ends_with(b"\r\n\r\n")
                        && stream.read(&mut byte).is_ok_and(|r| r == 1)
                    {
                        head.push(byte[0]);
                    }
                    let _ = stream.write_all(&reply);
                    let held = Instant::now();
                    while held.elapsed() < hold && !flag.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }));
            }
            for connection in open {
                let _ = connection.join();
            }
        });
        RawServer {
            url: format!("http://{addr}"),
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The connections accepted so far.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for RawServer {
    /// Stops the thread and closes every connection, also when a failed assertion unwinds.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
