//! The end of a run as GitHub Actions is told of it ([`crate::github`]): the statuses of the
//! attempts, a `::warning` after a success that needed retries, an `::error` on giving up, and
//! the step outputs `attempts` and `status` appended to `$GITHUB_OUTPUT`. Outside GitHub
//! Actions, or with `--no-github`, nothing is recorded or written.

use super::Supervisor;
use crate::github::{RunSummary, annotation, append_outputs};
use crate::report::escape;
use crate::status::Exit;

impl Supervisor<'_> {
    /// An attempt ended with `status` (1 for an exit status 0 that failed by its output).
    pub(super) fn record_status(&self, status: u8) {
        if self.config.github.is_some() {
            self.statuses.borrow_mut().push(status);
        }
    }

    /// The run ends with `exit`: tells GitHub Actions, and returns how retry must end. A step
    /// output that cannot be appended is reported on one line and turns a success into 125;
    /// any other ending keeps its status.
    pub(super) fn finish_run(&self, exit: Exit) -> Exit {
        let Some(github) = &self.config.github else {
            return exit;
        };
        let statuses = self.statuses.borrow();
        let gave_up = self.gave_up.borrow();
        let attempts = statuses.len() as u64;
        let succeeded = exit == Exit::Code(0) && gave_up.is_none();
        if github.annotations && (succeeded || gave_up.is_some()) {
            let program = self
                .config
                .command
                .first()
                .map(|p| escape(&p.to_string_lossy()))
                .unwrap_or_default();
            let run = RunSummary {
                program: &program,
                attempts,
                statuses: &statuses,
                status: exit.code(),
                gave_up: gave_up.as_deref(),
            };
            if let Some(line) = annotation(&run) {
                // Nothing better can be done if stderr itself fails: its errors go there.
                let _ = crate::outlet::stderr(format!("{line}\n").as_bytes());
            }
        }
        if let Some(path) = &github.output
            && let Err(e) = append_outputs(path, attempts, exit.code())
        {
            self.reporter.error(&format!(
                "cannot append the step outputs to GITHUB_OUTPUT ({}): {e}",
                escape(&path.display().to_string())
            ));
            // Stopped while the reader did not read: retry ends by the signal, at once.
            if let Some(signal) = self.queued_stop_signal() {
                return Exit::Signal(signal);
            }
            if succeeded {
                return Exit::OwnFailure;
            }
        }
        exit
    }
}
