//! After an attempt: the release of its held stdout and of what its leftovers still write
//! ([`Release`], in threads of retry's), or the hand-over of the latter to the relay, a process
//! that outlives retry ([`RunIo::relay`]).

use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;

use super::out::Out;
use super::rest::{self, Rest};
use super::run::RunIo;
use super::tasks::Tasks;
use crate::held::Stream;
use crate::spool::Spool;

/// The release of what an attempt's output still holds ([`RunIo::release`]), running in
/// threads of their own.
#[derive(Debug)]
pub struct Release {
    tasks: Tasks,
    stdout: Option<JoinHandle<(io::Result<()>, io::Result<()>)>>,
    stderr: Option<JoinHandle<io::Result<()>>>,
}

/// How a [`Release`] went: the write errors (a closed stdout is `BrokenPipe`).
#[derive(Debug)]
pub struct Released {
    /// Writing the held stdout.
    pub held: io::Result<()>,
    /// Passing on what the attempt's leftovers wrote to its stdout, after the held stdout.
    pub stdout: io::Result<()>,
    /// Passing on what they wrote to its stderr.
    pub stderr: io::Result<()>,
}

impl Release {
    /// The release's threads, to wait for.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// How the release went; `None` if it has not ended (it is left behind, blocked).
    pub fn result(self) -> Option<Released> {
        if !self.tasks.done() {
            return None;
        }
        let panicked = || Err(io::Error::other("an output thread panicked"));
        let (held, stdout) = match self.stdout.map(JoinHandle::join) {
            None => (Ok(()), Ok(())),
            Some(Ok(results)) => results,
            Some(Err(_)) => (panicked(), Ok(())),
        };
        let stderr = match self.stderr.map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => panicked(),
        };
        Some(Released {
            held,
            stdout,
            stderr,
        })
    }
}

impl RunIo {
    /// Starts writing a held stdout to retry's stdout (the attempt succeeded) or stderr (it
    /// failed), then passing on what the attempt's leftovers write to the pipes in `rest`
    /// (give it only after a success) to retry's stdout and stderr, until every writer has
    /// closed them, in threads of their own: a reader that does not read, or a writer that
    /// does not close, blocks only those threads. Their results hold the write errors: a
    /// closed stdout is `BrokenPipe`.
    ///
    /// # Errors
    /// When a thread cannot start.
    pub fn release(
        &self,
        held: Option<Arc<Spool>>,
        to_stdout: bool,
        rest: Rest,
    ) -> io::Result<Release> {
        let tasks = Tasks::writing_to_outputs();
        // With --chronic nothing of a successful attempt is shown but, with
        // --stdout-on-success, its stdout: what its leftovers write is read and dropped.
        let chronic = self.held.is_some();
        let out = match (chronic, to_stdout && self.hold_stdout) {
            (true, false) => Out::Null,
            _ => Out::File(self.stdout.clone()),
        };
        let err = if chronic {
            Out::Null
        } else {
            Out::File(self.stderr.clone())
        };
        let held_to = if to_stdout {
            Out::File(self.stdout.clone())
        } else {
            self.live(Stream::Stderr)
        };
        let stdout = match (held, rest.stdout) {
            (None, None) => None,
            (held, pipe) => Some(tasks.spawn("release", move || {
                if let Some(Err(e)) = held.map(|h| held_to.copy_from(&h)) {
                    return (Err(e), Ok(()));
                }
                (Ok(()), pipe.map_or(Ok(()), |p| rest::pass_on(p, &out)))
            })?),
        };
        let stderr = rest
            .stderr
            .map(|pipe| tasks.spawn("release", move || rest::pass_on(pipe, &err)))
            .transpose()?;
        Ok(Release {
            tasks,
            stdout,
            stderr,
        })
    }

    /// Hands what a successful attempt's leftovers still write to the pipes in `rest` to the
    /// relay, a process of its own that passes it on to retry's stdout and stderr until every
    /// writer has closed them ([`crate::process::relay`]), so that retry can end now. With
    /// `--chronic` it is read and dropped, but for stdout with `--stdout-on-success`, as
    /// [`RunIo::release`] does. `failure` renders the line the relay says when a write fails
    /// (`{}` stands for the error's words). Close `rest` afterwards: the relay has its own copies.
    ///
    /// # Errors
    /// When the relay cannot start (`fork` failed): nothing was handed over.
    pub fn relay(
        &self,
        rest: &Rest,
        attempt: u64,
        failure: impl Fn(&str) -> Vec<u8>,
    ) -> io::Result<i32> {
        #[cfg(windows)]
        {
            let _ = (rest, attempt, failure);
            // Never asked for: no pipe is kept for leftovers on Windows (`os::keep_rest`).
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "no relay on Windows: what an attempt leaves running ends with its job",
            ))
        }
        #[cfg(unix)]
        self.relay_unix(rest, attempt, failure)
    }

    /// [`RunIo::relay`] on Unix.
    #[cfg(unix)]
    fn relay_unix(
        &self,
        rest: &Rest,
        attempt: u64,
        failure: impl Fn(&str) -> Vec<u8>,
    ) -> io::Result<i32> {
        use crate::process::relay::Relayed;
        use std::os::fd::AsFd;
        let chronic = self.held.is_some();
        let line = |name: &str| {
            failure(&format!(
                "cannot write the {name} of attempt {attempt} (from what it left running) to \
                 {name}: {{}}; the rest of it is lost"
            ))
        };
        let stdout = rest.stdout.as_ref().map(|p| Relayed {
            pipe: p.as_fd(),
            pass_on: !chronic || self.hold_stdout,
            failure: line("stdout"),
        });
        let stderr = rest.stderr.as_ref().map(|p| Relayed {
            pipe: p.as_fd(),
            pass_on: !chronic,
            failure: line("stderr"),
        });
        crate::process::relay::start(stdout, stderr)
    }
}
