//! Pipeline I/O around attempts: `--replay-stdin`, `--stdout-on-success`, the output
//! conditions, `--http-hints`, `--idle-timeout` and `--chronic` (whose pumps write into the
//! run's held output, as do the hooks' through [`RunIo::capture`]). Without those flags none of
//! this runs: attempts inherit retry's descriptors.
//!
//! Every thread that may block on a reader or a writer (the output pumps, the release of a
//! held stdout, the passing on of what a successful attempt's leftovers write when the relay
//! cannot start) runs in a [`Tasks`] group, so the supervisor waits for it while still hearing
//! signals, and can leave it behind when told to stop. What those leftovers write is otherwise
//! handed to the relay ([`RunIo::relay`]), which outlives retry.

mod activity;
mod cancel;
mod chronic;
mod out;
mod pump;
mod replay;
mod rest;
mod settings;
mod tasks;

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::Arc;
use std::thread::JoinHandle;

pub use chronic::WriteOut;
pub use out::Out;
pub use pump::{Findings, LineMatcher, MATCH_LINE_LIMIT, Rules};
pub use rest::Rest;
pub use settings::Settings;
pub use tasks::Tasks;

use activity::Activity;
use cancel::Cancel;
use pump::{PumpEnd, Sink, pump};
use replay::FeedEnd;

use crate::held::{Held, Stream};
use crate::process::Piped;
use crate::process::relay::Relayed;
use crate::spool::Spool;

/// Pipe size asked for on Linux: fewer, larger reads and writes per byte copied.
#[cfg(target_os = "linux")]
const PIPE_SIZE: i32 = 1 << 20;

/// Grows a pipe to [`PIPE_SIZE`] where the system allows (Linux; up to
/// `/proc/sys/fs/pipe-max-size`); anything else is left as it is.
fn grow_pipe<F: AsFd>(fd: &F) {
    #[cfg(target_os = "linux")]
    let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Whether `a` and `b` are the same open file, pipe or terminal (`fstat`: the same device and
/// inode), as retry's stdout and stderr are under `2>&1`, in a cron job whose mail takes both,
/// or on a terminal. `false` when either cannot be looked at.
fn same_file<A: AsFd, B: AsFd>(a: &A, b: &B) -> bool {
    match (
        nix::sys::stat::fstat(a.as_fd()),
        nix::sys::stat::fstat(b.as_fd()),
    ) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

/// Pipeline I/O for a whole run: the stdin recording and what each attempt needs.
#[derive(Debug)]
pub struct RunIo {
    replay: Option<Arc<Spool>>,
    rules: Option<Arc<Rules>>,
    hold_stdout: bool,
    /// `--idle-timeout`: stdout and stderr are piped so that their output can be timed.
    watch_idle: bool,
    /// `--chronic`: the run's held output, where every stream goes.
    held: Option<Arc<Held>>,
    /// `--chronic` without `--stdout-on-success`, with retry's stdout and stderr one file
    /// ([`same_file`]): an attempt gets one pipe for both, so its output is held, and written
    /// out, in the exact order it was written (two pipes are read by two threads, which
    /// cannot tell which of two writes came first).
    merged: bool,
    /// CI folds are on ([`Settings::end_lines`]): each pump ends the last line it passed on
    /// with a newline if the attempt left it without one, so that the fold's end marker, and
    /// retry's line after it, start a line of the log.
    end_lines: bool,
    stdout: Arc<File>,
    stderr: Arc<File>,
}

/// What one attempt's I/O came to.
#[derive(Debug, Default)]
pub struct AttemptReport {
    /// What the output said (all defaults without output conditions).
    pub findings: Findings,
    /// The first `--delay-from-output` capture that was neither a number of seconds nor an
    /// HTTP-date, escaped.
    pub bad_hint: Option<String>,
    /// The attempt's stdout, held (`--stdout-on-success`); `None` when the hold failed (its
    /// bytes then went to stderr, see `faults`).
    pub held: Option<Arc<Spool>>,
    /// retry's stdout refused the attempt's output: the reader is gone.
    pub stdout_closed: bool,
    /// The attempt was given a truncated stdin: every byte recorded before the recording
    /// failed, then end of file.
    pub stdin_truncated: bool,
    /// What went wrong with the attempt's I/O, one message each (empty when nothing did):
    /// the recording of stdin, a write to retry's stdout or stderr, the hold.
    pub faults: Vec<String>,
    /// retry stopped waiting for some of the I/O threads (after a stop signal, with a reader
    /// that does not read): part of the attempt's output may not have been written.
    pub abandoned: bool,
    /// The output pipes that processes the attempt left running still hold open, drained:
    /// passed on after a success ([`RunIo::release`]), closed otherwise.
    pub rest: Rest,
}

/// An attempt's running I/O threads.
#[derive(Debug)]
pub struct AttemptIo {
    cancel: Arc<Cancel>,
    activity: Arc<Activity>,
    tasks: Tasks,
    feeder: Option<JoinHandle<FeedEnd>>,
    stdout: Option<JoinHandle<PumpEnd>>,
    stderr: Option<JoinHandle<PumpEnd>>,
    held: Option<Arc<Spool>>,
    replay: Option<Arc<Spool>>,
}

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
    /// Prepares pipeline I/O for `pipeline`; starts recording stdin with `--replay-stdin`
    /// (at most `pipeline.max_replay` bytes).
    ///
    /// # Errors
    /// When stdin, stdout or stderr cannot be duplicated, or a thread cannot start.
    pub fn new(pipeline: &Settings) -> io::Result<RunIo> {
        let rules = pipeline.matches_output().then(|| {
            Arc::new(Rules {
                retry_if: pipeline.retry_if_output.clone(),
                stop_if: pipeline.stop_if_output.clone(),
                delay_from: pipeline.delay_from_output.clone(),
                http_hints: pipeline.http_hints,
            })
        });
        if pipeline.replay_stdin {
            grow_pipe(&io::stdin());
        }
        Ok(RunIo {
            replay: if pipeline.replay_stdin {
                Some(replay::record_stdin(pipeline.max_replay)?)
            } else {
                None
            },
            rules,
            hold_stdout: pipeline.stdout_on_success,
            watch_idle: pipeline.idle_timeout.is_some(),
            held: pipeline
                .chronic
                .then(|| Arc::new(Held::new(pipeline.max_output))),
            merged: (pipeline.chronic || pipeline.end_lines)
                && !pipeline.stdout_on_success
                && same_file(&io::stdout(), &io::stderr()),
            end_lines: pipeline.end_lines,
            stdout: Arc::new(File::from(io::stdout().as_fd().try_clone_to_owned()?)),
            stderr: Arc::new(File::from(io::stderr().as_fd().try_clone_to_owned()?)),
        })
    }

    /// Why the recording of stdin failed (`--replay-stdin`), if it did: a later attempt
    /// would get only part of stdin.
    pub fn replay_failure(&self) -> Option<String> {
        self.replay.as_ref().and_then(|spool| spool.failure())
    }

    /// Which streams an attempt must get as pipes.
    pub fn piped(&self) -> Piped {
        let whole = self.held.is_some() || self.end_lines;
        Piped {
            stdin: self.replay.is_some(),
            stdout: self.hold_stdout || self.rules.is_some() || self.watch_idle || whole,
            stderr: self.rules.is_some() || self.watch_idle || whole,
            stderr_in_stdout: self.merged,
        }
    }

    /// `--chronic`'s held output, if the run holds its output.
    pub fn held(&self) -> Option<&Arc<Held>> {
        self.held.as_ref()
    }

    /// Where bytes for `stream` go while the attempt runs: the held output with `--chronic`,
    /// else retry's own descriptor.
    fn live(&self, stream: Stream) -> Out {
        match (&self.held, stream) {
            (Some(held), stream) => Out::Held(held.clone(), stream),
            (None, Stream::Stdout) => Out::File(self.stdout.clone()),
            (None, Stream::Stderr) => Out::File(self.stderr.clone()),
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
        let activity = Arc::new(Activity::new());
        let tasks = Tasks::new();
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
                Some(tasks.spawn("stdin-feed", move || replay::feed(&spool, pipe, &cancel))?)
            }
            _ => None,
        };
        let held = (self.hold_stdout && stdout.is_some()).then(|| Arc::new(Spool::new()));
        let stdout_sink = match &held {
            Some(spool) => Sink::Hold {
                spool: spool.clone(),
                fallback: self.live(Stream::Stderr),
            },
            None => Sink::Forward(self.live(Stream::Stdout)),
        };
        let stdout = stdout
            .map(|p| self.spawn_pump(&tasks, "stdout", p.into(), stdout_sink, &activity, &cancel))
            .transpose()?;
        let stderr_sink = Sink::Forward(self.live(Stream::Stderr));
        let stderr = stderr
            .map(|p| self.spawn_pump(&tasks, "stderr", p.into(), stderr_sink, &activity, &cancel))
            .transpose()?;
        Ok(AttemptIo {
            cancel,
            activity,
            tasks,
            feeder,
            stdout,
            stderr,
            held,
            replay: self.replay.clone(),
        })
    }

    fn spawn_pump(
        &self,
        tasks: &Tasks,
        name: &str,
        source: OwnedFd,
        sink: Sink,
        activity: &Arc<Activity>,
        cancel: &Arc<Cancel>,
    ) -> io::Result<JoinHandle<PumpEnd>> {
        let (rules, activity, cancel) = (self.rules.clone(), activity.clone(), cancel.clone());
        let end_lines = self.end_lines;
        tasks.spawn(name, move || {
            pump(source, sink, rules, end_lines, &activity, &cancel)
        })
    }

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
        let tasks = Tasks::new();
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
}

impl RunIo {
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

impl AttemptIo {
    /// When the attempt last wrote to its piped stdout or stderr (to the millisecond, never
    /// later than it did), or when its I/O started if it has written nothing: with
    /// `--idle-timeout`, the attempt is idle from this time on.
    pub fn idle_since(&self) -> std::time::Instant {
        self.activity.quiet_since()
    }

    /// The attempt ended: stops feeding stdin, and has the output pumps read what is left in
    /// their pipes (without waiting for processes that keep them open). Wait for
    /// [`AttemptIo::tasks`], then call [`AttemptIo::report`].
    pub fn stop(&self) {
        self.cancel.cancel();
        if let Some(spool) = &self.replay {
            spool.wake();
        }
    }

    /// The attempt's I/O threads, to wait for.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// What the attempt's I/O came to. Threads that have not ended are left behind (a pump
    /// blocked on a reader that does not read), and the report says so (`abandoned`).
    pub fn report(self, attempt: u64) -> AttemptReport {
        let mut report = AttemptReport {
            held: self.held,
            ..AttemptReport::default()
        };
        // Threads count themselves out just before they end: when all have, join them all.
        let all = self.tasks.done();
        match self.feeder {
            Some(h) if all || h.is_finished() => {
                if let Ok(end) = h.join() {
                    report.stdin_truncated = end.truncated;
                    if end.truncated {
                        let why = end
                            .error
                            .or_else(|| self.replay.as_ref().and_then(|s| s.failure()))
                            .unwrap_or_else(|| "the recording of stdin failed".into());
                        report.faults.push(format!(
                            "{why}; attempt {attempt} saw its stdin end early, after {} bytes",
                            end.fed
                        ));
                    }
                }
            }
            Some(_) => report.abandoned = true,
            None => {}
        }
        for (handle, name) in [(self.stdout, "stdout"), (self.stderr, "stderr")] {
            let Some(handle) = handle else { continue };
            if !(all || handle.is_finished()) {
                report.abandoned = true;
                continue;
            }
            let Ok(end) = handle.join() else { continue };
            report.findings = report.findings.merge(end.findings);
            report.bad_hint = report.bad_hint.or(end.bad_hint);
            // (After a failed hold, the stdout pump writes to stderr: not stdout's reader.)
            report.stdout_closed |= name == "stdout" && end.sink_closed && end.hold_error.is_none();
            if let Some(e) = end.hold_error {
                report.held = None;
                report.faults.push(format!(
                    "cannot hold the stdout of attempt {attempt} for --stdout-on-success: {e}; \
                     it went to stderr instead"
                ));
            }
            if let Some(e) = end.write_error {
                report.faults.push(format!(
                    "cannot write the {name} of attempt {attempt}: {e}; the rest of it is lost"
                ));
            }
            if name == "stdout" {
                report.rest.stdout = end.rest;
            } else {
                report.rest.stderr = end.rest;
            }
        }
        report
    }
}
