//! One HTTP/1.1 POST within the rule of [`crate::signals`]: the OTLP/HTTP export at the end of
//! a run. The whole exchange (host name lookup, connect, request, response) is bounded by one
//! instant ([`Patience::until_instant`]), and ends as soon as a stop signal is queued: the
//! lookup, the connect and every wait are [`crate::net`]'s. What is HTTP's stays here: the
//! request, the end of the response's head, its status. Plain `http` only.
//!
//! The request closes the connection (`Connection: close`); the response is read up to its
//! status line and headers (at most [`MAX_HEAD`] bytes): the status is all retry needs.

use std::io;
use std::net::{IpAddr, TcpStream};
use std::time::Instant;

use crate::net::{Failure, Patience, Step, tcp};

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

/// POSTs `body` of type `content_type` to `url` (an `http` URL) with `headers` (those named
/// in [`OWN_HEADERS`] left out), until `until`. `Ok` with the status code for a 2xx answer.
///
/// # Errors
/// [`Failure::Stopped`], [`Failure::TimedOut`], [`Failure::Io`] (worded by [`io_words`]), or
/// [`Failure::Other`] for a lookup, a connect, a malformed response or a status outside 2xx.
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
    let mut patience = Patience::until_instant(until);
    // The URL writes an IPv6 address in brackets: the address is what is inside them.
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let name = if literal.parse::<IpAddr>().is_ok() {
        literal
    } else {
        host
    };
    let addresses = tcp::resolve(name, port, &mut patience, "otlp-dns")?;
    let mut stream = tcp::connect(&addresses, &mut patience, false)?;
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
    tcp::send(&mut stream, &out, &mut patience)?;
    let head = receive_head(&mut stream, &mut patience)?;
    let status = status_of(&head).map_err(Failure::Other)?;
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err(Failure::Other(format!("the server answered {status}")))
    }
}

/// The words for an I/O error of the exchange in `step`.
pub fn io_words(step: Step, e: &io::Error) -> String {
    match step {
        Step::Receive => format!("cannot read the response: {e}"),
        Step::Lookup | Step::Connect | Step::Send => format!("cannot send the request: {e}"),
    }
}

/// Reads the response up to the blank line after its headers (or its end).
fn receive_head(stream: &mut TcpStream, patience: &mut Patience) -> Result<Vec<u8>, Failure> {
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
        match tcp::receive(stream, &mut buf, patience)? {
            0 => return Ok(head),
            n => head.extend_from_slice(&buf[..n]),
        }
    }
}

/// The status code of a response's head (`HTTP/1.x NNN ...`).
fn status_of(head: &[u8]) -> Result<u16, String> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(line);
    let mut parts = text.split_ascii_whitespace();
    let bad = || "the server's answer is not an HTTP response".to_string();
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
