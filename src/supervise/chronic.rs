//! `--chronic`'s end of a run: what was held is dropped if the run succeeded, and written out
//! in order otherwise, in a thread the supervisor waits for while still hearing signals (as
//! for a held stdout, [`Supervisor::wait_tasks`]): a reader that does not read keeps retry
//! waiting no longer than a stop signal and [`super::io::IO_GRACE`] after it.
//!
//! First the record is sealed, so that whatever retry says from then on (the line before the
//! write-out saying how much was dropped, an error after it) is written, not held. The closing
//! line (gave up, or stopped by a signal) was kept apart
//! ([`crate::report::Writer::release_closing`]): it follows the write-out, and `--max-output`
//! never drops it. A write
//! error is reported and never ends in 0; a stop signal that comes while the write-out is
//! still going (or that stopped the run) ends retry by that signal.

use super::Supervisor;
use crate::codes::signal_name;
use crate::size::{format_size, format_size_roughly};
use crate::status::Exit;

impl Supervisor<'_> {
    /// The run ends with `exit`: drops or writes out what `--chronic` held; returns how retry
    /// must end (the same, unless the write-out failed or a stop signal cut it).
    pub(super) fn chronic_finish(&self, exit: Exit) -> Exit {
        let Some(io) = &self.io else {
            return exit;
        };
        let Some(held) = io.held() else {
            return exit;
        };
        held.seal();
        if exit == Exit::Code(0) {
            held.clear();
            self.reporter.writer().release_closing(false);
            return exit;
        }
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
                    self.config
                        .pipeline
                        .max_output
                        .map_or("unlimited".to_string(), format_size)
                ),
            };
            self.reporter.warning(&format!(
                "the first {amount} of the output {were} dropped: {why}"
            ));
        }
        // A run stopped by a signal has only the grace left for its write-out.
        let stopped = match exit {
            Exit::Signal(n) if crate::signals::stop_arrived() => Some(n),
            _ => None,
        };
        let mut interrupted = stopped;
        let write_out = match io.write_out() {
            Ok(Some(write_out)) => write_out,
            Ok(None) => {
                self.reporter.writer().release_closing(true);
                return exit;
            }
            Err(e) => {
                self.reporter
                    .error(&format!("cannot write out the output --chronic held: {e}"));
                self.reporter.writer().release_closing(true);
                return never_0(exit);
            }
        };
        self.wait_tasks(write_out.tasks(), &mut interrupted);
        // The give-up (or stopped) line last, after all that was held.
        self.reporter.writer().release_closing(true);
        let came = interrupted.filter(|_| stopped.is_none());
        let Some((out, err)) = write_out.result() else {
            let signal = interrupted.unwrap_or(libc::SIGTERM);
            self.reporter.error(&format!(
                "stopped by {} while the output --chronic held was being written: the rest of \
                 it is dropped",
                signal_name(signal)
            ));
            return Exit::Signal(signal);
        };
        let mut failed = false;
        for (result, to) in [(out, "stdout"), (err, "stderr")] {
            if let Err(e) = result {
                self.reporter.error(&format!(
                    "cannot write the output --chronic held to {to}: {e}; the rest of it is lost"
                ));
                failed = true;
            }
        }
        match came {
            Some(signal) => Exit::Signal(signal),
            None if failed => never_0(exit),
            None => exit,
        }
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
