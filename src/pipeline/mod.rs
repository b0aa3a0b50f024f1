//! Pipeline I/O around attempts: `--replay-stdin`, `--stdout-on-success` and the output
//! conditions. Without those flags none of this runs: attempts inherit retry's descriptors.

mod cancel;
mod pump;
mod replay;

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

pub use pump::{Findings, LineMatcher, MATCH_LINE_LIMIT, Rules};

use cancel::Cancel;
use pump::{PumpEnd, Sink, pump};

use crate::config::Pipeline;
use crate::process::Piped;
use crate::spool::Spool;

/// Pipe size asked for on Linux: fewer, larger reads and writes per byte copied.
const PIPE_SIZE: i32 = 1 << 20;

/// Grows a pipe to [`PIPE_SIZE`] where the system allows (Linux; up to
/// `/proc/sys/fs/pipe-max-size`); anything else is left as it is.
fn grow_pipe<F: AsFd>(fd: &F) {
    #[cfg(target_os = "linux")]
    let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Pipeline I/O for a whole run: the stdin recording and what each attempt needs.
#[derive(Debug)]
pub struct RunIo {
    replay: Option<Arc<Spool>>,
    rules: Option<Arc<Rules>>,
    hold_stdout: bool,
    stdout: Arc<File>,
    stderr: Arc<File>,
}

/// What one attempt's I/O came to.
#[derive(Debug, Default)]
pub struct AttemptReport {
    /// What the output said (all defaults without output conditions).
    pub findings: Findings,
    /// The attempt's stdout, held (`--stdout-on-success`).
    pub held: Option<Arc<Spool>>,
    /// retry's stdout refused the attempt's output: the reader is gone.
    pub stdout_closed: bool,
}

/// An attempt's running I/O threads.
#[derive(Debug)]
pub struct AttemptIo {
    cancel: Arc<Cancel>,
    feeder: Option<JoinHandle<()>>,
    stdout: Option<JoinHandle<PumpEnd>>,
    stderr: Option<JoinHandle<PumpEnd>>,
    held: Option<Arc<Spool>>,
    replay: Option<Arc<Spool>>,
}

impl RunIo {
    /// Prepares pipeline I/O for `pipeline`; starts recording stdin with `--replay-stdin`.
    ///
    /// # Errors
    /// When stdin, stdout or stderr cannot be duplicated, or a thread cannot start.
    pub fn new(pipeline: &Pipeline) -> io::Result<RunIo> {
        let rules = pipeline.matches_output().then(|| {
            Arc::new(Rules {
                retry_if: pipeline.retry_if_output.clone(),
                stop_if: pipeline.stop_if_output.clone(),
                delay_from: pipeline.delay_from_output.clone(),
            })
        });
        if pipeline.replay_stdin {
            grow_pipe(&io::stdin());
        }
        Ok(RunIo {
            replay: if pipeline.replay_stdin {
                Some(replay::record_stdin()?)
            } else {
                None
            },
            rules,
            hold_stdout: pipeline.stdout_on_success,
            stdout: Arc::new(File::from(io::stdout().as_fd().try_clone_to_owned()?)),
            stderr: Arc::new(File::from(io::stderr().as_fd().try_clone_to_owned()?)),
        })
    }

    /// Which streams an attempt must get as pipes.
    pub fn piped(&self) -> Piped {
        Piped {
            stdin: self.replay.is_some(),
            stdout: self.hold_stdout || self.rules.is_some(),
            stderr: self.rules.is_some(),
        }
    }

    /// Starts the threads for one attempt's pipes (those [`RunIo::piped`] asked for).
    ///
    /// # Errors
    /// When a thread cannot start.
    pub fn start(
        &self,
        stdin: Option<ChildStdin>,
        stdout: Option<ChildStdout>,
        stderr: Option<ChildStderr>,
    ) -> io::Result<AttemptIo> {
        let cancel = Arc::new(Cancel::new()?);
        for fd in [
            stdin.as_ref().map(|p| p.as_fd()),
            stdout.as_ref().map(|p| p.as_fd()),
            stderr.as_ref().map(|p| p.as_fd()),
        ]
        .into_iter()
        .flatten()
        {
            grow_pipe(&fd);
        }
        let feeder = match (stdin, &self.replay) {
            (Some(pipe), Some(spool)) => {
                let (spool, cancel) = (spool.clone(), cancel.clone());
                Some(
                    thread::Builder::new()
                        .name("stdin-feed".into())
                        .spawn(move || replay::feed(&spool, pipe, &cancel))?,
                )
            }
            _ => None,
        };
        let held = (self.hold_stdout && stdout.is_some()).then(|| Arc::new(Spool::new()));
        let stdout_sink = match &held {
            Some(spool) => Sink::Hold(spool.clone()),
            None => Sink::Forward(self.stdout.clone()),
        };
        let stdout = stdout
            .map(|p| self.spawn_pump("stdout", p.into(), stdout_sink, &cancel))
            .transpose()?;
        let stderr_sink = Sink::Forward(self.stderr.clone());
        let stderr = stderr
            .map(|p| self.spawn_pump("stderr", p.into(), stderr_sink, &cancel))
            .transpose()?;
        Ok(AttemptIo {
            cancel,
            feeder,
            stdout,
            stderr,
            held,
            replay: self.replay.clone(),
        })
    }

    fn spawn_pump(
        &self,
        name: &str,
        source: OwnedFd,
        sink: Sink,
        cancel: &Arc<Cancel>,
    ) -> io::Result<JoinHandle<PumpEnd>> {
        let (rules, cancel) = (self.rules.clone(), cancel.clone());
        thread::Builder::new()
            .name(name.into())
            .spawn(move || pump(source, sink, rules, &cancel))
    }

    /// Writes a held stdout to retry's stdout (the attempt succeeded) or stderr (it failed).
    ///
    /// # Errors
    /// Write errors: a closed stdout is `BrokenPipe`.
    pub fn release(&self, held: &Spool, to_stdout: bool) -> io::Result<()> {
        let out = if to_stdout {
            &self.stdout
        } else {
            &self.stderr
        };
        held.copy_to(out)
    }
}

impl AttemptIo {
    /// The attempt ended: stops feeding stdin, reads what is left in the output pipes (without
    /// waiting for processes that keep them open), and reports.
    pub fn finish(self) -> AttemptReport {
        self.cancel.cancel();
        if let Some(spool) = &self.replay {
            spool.wake();
        }
        if let Some(feeder) = self.feeder {
            let _ = feeder.join();
        }
        let mut report = AttemptReport {
            held: self.held,
            ..AttemptReport::default()
        };
        for (handle, is_stdout) in [(self.stdout, true), (self.stderr, false)] {
            if let Some(end) = handle.and_then(|h| h.join().ok()) {
                report.findings = report.findings.merge(end.findings);
                report.stdout_closed |= is_stdout && end.sink_closed;
            }
        }
        report
    }
}
