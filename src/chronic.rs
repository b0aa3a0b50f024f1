//! `--chronic` as an observer of the run ([`crate::observe`]): at the end, what was held is
//! dropped if the run succeeded, and written out in order otherwise, in a thread the run waits
//! for while still hearing signals ([`crate::observe::Running::wait_tasks`]): a reader that
//! does not read keeps retry waiting no longer than a stop signal (even one read before the
//! write-out, [`crate::observe::Event::Stopped`]) and a short grace while the outputs take
//! bytes. moreutils' `chronic` (<https://joeyh.name/code/moreutils/>) is the model.
//!
//! First the record is sealed, so that whatever retry says from then on (the line before the
//! write-out saying how much was dropped, an error after it) is written, not held. The closing
//! line (gave up, or stopped by a signal) was kept apart ([`crate::report::Writer::release_closing`]):
//! it follows the write-out, and `--max-output` never drops it. A write error is reported and
//! never ends in 0; a stop signal that comes while the write-out is still going (or that
//! stopped the run) ends retry by that signal.

use std::rc::Rc;

use crate::codes::signal_name;
use crate::observe::{End, Event, Observer, RunResult};
use crate::pipeline::RunIo;
use crate::report::Reporter;
use crate::size::{format_size, format_size_roughly};
use crate::status::Exit;

/// `--chronic`'s end of a run.
pub struct Chronic<'a> {
    io: &'a RunIo,
    /// retry's reporter, whose writer holds the closing words until the held output is
    /// settled.
    reporter: Rc<Reporter>,
    /// `--max-output`, for the line saying why output was dropped.
    max_output: Option<u64>,
    /// The stop signal that ended the run ([`Event::Stopped`]), even when retry exits with the
    /// last attempt's own status (it had ended before the signal came).
    stopped_by: Option<i32>,
}

impl<'a> Chronic<'a> {
    /// The end of a run whose output `io` holds (`None` when it holds none: no `--chronic`),
    /// whose words `reporter` says; `max_output` is `--max-output`.
    pub fn new(
        io: &'a RunIo,
        reporter: Rc<Reporter>,
        max_output: Option<u64>,
    ) -> Option<Chronic<'a>> {
        io.held()?;
        Some(Chronic {
            io,
            reporter,
            max_output,
            stopped_by: None,
        })
    }
}

impl Observer for Chronic<'_> {
    fn event(&mut self, event: &Event<'_>) {
        if let Event::Stopped(signal) = event {
            self.stopped_by = Some(*signal);
        }
    }

    /// Drops or writes out what was held; `end.exit` stays, unless the write-out failed (125
    /// for a success) or a stop signal cut it (that signal).
    fn finish(&mut self, end: &mut End<'_>) {
        let Some(held) = self.io.held() else {
            return;
        };
        held.seal();
        // A run that gave up is shown even when it ends with 0: `--forever`'s crash loop of
        // runs that exited 0, or its --stop-if-output after a success.
        if end.exit == Exit::Code(0) && end.result != RunResult::GaveUp {
            held.clear();
            self.reporter.writer().release_closing(false);
            return;
        }
        let run = end.run;
        let dropped = held.dropped();
        if dropped > 0 {
            let amount = match format_size_roughly(dropped) {
                rough if rough.ends_with("bytes") || rough.ends_with("byte") => rough,
                rough => format!("{rough} ({dropped} bytes)"),
            };
            let were = if dropped == 1 { "was" } else { "were" };
            // Why: the temporary file failed (memory alone holds less), or --max-output.
            let why = match held.trouble() {
                Some(trouble) => format!(
                    "--chronic could hold only the most recent {} in memory: {trouble}",
                    format_size(crate::held::MEMORY_LIMIT)
                ),
                None => format!(
                    "--chronic keeps the most recent {} (--max-output)",
                    self.max_output.map_or("unlimited".to_string(), format_size)
                ),
            };
            end.voice.warning(&format!(
                "the first {amount} of the output {were} dropped: {why}"
            ));
        }
        // A run stopped by a signal has only the grace left for its write-out.
        let stopped = match end.exit {
            Exit::Signal(n) if run.stop_arrived() => Some(n),
            _ => self.stopped_by,
        };
        let mut interrupted = stopped;
        let write_out = match self.io.write_out() {
            Ok(Some(write_out)) => write_out,
            Ok(None) => {
                self.reporter.writer().release_closing(true);
                return;
            }
            Err(e) => {
                end.voice
                    .error(&format!("cannot write out the output --chronic held: {e}"));
                self.reporter.writer().release_closing(true);
                end.exit = never_0(end.exit);
                return;
            }
        };
        run.wait_tasks(write_out.tasks(), &mut interrupted);
        // The give-up (or stopped) line last, after all that was held.
        self.reporter.writer().release_closing(true);
        let came = interrupted.filter(|_| stopped.is_none());
        let Some((out, err)) = write_out.result() else {
            let signal = interrupted.unwrap_or(libc::SIGTERM);
            end.voice.error(&format!(
                "stopped by {} while the output --chronic held was being written: the rest of \
                 it is dropped",
                signal_name(signal)
            ));
            end.exit = Exit::Signal(signal);
            return;
        };
        let mut failed = false;
        for (result, to) in [(out, "stdout"), (err, "stderr")] {
            if let Err(e) = result {
                end.voice.error(&format!(
                    "cannot write the output --chronic held to {to}: {e}; the rest of it is lost"
                ));
                failed = true;
            }
        }
        end.exit = match came {
            Some(signal) => Exit::Signal(signal),
            None if failed => never_0(end.exit),
            None => end.exit,
        };
    }
}

/// `exit`, but 125 (retry's own failure) for a success: output that could not be written out
/// must not end in 0.
fn never_0(exit: Exit) -> Exit {
    if exit == Exit::Code(0) {
        Exit::OwnFailure
    } else {
        exit
    }
}
