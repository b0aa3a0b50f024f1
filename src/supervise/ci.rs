//! The run as the CI system it runs under is told of it ([`crate::ci`]): a fold opened before
//! each attempt starts and closed once its output has all been written, before retry's own
//! line about it (the attempt known to be the last is not folded away); and at the end, for GitHub Actions, the annotation (a `::warning` after a
//! success that needed retries, an `::error` on giving up), the step outputs `attempts` and
//! `status` appended to `$GITHUB_OUTPUT`, and the table of the attempts appended to
//! `$GITHUB_STEP_SUMMARY` when the run needed retries or gave up. Outside CI, or with
//! `--no-ci` (`--no-github` for GitHub Actions), nothing is recorded or written.
//!
//! Markers and annotations are written through retry's one writer ([`crate::report`]), so
//! `--chronic` holds them with the rest.

use std::time::{Duration, SystemTime};

use super::Supervisor;
use crate::ci::github::{RunSummary, annotation, append_outputs};
use crate::ci::summary::{self, Row};
use crate::hints::HintSource;
use crate::process::Outcome;
use crate::report::escape;
use crate::status::Exit;

impl Supervisor<'_> {
    /// Attempt `attempt` is about to start: opens its fold; `last` when it is known to be the
    /// run's last ([`Supervisor::known_last`]), whose output is not folded away.
    pub(super) fn fold_open(&self, attempt: u64, last: bool) {
        let Some(folds) = self.config.ci.folds else {
            return;
        };
        self.fold_close();
        let label = self.reporter.label(attempt);
        let marker = folds.open(attempt, &label, &self.run_id, SystemTime::now(), last);
        self.reporter.writer().raw(marker.as_bytes());
        self.open_fold.set(Some((attempt, last)));
    }

    /// The open fold's attempt has ended and its output has all been written: closes it.
    /// Does nothing when no fold is open, so every path may call it.
    pub(super) fn fold_close(&self) {
        let (Some(folds), Some((attempt, last))) = (self.config.ci.folds, self.open_fold.take())
        else {
            return;
        };
        if let Some(marker) = folds.close(attempt, &self.run_id, SystemTime::now(), last) {
            self.reporter.writer().raw(marker.as_bytes());
        }
    }

    /// Attempt `attempt` ended with `status` (1 for an exit status 0 that failed by its
    /// output) after running `ran`: recorded for GitHub Actions.
    pub(super) fn record_attempt(
        &self,
        attempt: u64,
        status: u8,
        outcome: &Outcome,
        ran: Duration,
        output_failed: bool,
    ) {
        let Some(github) = &self.config.ci.github else {
            return;
        };
        self.statuses.borrow_mut().push(status);
        if github.summary.is_some() {
            self.rows.borrow_mut().push(Row {
                attempt,
                status: crate::report::outcome_words(outcome, output_failed),
                duration: crate::duration::format_human(ran),
                ..Row::default()
            });
        }
    }

    /// The last attempt recorded is followed by a wait of `delay`, which `hint` set if any.
    pub(super) fn record_wait(&self, delay: Duration, hint: Option<HintSource>) {
        if let Some(row) = self.rows.borrow_mut().last_mut() {
            row.delay = Some(crate::duration::format_human(delay));
            row.hint = hint.map(|h| h.to_string());
        }
    }

    /// The run ends with `exit` (after the metrics file): closes a fold left open, tells the
    /// CI system, and returns how retry must end. First what may still fail (the step summary,
    /// then the step outputs, each given the status as it stands), then the annotation, which
    /// gives the status retry exits with. A file that cannot be appended is reported on one
    /// line and turns a success into 125; any other ending keeps its status.
    pub(super) fn finish_run(&self, exit: Exit) -> Exit {
        self.fold_close();
        let gave_up = self.gave_up.borrow().clone();
        if gave_up.is_some()
            && let Some(marker) = self.config.ci.folds.and_then(|f| f.gave_up())
        {
            self.reporter.writer().raw(marker.as_bytes());
        }
        let Some(github) = &self.config.ci.github else {
            return exit;
        };
        let mut exit = exit;
        let attempts = self.statuses.borrow().count();
        let mut failed = false;
        let closing = self.closing.borrow().clone();
        if let (Some(path), Some(closing)) = (&github.summary, closing)
            && (attempts > 1 || gave_up.is_some() || self.late_failure.borrow().is_some())
        {
            let closing = match self.late_failure.borrow().as_deref() {
                Some(why) => format!(
                    "{closing}; but retry exits with status {}: {why}",
                    exit.code()
                ),
                None => closing,
            };
            let text = summary::markdown(
                self.reporter.command_for_summary(),
                &self.rows.borrow(),
                &closing,
            );
            if let Err(e) = summary::append(path, &text, self.reporter.writer().patience()) {
                let error = format!(
                    "cannot append the step summary to GITHUB_STEP_SUMMARY ({}): {e}",
                    escape(&path.display().to_string())
                );
                self.reporter.error(&error);
                exit = self.failed_late(exit, &error);
                failed = true;
            }
        }
        if let Some(path) = &github.output
            && let Err(e) = append_outputs(
                path,
                attempts,
                exit.code(),
                self.reporter.writer().patience(),
            )
        {
            let error = format!(
                "cannot append the step outputs to GITHUB_OUTPUT ({}): {e}",
                escape(&path.display().to_string())
            );
            self.reporter.error(&error);
            exit = self.failed_late(exit, &error);
            failed = true;
        }
        let late_failure = self.late_failure.borrow().clone();
        let succeeded = gave_up.is_none() && (exit == Exit::Code(0) || late_failure.is_some());
        if github.annotations && (succeeded || gave_up.is_some()) {
            let program = self
                .config
                .command
                .first()
                .map(|p| escape(&p.to_string_lossy()))
                .unwrap_or_default();
            let run = RunSummary {
                program: &program,
                statuses: &self.statuses.borrow(),
                status: exit.code(),
                gave_up: gave_up.as_deref(),
                failed_late: late_failure.as_deref(),
            };
            if let Some(line) = annotation(&run) {
                self.reporter.writer().raw(format!("{line}\n").as_bytes());
            }
        }
        // Stopped while the reader did not read: retry ends by the signal, at once.
        if failed && let Some(signal) = self.queued_stop_signal() {
            return Exit::Signal(signal);
        }
        exit
    }
}
