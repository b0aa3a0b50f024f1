//! One connection to a Redis (or Valkey) server, within the rule of [`crate::signals`]: every
//! wait is bounded as a whole and ends as soon as a stop signal is queued.
//!
//! The socket I/O is retry's own bounded network code ([`crate::net`]: the lookup in a helper
//! thread, the non-blocking connect, every wait ended by a stop signal); the `redis` crate
//! only encodes commands ([`redis::Cmd::get_packed_command`]) and parses replies
//! ([`redis::Parser`]). What is RESP's stays here: how many replies a call waits for, when
//! they are complete, and the words of every error. The lookup and the connect wait at most
//! [`CONNECT_TIMEOUT`] in all, and each round trip ([`Conn::call`]: `AUTH` and `SELECT` when
//! the URL asks for them, each operation's script) at most [`ROUND_TRIP_TIMEOUT`] in all,
//! whatever the server does: a reply sent a byte at a time, or never, costs that long and no
//! more. What is counted is the time spent waiting ([`Patience::waiting`]), not the time retry
//! spends between waits, which on a loaded machine is mostly its wait for a CPU (a thousand
//! runs started together on two cores wait that long for their turn, and their server answered
//! meanwhile). A reply longer than [`MAX_REPLY`] ends the call with an error before more is
//! read.

use std::net::TcpStream;
use std::time::Duration;

use redis::{IntoConnectionInfo, Value};

use super::codec::MAX_STATE_BYTES;
use super::error::StoreError;
use super::location::RedisUrl;
use crate::net::{Failure, Patience, Step, tcp};

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

impl Conn {
    /// Connects to the server at `url` and authenticates, within [`CONNECT_TIMEOUT`] in all.
    ///
    /// # Errors
    /// [`StoreError::Stopped`] when a stop signal arrived; [`StoreError::Redis`] when the
    /// name does not resolve, no address accepts, the server refuses the password or the
    /// database, or any of it takes too long.
    pub fn open(url: &RedisUrl) -> Result<Conn, StoreError> {
        let server = url.to_string();
        let mut patience = Patience::waiting(CONNECT_TIMEOUT);
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
        let stream = tcp::resolve(&host, port, &mut patience, "budget-dns")
            .and_then(|addresses| tcp::connect(&addresses, &mut patience, true))
            .map_err(|e| store_error(e, &host, &server))?;
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
        let mut patience = Patience::waiting(ROUND_TRIP_TIMEOUT);
        tcp::send(&mut self.stream, packed, &mut patience)
            .and_then(|()| self.receive(replies, &mut patience))
            .map_err(|e| store_error(e, "", &self.server))
    }

    /// Reads until `replies` replies are complete.
    fn receive(&mut self, replies: usize, patience: &mut Patience) -> Result<Vec<Value>, Failure> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match tcp::receive(&mut self.stream, &mut chunk, patience)? {
                0 => {
                    return Err(Failure::Other(
                        "the server closed the connection before replying".into(),
                    ));
                }
                n => {
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

/// `failure` as this store's error on `server` (password redacted), in the words a Redis
/// user sees; `host` names the lookup that took too long.
fn store_error(failure: Failure, host: &str, server: &str) -> StoreError {
    let reason = match failure {
        Failure::Stopped => return StoreError::Stopped,
        Failure::TimedOut(Step::Lookup) => format!(
            "the lookup of {host} did not answer within {}ms",
            CONNECT_TIMEOUT.as_millis()
        ),
        Failure::TimedOut(step) => {
            let what = match step {
                Step::Lookup | Step::Connect => "accept the connection",
                Step::Send => "take the command",
                Step::Receive => "reply",
            };
            format!(
                "the server did not {what} in time ({}ms)",
                ROUND_TRIP_TIMEOUT.as_millis()
            )
        }
        Failure::Io(Step::Receive, e) => format!("cannot read the reply: {e}"),
        Failure::Io(_, e) => format!("cannot send: {e}"),
        Failure::Other(reason) => reason,
    };
    StoreError::Redis {
        server: server.to_string(),
        reason,
    }
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
