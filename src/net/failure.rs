//! Why a bounded network step failed ([`Failure`]): one type for the Redis store and the OTLP
//! export, each of which words it for its own messages.

use std::io;

/// The step of an exchange a [`Failure`] happened in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The host name's lookup.
    Lookup,
    /// The TCP connect.
    Connect,
    /// Sending the request.
    Send,
    /// Receiving the reply.
    Receive,
}

/// Why a step did not complete.
#[derive(Debug)]
pub enum Failure {
    /// A stop signal arrived: the run ends by it, at once.
    Stopped,
    /// The patience ([`super::Patience`]) ran out while waiting in this step.
    TimedOut(Step),
    /// The socket failed while sending or receiving; the user words it.
    Io(Step, io::Error),
    /// Anything else, in words: a name that does not resolve or has no address, a connect
    /// refused, a server that closed the connection while being sent to, or a protocol's
    /// own complaint.
    Other(String),
}
