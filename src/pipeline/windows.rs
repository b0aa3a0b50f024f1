//! The pipeline on Windows, not built yet: retry there passes an attempt's stdin, stdout and
//! stderr straight through, and `config` refuses, with one line each, the flags that need the
//! pipeline (`--replay-stdin`, `--stdout-on-success`, the output conditions, `--http-hints`,
//! `--idle-timeout`, `--chronic`). These types keep the supervisor's one shape on every
//! system; none of them can be made ([`RunIo::new`] says why), so none of their methods runs.

use std::convert::Infallible;
use std::io;
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::Arc;

use super::{AttemptReport, Settings, Tasks};
use crate::held::Held;
use crate::process::Piped;
use crate::spool::Spool;

/// Why no pipeline runs on Windows.
const NOT_YET: &str = "the I/O pipeline is not available on Windows";

/// A run's pipeline I/O: none on Windows.
#[derive(Debug)]
pub enum RunIo {}

/// An attempt's running I/O threads: none on Windows.
#[derive(Debug)]
pub enum AttemptIo {}

/// The release of a held stdout: none on Windows.
#[derive(Debug)]
pub enum Release {}

/// `--chronic`'s write-out: none on Windows.
#[derive(Debug)]
pub enum WriteOut {}

/// The pipes an attempt's leftovers hold open: never any on Windows (the attempt's pipes are
/// retry's own descriptors, and its job ends with retry).
#[derive(Debug, Default)]
pub struct Rest {
    _none: (),
}

impl Rest {
    /// Always: no pipe is held open.
    pub fn is_empty(&self) -> bool {
        true
    }
}

/// How a [`Release`] went.
#[derive(Debug)]
pub struct Released {
    /// Writing the held stdout.
    pub held: io::Result<()>,
    /// Passing on what the attempt's leftovers wrote to its stdout.
    pub stdout: io::Result<()>,
    /// Passing on what they wrote to its stderr.
    pub stderr: io::Result<()>,
}

impl RunIo {
    /// Never made on Windows.
    ///
    /// # Errors
    /// Always: [`io::ErrorKind::Unsupported`].
    pub fn new(_pipeline: &Settings) -> io::Result<RunIo> {
        Err(io::Error::new(io::ErrorKind::Unsupported, NOT_YET))
    }

    /// (No value of this type exists.)
    pub fn replay_failure(&self) -> Option<String> {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn piped(&self) -> Piped {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn held(&self) -> Option<&Arc<Held>> {
        match *self {}
    }

    /// (No value of this type exists.)
    ///
    /// # Errors
    /// None.
    pub fn start(
        &self,
        _stdin: Option<ChildStdin>,
        _stdout: Option<ChildStdout>,
        _stderr: Option<ChildStderr>,
    ) -> io::Result<AttemptIo> {
        match *self {}
    }

    /// (No value of this type exists.)
    ///
    /// # Errors
    /// None.
    pub fn capture(&self) -> io::Result<Option<(Infallible, AttemptIo)>> {
        match *self {}
    }

    /// (No value of this type exists.)
    ///
    /// # Errors
    /// None.
    pub fn write_out(&self) -> io::Result<Option<WriteOut>> {
        match *self {}
    }

    /// (No value of this type exists.)
    ///
    /// # Errors
    /// None.
    pub fn release(
        &self,
        _held: Option<Arc<Spool>>,
        _to_stdout: bool,
        _rest: Rest,
    ) -> io::Result<Release> {
        match *self {}
    }

    /// (No value of this type exists.)
    ///
    /// # Errors
    /// None.
    pub fn relay(
        &self,
        _rest: &Rest,
        _attempt: u64,
        _failure: impl Fn(&str) -> Vec<u8>,
    ) -> io::Result<i32> {
        match *self {}
    }
}

impl AttemptIo {
    /// (No value of this type exists.)
    pub fn idle_since(&self) -> std::time::Instant {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn stop(&self) {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn tasks(&self) -> &Tasks {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn report(self, _attempt: u64) -> AttemptReport {
        match self {}
    }
}

impl Release {
    /// (No value of this type exists.)
    pub fn tasks(&self) -> &Tasks {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn result(self) -> Option<Released> {
        match self {}
    }
}

impl WriteOut {
    /// (No value of this type exists.)
    pub fn tasks(&self) -> &Tasks {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn result(self) -> Option<(io::Result<()>, io::Result<()>)> {
        match self {}
    }
}
