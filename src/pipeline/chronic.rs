//! `--chronic`'s side of the pipeline: a hook's output read into the held output
//! ([`RunIo::capture`]), and the write-out of everything held once the run did not succeed
//! ([`RunIo::write_out`]), in a thread of its own so that a reader that does not read blocks
//! only that thread, never the supervisor.

use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;

use super::activity::Activity;
use super::attempt::AttemptIo;
use super::os::{self, Cancel, Source, grow_pipe};
use super::out::Out;
use super::pump::Sink;
use super::run::RunIo;
use super::tasks::Tasks;
use crate::held::Stream;

/// The write-out of the held output, running in a thread of its own.
#[derive(Debug)]
pub struct WriteOut {
    tasks: Tasks,
    handle: JoinHandle<(io::Result<()>, io::Result<()>)>,
}

impl WriteOut {
    /// The write-out's thread, to wait for.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// How it went: the first write error on stdout and on stderr; `None` if it has not
    /// ended (it is left behind, blocked on a reader).
    pub fn result(self) -> Option<(io::Result<()>, io::Result<()>)> {
        if !self.tasks.done() {
            return None;
        }
        Some(self.handle.join().unwrap_or_else(|_| {
            let panicked = || Err(io::Error::other("the write-out thread panicked"));
            (panicked(), panicked())
        }))
    }
}

impl RunIo {
    /// With `--chronic`, a pipe for a hook's stdout and stderr, read into the held output as
    /// stderr: the pipe's write end (for the hook; close-on-exec) and the thread reading it
    /// (stop it and wait for it as for an attempt's, [`AttemptIo::stop`]). `None` without
    /// `--chronic`: the hook writes to retry's stderr.
    ///
    /// # Errors
    /// When the pipe or the thread cannot be made.
    pub fn capture(&self) -> io::Result<Option<(Source, AttemptIo)>> {
        let Some(held) = &self.held else {
            return Ok(None);
        };
        let (read, write) = os::pipe()?;
        grow_pipe(&read);
        let cancel = Arc::new(Cancel::new()?);
        let activity = Arc::new(Activity::new());
        let tasks = Tasks::new();
        let sink = Sink::Forward(Out::Held(held.clone(), Stream::Stderr));
        let reader = self.spawn_pump(&tasks, "hook-output", read, sink, &activity, &cancel)?;
        let io = AttemptIo {
            cancel,
            activity,
            tasks,
            feeder: None,
            stdout: Some(reader),
            stderr: None,
            held: None,
            replay: None,
        };
        Ok(Some((write, io)))
    }

    /// Starts writing everything `--chronic` held to retry's stdout and stderr, in order
    /// ([`crate::held::Held::write_out`]); seal the record first. `None` without `--chronic`.
    ///
    /// # Errors
    /// When the thread cannot start.
    pub fn write_out(&self) -> io::Result<Option<WriteOut>> {
        let Some(held) = self.held.clone() else {
            return Ok(None);
        };
        let tasks = Tasks::writing_to_outputs();
        let (out, err) = (self.stdout.clone(), self.stderr.clone());
        let handle = tasks.spawn("write-out", move || held.write_out(&out, &err))?;
        Ok(Some(WriteOut { tasks, handle }))
    }
}
