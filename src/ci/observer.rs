//! The CI system as an observer of the run ([`crate::observe`]): a fold opened before each
//! attempt starts and closed once its output has all been written, before retry's own line
//! about it (the attempt known to be the last is not folded away); and at the end, for GitHub
//! Actions, the step summary's table appended to `$GITHUB_STEP_SUMMARY` when the run needed
//! retries or gave up, the step outputs `attempts` and `status` appended to `$GITHUB_OUTPUT`,
//! and the annotation (a `::warning` after a success that needed retries, an `::error` on
//! giving up, or when retry exits 125 after a success). Outside CI, or with `--no-ci`
//! (`--no-github` for GitHub Actions), nothing is recorded or written.
//!
//! Markers and annotations are written through retry's one writer ([`crate::report`]), so
//! `--chronic` holds them with the rest.

use std::rc::Rc;
use std::time::SystemTime;

use super::Ci;
use super::github::{RunSummary, Statuses, annotation, append_outputs};
use super::summary::{self, Row, Rows};
use crate::observe::{End, Event, Observer};
use crate::report::{Reporter, escape, outcome_words, why_words, without_os_error};
use crate::status::Exit;

/// What the CI system is told of one run.
pub struct CiObserver {
    ci: Ci,
    /// How folds and lines name an attempt, and the command as the step summary names it.
    reporter: Rc<Reporter>,
    /// The run's id (`RETRY_RUN_ID`), in the folds' markers.
    run_id: String,
    /// The program, escaped, for the annotation.
    program: String,
    /// Each attempt's status: the first and the last ones, and how many there were.
    statuses: Statuses,
    /// Each attempt as the step summary's table shows it (only when there is one to write).
    rows: Rows,
    /// The closing line, once said (without `retry: `), for the step summary.
    closing: Option<String>,
    /// The attempt whose fold is open, and whether it is known to be the last.
    open_fold: Option<(u64, bool)>,
}

impl CiObserver {
    /// Tells `ci` of the run `run_id` of `program` (its name as given), whose lines
    /// `reporter` says.
    pub fn new(ci: Ci, reporter: Rc<Reporter>, run_id: &str, program: &str) -> CiObserver {
        CiObserver {
            ci,
            reporter,
            run_id: run_id.to_string(),
            program: escape(program),
            statuses: Statuses::default(),
            rows: Rows::default(),
            closing: None,
            open_fold: None,
        }
    }

    /// Attempt `attempt` is about to start: opens its fold; `last` when it is known to be the
    /// run's last, whose output is not folded away.
    fn fold_open(&mut self, attempt: u64, last: bool) {
        let Some(folds) = self.ci.folds else {
            return;
        };
        self.fold_close();
        let label = self.reporter.label(attempt);
        let marker = folds.open(attempt, &label, &self.run_id, SystemTime::now(), last);
        self.reporter.writer().raw(marker.as_bytes());
        self.open_fold = Some((attempt, last));
    }

    /// The open fold's attempt has ended and its output has all been written: closes it.
    /// Does nothing when no fold is open, so every event may call it.
    fn fold_close(&mut self) {
        let (Some(folds), Some((attempt, last))) = (self.ci.folds, self.open_fold.take()) else {
            return;
        };
        if let Some(marker) = folds.close(attempt, &self.run_id, SystemTime::now(), last) {
            self.reporter.writer().raw(marker.as_bytes());
        }
    }

    /// The step summary and the step outputs, each given the status as it stands; a file
    /// that cannot be appended is reported on one line and turns a success into 125. Returns
    /// whether one failed.
    fn append_files(&mut self, end: &mut End<'_>) -> bool {
        let Some(github) = &self.ci.github else {
            return false;
        };
        let attempts = self.statuses.count();
        let mut failed = false;
        if let (Some(path), Some(closing)) = (&github.summary, &self.closing)
            && (attempts > 1 || end.gave_up.is_some() || end.late_failure.is_some())
        {
            let closing = match end.late_failure.as_deref() {
                Some(why) => format!(
                    "{closing}; but retry exits with status {}: {}",
                    end.exit.code(),
                    without_os_error(why)
                ),
                None => closing.clone(),
            };
            let text = summary::markdown(self.reporter.command_for_summary(), &self.rows, &closing);
            if let Err(e) = summary::append(path, &text, self.reporter.writer().patience()) {
                end.failed(&format!(
                    "cannot append the step summary to GITHUB_STEP_SUMMARY ({}): {e}",
                    escape(&path.display().to_string())
                ));
                failed = true;
            }
        }
        if let Some(path) = &github.output
            && let Err(e) = append_outputs(
                path,
                attempts,
                end.exit.code(),
                self.reporter.writer().patience(),
            )
        {
            end.failed(&format!(
                "cannot append the step outputs to GITHUB_OUTPUT ({}): {e}",
                escape(&path.display().to_string())
            ));
            failed = true;
        }
        failed
    }
}

impl Observer for CiObserver {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::AttemptStart { attempt, last } => self.fold_open(attempt, last),
            Event::AttemptEnd(a) => {
                let Some(github) = &self.ci.github else {
                    return;
                };
                self.statuses.push(if a.output_failed {
                    1
                } else {
                    a.outcome.status()
                });
                if github.summary.is_some() {
                    let mut status = outcome_words(a.outcome, a.output_failed);
                    if let Some(code) = a.http_status {
                        status.push_str(&format!(", HTTP {code}"));
                    }
                    if let Some(found) = a.transient.filter(|found| !found.is_empty()) {
                        status.push_str(&format!(", transient: {found}"));
                    }
                    self.rows.push(Row {
                        attempt: a.attempt,
                        status,
                        duration: crate::duration::format_human(a.ran),
                        ..Row::default()
                    });
                }
            }
            Event::Wait { delay, hint, .. } => {
                if let Some(row) = self.rows.last_mut() {
                    row.delay = Some(crate::duration::format_human(delay));
                    row.hint = hint.map(|h| h.to_string());
                }
            }
            Event::GaveUp {
                attempts,
                why,
                elapsed,
                ..
            } => {
                self.fold_close();
                let closing = self
                    .reporter
                    .gave_up_line(attempts, &why_words(why), elapsed);
                self.closing = Some(closing);
            }
            Event::Succeeded { attempts, elapsed } => {
                self.closing = Some(self.reporter.success_line(attempts, elapsed));
            }
            Event::OutputSettled | Event::Stopped(_) => self.fold_close(),
            _ => {}
        }
    }

    /// The run ends: closes a fold left open, then first what may still fail (the step
    /// summary, then the step outputs), then the annotation, which gives the status retry
    /// exits with.
    fn finish(&mut self, end: &mut End<'_>) {
        self.fold_close();
        if end.gave_up.is_some()
            && let Some(marker) = self.ci.folds.and_then(|f| f.gave_up())
        {
            self.reporter.writer().raw(marker.as_bytes());
        }
        let failed = self.append_files(end);
        let Some(github) = &self.ci.github else {
            return;
        };
        let late_failure = end.late_failure.as_deref().map(without_os_error);
        let succeeded =
            end.gave_up.is_none() && (end.exit == Exit::Code(0) || late_failure.is_some());
        if github.annotations && (succeeded || end.gave_up.is_some()) {
            let gave_up = end.gave_up.as_ref().map(why_words);
            let run = RunSummary {
                program: &self.program,
                statuses: &self.statuses,
                status: end.exit.code(),
                gave_up: gave_up.as_deref(),
                failed_late: late_failure.as_deref(),
            };
            if let Some(line) = annotation(&run) {
                self.reporter.writer().raw(format!("{line}\n").as_bytes());
            }
        }
        // Stopped while the reader did not read: retry ends by the signal, at once.
        if failed && let Some(signal) = end.run.queued_stop_signal() {
            end.exit = Exit::Signal(signal);
        }
    }
}
