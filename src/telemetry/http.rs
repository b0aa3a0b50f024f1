//! One HTTP/1.1 POST within the rule of [`crate::signals`]: the OTLP/HTTP export at the end of
//! a run. The whole exchange (host name lookup, connect, request, response) is bounded by one
//! instant, and ends as soon as a stop signal is queued. The socket is non-blocking and every
//! wait is [`signals::wait_ready`]; the lookup (`getaddrinfo(3)`, which has no non-blocking
//! form) runs in a helper thread ([`crate::budget::bounded`]). Plain `http` only.
//!
//! The request closes the connection (`Connection: close`); the response is read up to its
//! status line and headers (at most [`MAX_HEAD`] bytes): the status is all retry needs.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Instant;

use nix::poll::PollFlags;
use socket2::{Domain, SockAddr, Socket, Type};

use crate::budget::bounded::{self, Bounded};
use crate::signals::{self, Ready};

/// The most bytes of the response read while looking for the end of its headers.
pub const MAX_HEAD: usize = 64 * 1024;

/// The request headers [`post`] writes itself (`Host`, `User-Agent`, `Content-Type`,
/// `Content-Length`, `Connection`), and those that would change the message's framing or the
/// connection (`Transfer-Encoding`, `TE`, `Trailer`, `Expect`, `Upgrade`, `Keep-Alive`,
/// `Proxy-Connection`; RFC 9112 section 6, <https://www.rfc-editor.org/rfc/rfc9112#section-6>,
/// and RFC 9110 section 7.6.1, <https://www.rfc-editor.org/rfc/rfc9110#section-7.6.1>). A
/// caller's header of one of these names is never sent: a second `Content-Length` or `Host`
/// makes a malformed request.
pub const OWN_HEADERS: [&str; 12] = [
    "Host",
    "User-Agent",
    "Content-Type",
    "Content-Length",
    "Connection",
    "Transfer-Encoding",
    "TE",
    "Trailer",
    "Expect",
    "Upgrade",
    "Keep-Alive",
    "Proxy-Connection",
];

/// Whether `name` is one of [`OWN_HEADERS`], compared without regard to case (field names are
/// case-insensitive: RFC 9110 section 5.1).
pub fn is_own_header(name: &str) -> bool {
    OWN_HEADERS.iter().any(|own| own.eq_ignore_ascii_case(name))
}

/// Why a POST did not get a 2xx answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// A stop signal arrived: the run ends by it, at once.
    Stopped,
    /// The time limit passed.
    TimedOut,
    /// Anything else, in words.
    Other(String),
}

/// POSTs `body` of type `content_type` to `url` (an `http` URL) with `headers` (those named
/// in [`OWN_HEADERS`] left out), until `until`. `Ok` with the status code for a 2xx answer.
///
/// # Errors
/// [`Failure::Stopped`], [`Failure::TimedOut`], or [`Failure::Other`] for a lookup, connect,
/// I/O error, a malformed response or a status outside 2xx.
// Kept out of the start-up path: see the note on code layout in `crate::telemetry`.
#[cold]
#[inline(never)]
pub fn post(
    url: &url::Url,
    content_type: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    until: Instant,
) -> Result<u16, Failure> {
    let host = url
        .host_str()
        .ok_or_else(|| Failure::Other("the URL has no host".into()))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses = resolve(host, port, until)?;
    let mut stream = connect(&addresses, until)?;
    let mut target = url.path().to_string();
    if let Some(q) = url.query() {
        target.push('?');
        target.push_str(q);
    }
    let authority = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or(host)),
        None => host.to_string(),
    };
    let mut request = format!(
        "POST {target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: retry/{}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (name, value) in headers.iter().filter(|(name, _)| !is_own_header(name)) {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut out = request.into_bytes();
    out.extend_from_slice(body);
    send(&mut stream, &out, until)?;
    let head = receive_head(&mut stream, until)?;
    let status = status_of(&head)?;
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err(Failure::Other(format!("the server answered {status}")))
    }
}

/// Waits until `fd` is ready, `until` passes or a stop signal arrives.
fn wait(stream: &TcpStream, events: PollFlags, until: Instant) -> Result<(), Failure> {
    match signals::wait_ready(std::os::fd::AsFd::as_fd(stream), events, Some(until)) {
        Ready::Ready => Ok(()),
        Ready::Stop => Err(Failure::Stopped),
        Ready::TimedOut => Err(Failure::TimedOut),
    }
}

/// The addresses of `host`: a literal IP address at once, a name through a bounded lookup.
fn resolve(host: &str, port: u16, until: Instant) -> Result<Vec<SocketAddr>, Failure> {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = literal.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let name = host.to_string();
    let lookup = bounded::call("otlp-dns", until, move || {
        (name.as_str(), port)
            .to_socket_addrs()
            .map(Iterator::collect::<Vec<_>>)
    });
    match lookup {
        Ok(Bounded::Done(Ok(addresses))) if !addresses.is_empty() => Ok(addresses),
        Ok(Bounded::Done(Ok(_))) => Err(Failure::Other(format!("{host} has no address"))),
        Ok(Bounded::Done(Err(e))) | Err(e) => {
            Err(Failure::Other(format!("cannot resolve {host}: {e}")))
        }
        Ok(Bounded::Stopped) => Err(Failure::Stopped),
        Ok(Bounded::TimedOut) => Err(Failure::TimedOut),
    }
}

/// A non-blocking connection to the first of `addresses` that accepts before `until`.
fn connect(addresses: &[SocketAddr], until: Instant) -> Result<TcpStream, Failure> {
    let mut last = Failure::Other("no address to connect to".into());
    for address in addresses {
        let other = |e: io::Error| Failure::Other(format!("cannot connect to {address}: {e}"));
        let attempt = || -> Result<TcpStream, Failure> {
            let socket =
                Socket::new(Domain::for_address(*address), Type::STREAM, None).map_err(other)?;
            socket.set_nonblocking(true).map_err(other)?;
            match socket.connect(&SockAddr::from(*address)) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
                    let stream = TcpStream::from(socket);
                    wait(&stream, PollFlags::POLLOUT, until)?;
                    if let Some(e) = stream.take_error().map_err(other)? {
                        return Err(other(e));
                    }
                    return Ok(stream);
                }
                Err(e) => return Err(other(e)),
            }
            Ok(TcpStream::from(socket))
        };
        match attempt() {
            Ok(stream) => return Ok(stream),
            Err(e @ (Failure::Stopped | Failure::TimedOut)) => return Err(e),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Writes all of `bytes`, waiting for room within the bounds.
fn send(stream: &mut TcpStream, mut bytes: &[u8], until: Instant) -> Result<(), Failure> {
    while !bytes.is_empty() {
        match stream.write(bytes) {
            Ok(0) => return Err(Failure::Other("the server closed the connection".into())),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait(stream, PollFlags::POLLOUT, until)?;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::Other(format!("cannot send the request: {e}"))),
        }
    }
    Ok(())
}

/// Reads the response up to the blank line after its headers (or its end).
fn receive_head(stream: &mut TcpStream, until: Instant) -> Result<Vec<u8>, Failure> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(head);
        }
        if head.len() > MAX_HEAD {
            return Err(Failure::Other(format!(
                "the response's headers are longer than {MAX_HEAD} bytes"
            )));
        }
        match stream.read(&mut buf) {
            Ok(0) => return Ok(head),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait(stream, PollFlags::POLLIN, until)?;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::Other(format!("cannot read the response: {e}"))),
        }
    }
}

/// The status code of a response's head (`HTTP/1.x NNN ...`).
fn status_of(head: &[u8]) -> Result<u16, Failure> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(line);
    let mut parts = text.split_ascii_whitespace();
    let bad = || Failure::Other("the server's answer is not an HTTP response".into());
    match (parts.next(), parts.next()) {
        (Some(version), Some(code)) if version.starts_with("HTTP/1.") && code.len() == 3 => {
            code.parse().map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_headers_whatever_their_case() {
        for name in [
            "host",
            "CONTENT-LENGTH",
            "Transfer-Encoding",
            "connection",
            "te",
        ] {
            assert!(is_own_header(name), "{name}");
        }
        for name in [
            "x-api-key",
            "Authorization",
            "Content-Lengths",
            "Hostname",
            "",
        ] {
            assert!(!is_own_header(name), "{name}");
        }
    }

    #[test]
    fn status_lines() {
        assert_eq!(status_of(b"HTTP/1.1 200 OK\r\n\r\n"), Ok(200));
        assert_eq!(status_of(b"HTTP/1.0 503\r\n"), Ok(503));
        for bad in [
            &b""[..],
            b"SSH-2.0-OpenSSH\r\n",
            b"HTTP/1.1 2000 x\r\n",
            b"HTTP/1.1 abc\r\n",
        ] {
            assert!(status_of(bad).is_err(), "{bad:?}");
        }
    }
}
