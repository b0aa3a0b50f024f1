//! A TCP exchange in bounded steps: the host name looked up (in a helper thread,
//! [`super::bounded`]; a literal IP address needs none), a non-blocking connect, bytes sent
//! and received on the non-blocking socket. Every wait is [`Patience::wait`]: bounded, and
//! ended by a stop signal. What is sent and how a reply ends is the protocol's, in its user.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Instant;

use socket2::{Domain, SockAddr, Socket, Type};

use super::bounded::{self, Bounded};
use super::failure::{Failure, Step};
use super::patience::Patience;

/// The addresses of `host` (for `port`): the address itself when it is one, else a lookup
/// (`getaddrinfo(3)`, which has no non-blocking form and may wait 30 s on a resolver that does
/// not answer) in a helper thread named `thread`, waited for as long as `patience` lasts.
///
/// # Errors
/// [`Failure::Stopped`], [`Failure::TimedOut`] ([`Step::Lookup`]), or [`Failure::Other`] when
/// the name does not resolve or has no address.
pub fn resolve(
    host: &str,
    port: u16,
    patience: &mut Patience,
    thread: &str,
) -> Result<Vec<SocketAddr>, Failure> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let name = host.to_string();
    let start = Instant::now();
    let lookup = bounded::call(thread, patience.until(), move || {
        (name.as_str(), port)
            .to_socket_addrs()
            .map(Iterator::collect::<Vec<_>>)
    });
    patience.spend_since(start);
    match lookup {
        Ok(Bounded::Done(Ok(addresses))) if !addresses.is_empty() => Ok(addresses),
        Ok(Bounded::Done(Ok(_))) => Err(Failure::Other(format!("{host} has no address"))),
        Ok(Bounded::Done(Err(e))) | Err(e) => {
            Err(Failure::Other(format!("cannot resolve {host}: {e}")))
        }
        Ok(Bounded::Stopped) => Err(Failure::Stopped),
        Ok(Bounded::TimedOut) => Err(Failure::TimedOut(Step::Lookup)),
    }
}

/// A non-blocking TCP connection to the first of `addresses` that accepts while `patience`
/// lasts; with `TCP_NODELAY` when `nodelay` (no request then waits for the ACK of an earlier
/// one: Nagle's algorithm). An address that refuses gives way to the next while patience is
/// left.
///
/// # Errors
/// [`Failure::Stopped`], [`Failure::TimedOut`] ([`Step::Connect`]), or [`Failure::Other`]
/// with the last address's error.
pub fn connect(
    addresses: &[SocketAddr],
    patience: &mut Patience,
    nodelay: bool,
) -> Result<TcpStream, Failure> {
    let mut last = Failure::Other("no address to connect to".into());
    for address in addresses {
        let mut attempt = || -> Result<TcpStream, Failure> {
            let other = |e: io::Error| Failure::Other(format!("cannot connect to {address}: {e}"));
            let socket =
                Socket::new(Domain::for_address(*address), Type::STREAM, None).map_err(other)?;
            socket.set_nonblocking(true).map_err(other)?;
            if nodelay {
                socket.set_tcp_nodelay(true).map_err(other)?;
            }
            match socket.connect(&SockAddr::from(*address)) {
                Ok(()) => {}
                Err(e) if super::os::in_progress(&e) => {
                    patience.wait(&socket, super::Interest::Write, Step::Connect)?;
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
            Err(e @ (Failure::Stopped | Failure::TimedOut(_))) => return Err(e),
            Err(e) => last = e,
        }
        if patience.is_spent() {
            break;
        }
    }
    Err(last)
}

/// Writes all of `bytes` to the non-blocking `stream`, waiting for room while `patience`
/// lasts.
///
/// # Errors
/// [`Failure::Stopped`], [`Failure::TimedOut`] ([`Step::Send`]), [`Failure::Io`]
/// ([`Step::Send`]), or [`Failure::Other`] when the server closed the connection.
pub fn send(
    stream: &mut TcpStream,
    mut bytes: &[u8],
    patience: &mut Patience,
) -> Result<(), Failure> {
    while !bytes.is_empty() {
        match stream.write(bytes) {
            Ok(0) => return Err(Failure::Other("the server closed the connection".into())),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                patience.wait(stream, super::Interest::Write, Step::Send)?;
            }
            Err(e) => return Err(Failure::Io(Step::Send, e)),
        }
    }
    Ok(())
}

/// Reads what the non-blocking `stream` has into `buf`, first waiting for something to read
/// while `patience` lasts; 0 when the server closed the connection.
///
/// # Errors
/// [`Failure::Stopped`], [`Failure::TimedOut`] ([`Step::Receive`]) or [`Failure::Io`]
/// ([`Step::Receive`]).
pub fn receive(
    stream: &mut TcpStream,
    buf: &mut [u8],
    patience: &mut Patience,
) -> Result<usize, Failure> {
    loop {
        match stream.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                patience.wait(stream, super::Interest::Read, Step::Receive)?;
            }
            Err(e) => return Err(Failure::Io(Step::Receive, e)),
        }
    }
}
