//! One connection to a Redis (or Valkey) server, within the rule of [`crate::signals`]: every
//! wait is bounded as a whole and ends as soon as a stop signal is queued.
//!
//! The socket I/O is retry's own, on a non-blocking socket driven by [`signals::wait_ready`];
//! the `redis` crate only encodes commands ([`redis::Cmd::get_packed_command`]) and parses
//! replies ([`redis::Parser`]). The host name lookup (`getaddrinfo(3)`, which has no
//! non-blocking form and may wait 30 s on a resolver that does not answer) runs in a helper
//! thread ([`super::bounded`]); a literal IP address needs no lookup. The lookup and the
//! connect wait at most [`CONNECT_TIMEOUT`] in all, and each round trip ([`Conn::call`]: `AUTH`
//! and `SELECT` when the URL asks for them, each operation's script) at most
//! [`ROUND_TRIP_TIMEOUT`] in all, whatever the server does: a reply sent a byte at a time, or
//! never, costs that long and no more. What is counted is the time spent waiting,
//! not the time retry spends between waits, which on a loaded machine is mostly its wait for a
//! CPU (a thousand runs started together on two cores wait that long for their turn, and
//! their server answered meanwhile). A reply longer than [`MAX_REPLY`] ends the call with an
//! error before more is read.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::PollFlags;
use redis::{IntoConnectionInfo, Value};
use socket2::{Domain, SockAddr, Socket, Type};

use super::bounded::{self, Bounded};
use super::codec::MAX_STATE_BYTES;
use super::error::StoreError;
use super::location::RedisUrl;
use crate::signals::{self, Ready};

/// The longest [`Conn::open`] waits for the host name lookup and the TCP connect, in all.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);

/// The longest one round trip ([`Conn::call`]) waits for the server, in all.
pub const ROUND_TRIP_TIMEOUT: Duration = Duration::from_millis(300);

/// The longest reply read: a state of [`MAX_STATE_BYTES`] and the few bytes around it.
pub const MAX_REPLY: usize = MAX_STATE_BYTES as usize + 1024;

/// A connection to the server holding budget state.
pub struct Conn {
    stream: TcpStream,
    /// The server, password redacted, for messages.
    server: String,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Conn({})", self.server)
    }
}

/// How long a step may still wait for the server, spent by each wait as it goes.
#[derive(Clone, Copy, Debug)]
struct Patience {
    left: Duration,
}

impl Patience {
    /// Waits of `limit` in all.
    fn new(limit: Duration) -> Patience {
        Patience { left: limit }
    }

    /// The instant the patience ends if it is all spent on one wait starting now.
    fn until(&self) -> Instant {
        let now = Instant::now();
        now.checked_add(self.left).unwrap_or(now)
    }

    /// Waits until `fd` is ready for `events`, as long as the patience lasts and within the
    /// rule of [`crate::signals`]. A descriptor already ready is ready, however little
    /// patience is left.
    fn wait(&mut self, fd: &impl AsFd, events: PollFlags, what: &str) -> Result<(), Failure> {
        let start = Instant::now();
        let ready = signals::wait_ready(fd.as_fd(), events, Some(self.until()));
        self.left = self.left.saturating_sub(start.elapsed());
        match ready {
            Ready::Ready => Ok(()),
            Ready::Stop => Err(Failure::Stopped),
            Ready::TimedOut => Err(Failure::Other(format!(
                "the server did not {what} in time ({}ms)",
                ROUND_TRIP_TIMEOUT.as_millis()
            ))),
        }
    }
}

impl Conn {
    /// Connects to the server at `url` and authenticates, within [`CONNECT_TIMEOUT`] in all.
    ///
    /// # Errors
    /// [`StoreError::Stopped`] when a stop signal arrived; [`StoreError::Redis`] when the
    /// name does not resolve, no address accepts, the server refuses the password or the
    /// database, or any of it takes too long.
    pub fn open(url: &RedisUrl) -> Result<Conn, StoreError> {
        let server = url.to_string();
        let mut patience = Patience::new(CONNECT_TIMEOUT);
        let fail = |reason: String| StoreError::Redis {
            server: server.clone(),
            reason,
        };
        let info = url
            .secret_url()
            .into_connection_info()
            .map_err(|e| fail(e.to_string()))?;
        let redis::ConnectionAddr::Tcp(host, port) = info.addr().clone() else {
            return Err(fail("not a TCP address".into()));
        };
        let addresses = resolve(&host, port, &mut patience).map_err(|e| e.at(&server))?;
        let stream = connect(&addresses, &mut patience).map_err(|e| e.at(&server))?;
        let mut conn = Conn { stream, server };
        let settings = info.redis_settings();
        let mut setup = Vec::new();
        if let Some(password) = settings.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = settings.username() {
                auth.arg(user);
            }
            auth.arg(password);
            setup.push(("AUTH", auth));
        }
        if settings.db() != 0 {
            let mut select = redis::cmd("SELECT");
            select.arg(settings.db());
            setup.push(("SELECT", select));
        }
        if !setup.is_empty() {
            let packed: Vec<u8> = setup
                .iter()
                .flat_map(|(_, cmd)| cmd.get_packed_command())
                .collect();
            let replies = conn.call(&packed, setup.len())?;
            for ((name, _), reply) in setup.iter().zip(replies) {
                if let Value::ServerError(e) = reply {
                    return Err(conn.error(format!("{name} refused: {e}")));
                }
            }
        }
        Ok(conn)
    }

    /// The server, password redacted.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// A [`StoreError::Redis`] on this server.
    pub fn error(&self, reason: String) -> StoreError {
        StoreError::Redis {
            server: self.server.clone(),
            reason,
        }
    }

    /// Sends `packed` (one or more commands) and reads `replies` replies, waiting for the
    /// server at most [`ROUND_TRIP_TIMEOUT`] in all. An error reply is returned as a
    /// [`Value::ServerError`], for the caller to judge.
    ///
    /// # Errors
    /// [`StoreError::Stopped`] when a stop signal arrived; [`StoreError::Redis`] when the
    /// server closes the connection, sends what is not a reply or more than [`MAX_REPLY`]
    /// bytes, or does not answer in time. The connection should not be used after an error.
    pub fn call(&mut self, packed: &[u8], replies: usize) -> Result<Vec<Value>, StoreError> {
        let mut patience = Patience::new(ROUND_TRIP_TIMEOUT);
        self.send(packed, &mut patience)
            .and_then(|()| self.receive(replies, &mut patience))
            .map_err(|e| e.at(&self.server))
    }

    fn send(&mut self, mut bytes: &[u8], patience: &mut Patience) -> Result<(), Failure> {
        while !bytes.is_empty() {
            match self.stream.write(bytes) {
                Ok(0) => return Err(Failure::Other("the server closed the connection".into())),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    patience.wait(&self.stream, PollFlags::POLLOUT, "take the command")?;
                }
                Err(e) => return Err(Failure::Other(format!("cannot send: {e}"))),
            }
        }
        Ok(())
    }

    fn receive(&mut self, replies: usize, patience: &mut Patience) -> Result<Vec<Value>, Failure> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Err(Failure::Other(
                        "the server closed the connection before replying".into(),
                    ));
                }
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() > MAX_REPLY {
                        return Err(Failure::Other(format!(
                            "the reply is longer than {MAX_REPLY} bytes"
                        )));
                    }
                    // Every complete reply ends with CRLF: parse only then.
                    if buf.ends_with(b"\r\n")
                        && let Some(values) = parse(&buf, replies)?
                    {
                        return Ok(values);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    patience.wait(&self.stream, PollFlags::POLLIN, "reply")?;
                }
                Err(e) => return Err(Failure::Other(format!("cannot read the reply: {e}"))),
            }
        }
    }
}

/// `replies` replies from `buf`; `None` when `buf` ends before the last one does.
fn parse(buf: &[u8], replies: usize) -> Result<Option<Vec<Value>>, Failure> {
    let mut parser = redis::Parser::new();
    let mut rest = buf;
    let mut values = Vec::with_capacity(replies);
    for _ in 0..replies {
        match parser.parse_value(&mut rest) {
            Ok(value) => values.push(value),
            // The parser reads from a slice: an I/O error is the end of the slice.
            Err(e) if e.is_io_error() => return Ok(None),
            Err(e) => return Err(Failure::Other(format!("not a Redis reply: {e}"))),
        }
    }
    Ok(Some(values))
}

/// Why a step of a connection failed, before the server's name is added.
#[derive(Debug)]
enum Failure {
    Stopped,
    Other(String),
}

impl Failure {
    fn at(self, server: &str) -> StoreError {
        match self {
            Failure::Stopped => StoreError::Stopped,
            Failure::Other(reason) => StoreError::Redis {
                server: server.to_string(),
                reason,
            },
        }
    }
}

/// The addresses of `host`: the address itself when it is one, else a lookup in a helper
/// thread, waited for as long as `patience` lasts.
fn resolve(host: &str, port: u16, patience: &mut Patience) -> Result<Vec<SocketAddr>, Failure> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let name = host.to_string();
    let start = Instant::now();
    let until = patience.until();
    let lookup = bounded::call("budget-dns", until, move || {
        (name.as_str(), port)
            .to_socket_addrs()
            .map(Iterator::collect::<Vec<_>>)
    });
    patience.left = patience.left.saturating_sub(start.elapsed());
    match lookup {
        Ok(Bounded::Done(Ok(addresses))) if !addresses.is_empty() => Ok(addresses),
        Ok(Bounded::Done(Ok(_))) => Err(Failure::Other(format!("{host} has no address"))),
        Ok(Bounded::Done(Err(e))) => Err(Failure::Other(format!("cannot resolve {host}: {e}"))),
        Ok(Bounded::Stopped) => Err(Failure::Stopped),
        Ok(Bounded::TimedOut) => Err(Failure::Other(format!(
            "the lookup of {host} did not answer within {}ms",
            CONNECT_TIMEOUT.as_millis()
        ))),
        Err(e) => Err(Failure::Other(format!("cannot resolve {host}: {e}"))),
    }
}

/// A non-blocking TCP connection (with `TCP_NODELAY`, as Redis clients set it) to the first
/// of `addresses` that accepts while `patience` lasts.
fn connect(addresses: &[SocketAddr], patience: &mut Patience) -> Result<TcpStream, Failure> {
    let mut last = Failure::Other("no address to connect to".into());
    for address in addresses {
        let mut attempt = || -> Result<TcpStream, Failure> {
            let other = |e: io::Error| Failure::Other(format!("cannot connect to {address}: {e}"));
            let socket =
                Socket::new(Domain::for_address(*address), Type::STREAM, None).map_err(other)?;
            socket.set_nonblocking(true).map_err(other)?;
            // No request waits for the ACK of an earlier one (Nagle's algorithm).
            socket.set_tcp_nodelay(true).map_err(other)?;
            match socket.connect(&SockAddr::from(*address)) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
                    patience.wait(&socket, PollFlags::POLLOUT, "accept the connection")?;
                    if let Some(e) = socket.take_error().map_err(other)? {
                        return Err(other(e));
                    }
                }
                Err(e) => return Err(other(e)),
            }
            Ok(TcpStream::from(socket))
        };
        match attempt() {
            Ok(stream) => return Ok(stream),
            Err(Failure::Stopped) => return Err(Failure::Stopped),
            Err(e) => last = e,
        }
        if patience.left.is_zero() {
            break;
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_parsed_only_when_complete() {
        assert!(parse(b"$5\r\nab\r\n", 1).unwrap().is_none());
        assert!(parse(b"+OK\r\n", 2).unwrap().is_none());
        let values = parse(b"+OK\r\n:7\r\n", 2).unwrap().unwrap();
        assert_eq!(values, [Value::Okay, Value::Int(7)]);
        assert!(parse(b"?what\r\n", 1).is_err());
        let deep = "*1\r\n".repeat(200) + ":1\r\n";
        assert!(parse(deep.as_bytes(), 1).is_err());
    }
}
