//! The install tests' HTTP server on 127.0.0.1: std's `TcpListener`, a thread per connection,
//! HTTP/1.1 with `Connection: close`. Not the cli tests' tiny_http server
//! (`tests/cli/helpers/http.rs`), because these tests need what a well-behaved server never
//! sends: a body cut short of its `Content-Length`, a body trickled a byte at a time, a redirect
//! loop. Every request's path is recorded before it is answered; the server stops when dropped,
//! and a trickle stops by itself after [`crate::HANG_LIMIT`]. A handler may see the request's
//! `Authorization` header too ([`Server::start_with_authorization`]), and answer 401.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the server answers to a request.
#[derive(Clone)]
pub enum Answer {
    /// 200 with this body.
    Body(Arc<Vec<u8>>),
    /// This status with a short text body.
    Status(u16),
    /// 302 to this location.
    Redirect(String),
    /// 200 with the body's full `Content-Length`, but only its first `after` bytes, then the
    /// connection closes: a download cut in the middle.
    Cut { body: Arc<Vec<u8>>, after: usize },
    /// 200 with the body's full `Content-Length`, one byte every `every`.
    Trickle { body: Arc<Vec<u8>>, every: Duration },
    /// 401 asking for HTTP Basic authentication (`WWW-Authenticate: Basic`).
    Unauthorized,
}

/// A handler of a request's path and `Authorization` header.
type Handler = dyn Fn(&str, Option<&str>) -> Answer + Send + Sync;

/// The running server; dropping it stops it.
pub struct Server {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// A server whose answer to a request for `path` (`/name`, as sent) is `handler(path)`.
    pub fn start<F>(handler: F) -> Server
    where
        F: Fn(&str) -> Answer + Send + Sync + 'static,
    {
        Server::start_with_authorization(move |path, _| handler(path))
    }

    /// A server whose answer to a request for `path` with the `Authorization` header `auth`
    /// (its value, if sent) is `handler(path, auth)`.
    pub fn start_with_authorization<F>(handler: F) -> Server
    where
        F: Fn(&str, Option<&str>) -> Answer + Send + Sync + 'static,
    {
        let handler: Arc<Handler> = Arc::new(handler);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, flag) = (Arc::clone(&requests), Arc::clone(&stop));
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (handler, log, flag) =
                    (Arc::clone(&handler), Arc::clone(&log), Arc::clone(&flag));
                std::thread::spawn(move || serve(stream, &*handler, &log, &flag));
            }
        });
        Server {
            url,
            requests,
            stop,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Reads one request's head and answers it.
fn serve(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<String>>, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(&stream);
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() || first.is_empty() {
        return;
    }
    // The rest of the head, up to the blank line.
    let mut authorization = None;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("authorization")
                {
                    authorization = Some(value.trim().to_string());
                }
            }
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
    log.lock().unwrap().push(path.clone());
    let mut out = &stream;
    let head = |status: &str, length: usize, extra: &str| {
        format!("HTTP/1.1 {status}\r\nContent-Length: {length}\r\n{extra}Connection: close\r\n\r\n")
    };
    let _ = match handler(&path, authorization.as_deref()) {
        Answer::Body(body) => out
            .write_all(
                head(
                    "200 OK",
                    body.len(),
                    "Content-Type: application/octet-stream\r\n",
                )
                .as_bytes(),
            )
            .and_then(|()| out.write_all(&body)),
        Answer::Status(code) => {
            let text = format!("status {code}\n");
            out.write_all(head(&format!("{code} Status {code}"), text.len(), "").as_bytes())
                .and_then(|()| out.write_all(text.as_bytes()))
        }
        Answer::Unauthorized => out.write_all(
            head(
                "401 Unauthorized",
                0,
                "WWW-Authenticate: Basic realm=\"release files\"\r\n",
            )
            .as_bytes(),
        ),
        Answer::Redirect(location) => {
            out.write_all(head("302 Found", 0, &format!("Location: {location}\r\n")).as_bytes())
        }
        Answer::Cut { body, after } => out
            .write_all(head("200 OK", body.len(), "").as_bytes())
            .and_then(|()| out.write_all(&body[..after])),
        Answer::Trickle { body, every } => {
            let started = Instant::now();
            let mut result = out.write_all(head("200 OK", body.len(), "").as_bytes());
            for byte in body.iter() {
                if result.is_err()
                    || stop.load(Ordering::SeqCst)
                    || started.elapsed() > crate::HANG_LIMIT
                {
                    break;
                }
                result = out.write_all(&[*byte]).and_then(|()| out.flush());
                std::thread::sleep(every);
            }
            result
        }
    };
    let _ = stream.shutdown(std::net::Shutdown::Both);
}
