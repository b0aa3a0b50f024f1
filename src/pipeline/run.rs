//! The pipeline I/O of a whole run ([`RunIo`]): the stdin recording, where each stream goes, and
//! the threads started for each attempt's pipes.

use std::fs::File;
use std::io;
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::activity::Activity;
use super::attempt::AttemptIo;
use super::matcher::Rules;
use super::os::{self, Cancel, Source, grow_pipe, same_file};
use super::out::Out;
use super::pump::{PumpEnd, Sink, pump};
use super::replay;
use super::settings::Settings;
use super::tasks::Tasks;
use crate::held::{Held, Stream};
use crate::process::Piped;
use crate::spool::Spool;

/// Pipeline I/O for a whole run: the stdin recording and what each attempt needs.
#[derive(Debug)]
pub struct RunIo {
    pub(super) replay: Option<Arc<Spool>>,
    pub(super) rules: Option<Arc<Rules>>,
    pub(super) hold_stdout: bool,
    /// `--idle-timeout`: stdout and stderr are piped so that their output can be timed.
    pub(super) watch_idle: bool,
    /// `--chronic`: the run's held output, where every stream goes.
    pub(super) held: Option<Arc<Held>>,
    /// retry reads both of an attempt's outputs ([`Settings::reads_output`]: `--chronic`, CI
    /// folds, an output condition, `--http-hints`, `--idle-timeout`) without
    /// `--stdout-on-success`, and retry's stdout and stderr are one file, pipe or terminal
    /// ([`same_file`]): an attempt gets one pipe for both, so its output is passed on, held and
    /// written out in the exact order it was written (two pipes are read by two threads, which
    /// cannot tell which of two writes came first). Its lines are then matched as that one
    /// stream shows them, as the terminal or file does.
    pub(super) merged: bool,
    /// CI folds are on ([`Settings::end_lines`]): each pump ends the last line it passed on
    /// with a newline if the attempt left it without one, so that the fold's end marker, and
    /// retry's line after it, start a line of the log.
    pub(super) end_lines: bool,
    pub(super) stdout: Arc<File>,
    pub(super) stderr: Arc<File>,
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
                transient: pipeline
                    .transient
                    .then(|| Arc::new(crate::transient::Classifier::built_in())),
                transient_patterns: pipeline.transient_patterns.clone(),
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
            merged: pipeline.reads_output()
                && !pipeline.stdout_on_success
                && same_file(&io::stdout(), &io::stderr()),
            end_lines: pipeline.end_lines,
            stdout: Arc::new(os::dup(&io::stdout())?),
            stderr: Arc::new(os::dup(&io::stderr())?),
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
    pub(super) fn live(&self, stream: Stream) -> Out {
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
        if let Some(pipe) = &stdin {
            grow_pipe(pipe);
        }
        if let Some(pipe) = &stdout {
            grow_pipe(pipe);
        }
        if let Some(pipe) = &stderr {
            grow_pipe(pipe);
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

    pub(super) fn spawn_pump(
        &self,
        tasks: &Tasks,
        name: &str,
        source: Source,
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
}
