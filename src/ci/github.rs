//! GitHub Actions: each attempt's output in a `::group::attempt N of M` ... `::endgroup::`
//! fold, a `::warning` when a step passed only after retries, an `::error` when retry gave up,
//! the step outputs `attempts` and `status` appended to `$GITHUB_OUTPUT`, and the table of the
//! attempts appended to `$GITHUB_STEP_SUMMARY` ([`super::summary`]).
//!
//! Formats from GitHub's "Workflow commands for GitHub Actions"
//! (<https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions>) and the
//! escaping of the actions toolkit (`packages/core/src/command.ts` in
//! <https://github.com/actions/toolkit>): in a message `%`, `\r` and `\n` become `%25`, `%0D`,
//! `%0A`; in a property `:` and `,` are escaped too. GitHub documents stdout as the channel;
//! the runner reads workflow commands from a step's stderr as well, and retry writes them
//! there so a pipeline's stdout carries only the command's data.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use super::Folds;

/// What retry tells GitHub Actions, read from the environment once at start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitHub {
    /// `GITHUB_ACTIONS` is `true`: print workflow commands.
    pub annotations: bool,
    /// `GITHUB_OUTPUT` (only when running under GitHub Actions): the step-output file.
    pub output: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: the file of the step's Markdown summary.
    pub summary: Option<PathBuf>,
}

impl GitHub {
    /// Reads `GITHUB_ACTIONS`, `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` through `var`; `None`
    /// outside GitHub Actions or when `disabled` (`--no-github`).
    pub fn from_env(disabled: bool, var: impl Fn(&str) -> Option<String>) -> Option<GitHub> {
        if disabled || var("GITHUB_ACTIONS").as_deref() != Some("true") {
            return None;
        }
        let path = |name: &str| var(name).filter(|p| !p.is_empty()).map(PathBuf::from);
        Some(GitHub {
            annotations: true,
            output: path("GITHUB_OUTPUT"),
            summary: path("GITHUB_STEP_SUMMARY"),
        })
    }
}

/// GitHub Actions' log groups: `::group::TITLE` and `::endgroup::` (workflow commands,
/// "Grouping log lines"). Groups do not nest: an attempt's own `::group::` lines close ours
/// early, which only changes how the log folds. GitHub shows a group collapsed, so the
/// attempt known to be the last is not in one: its label alone stands on a line before it.
#[derive(Clone, Copy, Debug)]
pub struct Groups;

impl Folds for Groups {
    fn open(&self, _attempt: u64, label: &str, _run: &str, _now: SystemTime, last: bool) -> String {
        if last {
            format!("{}\n", escape_data(label))
        } else {
            format!("::group::{}\n", escape_data(label))
        }
    }

    fn close(&self, _attempt: u64, _run: &str, _now: SystemTime, last: bool) -> Option<String> {
        (!last).then(|| "::endgroup::\n".into())
    }
}

/// How many of a run's first attempts' statuses the annotation lists.
pub const FIRST_STATUSES: usize = 10;
/// How many of a run's last attempts' statuses the annotation lists: with [`FIRST_STATUSES`]
/// and the bounds on the other parts ([`annotation`]), the line stays under 4 KiB however long
/// an unlimited run goes on (`-n unlimited -d 10m` made megabytes of one line).
pub const LAST_STATUSES: usize = 10;
/// The most bytes of the program's name that the annotation quotes (twice: in the title and
/// the message; escaping may triple them).
const PROGRAM_BYTES: usize = 200;
/// The most bytes of a reason that the annotation quotes (escaping may triple them).
const REASON_BYTES: usize = 600;

/// Each attempt's status as the run goes, for the annotation: the first [`FIRST_STATUSES`]
/// and the last [`LAST_STATUSES`], how many there were, and whether any was not 0; memory
/// stays bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Statuses {
    first: Vec<u8>,
    last: std::collections::VecDeque<u8>,
    count: u64,
    any_failed: bool,
}

impl Statuses {
    /// Adds the status of the attempt that just ended (exit code, 128 + N for a signal,
    /// 124/137 when stopped, 1 for an exit 0 that failed by its output).
    pub fn push(&mut self, status: u8) {
        self.count += 1;
        self.any_failed |= status != 0;
        if self.first.len() < FIRST_STATUSES {
            self.first.push(status);
            return;
        }
        if self.last.len() == LAST_STATUSES {
            self.last.pop_front();
        }
        self.last.push_back(status);
    }

    /// The attempts recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether every attempt recorded ended with status 0.
    pub fn all_succeeded(&self) -> bool {
        !self.any_failed
    }

    /// The list as the annotation shows it: `22, 7, 0`, or the first and the last ones with
    /// how many are left out between them (`1, 1, ... (2980 more), 1, 1`).
    pub fn listed(&self) -> String {
        let join =
            |v: &mut dyn Iterator<Item = &u8>| v.map(u8::to_string).collect::<Vec<_>>().join(", ");
        let mut text = join(&mut self.first.iter());
        let omitted = self.count - (self.first.len() + self.last.len()) as u64;
        if omitted > 0 {
            text.push_str(&format!(", ... ({omitted} more)"));
        }
        if !self.last.is_empty() {
            text.push_str(", ");
            text.push_str(&join(&mut self.last.iter()));
        }
        text
    }
}

/// The end of a run, as GitHub is told of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary<'a> {
    /// The program's name (the command's first word).
    pub program: &'a str,
    /// The status of each attempt ([`Statuses`]).
    pub statuses: &'a Statuses,
    /// The status retry ends with.
    pub status: u32,
    /// `None` when the command succeeded; else why retry gave up.
    pub gave_up: Option<&'a str>,
    /// Why retry ends with `status` although the command succeeded (a file written at the
    /// end that could not be); `None` otherwise.
    pub failed_late: Option<&'a str>,
}

/// `text`, cut to at most `bytes` bytes on a character boundary (and `...`) when longer.
fn quoted(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_string();
    }
    let mut at = bytes;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}...", &text[..at])
}

/// The workflow command for this run: a `::warning` when it succeeded after failures, an
/// `::error` when it gave up or when retry failed after the command succeeded, nothing for a
/// success without failures. Bounded: at most [`FIRST_STATUSES`] + [`LAST_STATUSES`]
/// statuses, and [`PROGRAM_BYTES`] of the program's name and [`REASON_BYTES`] of a reason, so
/// the line stays under 4 KiB.
pub fn annotation(run: &RunSummary<'_>) -> Option<String> {
    let statuses = run.statuses.listed();
    let attempts = run.statuses.count();
    let program = quoted(run.program, PROGRAM_BYTES);
    let title = escape_property(&format!("retry: {program}"));
    let s = if attempts == 1 { "" } else { "s" };
    match (run.gave_up, run.failed_late) {
        (None, Some(why)) => Some(format!(
            "::error title={title}::{}",
            escape_data(&format!(
                "{program} succeeded on attempt {attempts}, but retry exits with status {}: \
                 {}; statuses: {statuses}",
                run.status,
                quoted(why, REASON_BYTES)
            ))
        )),
        // A first-attempt success, or successes only (`--successes`, `--until-fail`).
        (None, None) if attempts <= 1 || run.statuses.all_succeeded() => None,
        (None, None) => Some(format!(
            "::warning title={title}::{}",
            escape_data(&format!(
                "{program} succeeded on attempt {attempts} after failures (statuses: \
                 {statuses})"
            ))
        )),
        (Some(why), _) => Some(format!(
            "::error title={title}::{}",
            escape_data(&format!(
                "{program} failed: gave up after {attempts} attempt{s} ({}); statuses: \
                 {statuses}",
                quoted(why, REASON_BYTES)
            ))
        )),
    }
}

/// Appends `attempts=N` and `status=S` to the step-output file at `path`, in one write,
/// without ever waiting for a reader past a stop signal or `patience` (the run's writer's,
/// [`crate::outlet::append`]: a FIFO with no reader is an error at once).
///
/// # Errors
/// When the file cannot be opened or written.
pub fn append_outputs(
    path: &Path,
    attempts: u64,
    status: u32,
    patience: Option<Instant>,
) -> io::Result<()> {
    crate::outlet::append(
        path,
        format!("attempts={attempts}\nstatus={status}\n").as_bytes(),
        patience,
    )
}

/// Escapes a workflow command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ci::tests::env;

    #[test]
    fn only_under_github_actions_and_not_when_disabled() {
        assert_eq!(GitHub::from_env(false, env(&[])), None);
        assert_eq!(
            GitHub::from_env(false, env(&[("GITHUB_ACTIONS", "1")])),
            None
        );
        assert_eq!(
            GitHub::from_env(
                false,
                env(&[("GITHUB_ACTIONS", "true"), ("GITHUB_OUTPUT", "/tmp/o")])
            ),
            Some(GitHub {
                annotations: true,
                output: Some(PathBuf::from("/tmp/o")),
                summary: None,
            })
        );
        assert_eq!(
            GitHub::from_env(true, env(&[("GITHUB_ACTIONS", "true")])),
            None
        );
    }

    fn statuses(list: &[u8]) -> Statuses {
        let mut statuses = Statuses::default();
        for &s in list {
            statuses.push(s);
        }
        statuses
    }

    #[test]
    fn warning_after_retries_error_on_giving_up_nothing_on_first_success() {
        let three = statuses(&[22, 7, 0]);
        let run = RunSummary {
            program: "curl",
            statuses: &three,
            status: 0,
            gave_up: None,
            failed_late: None,
        };
        assert_eq!(
            annotation(&run).unwrap(),
            "::warning title=retry%3A curl::curl succeeded on attempt 3 after failures \
             (statuses: 22, 7, 0)"
        );
        let one = statuses(&[0]);
        let first = RunSummary {
            statuses: &one,
            ..run.clone()
        };
        assert_eq!(annotation(&first), None);
        let two = statuses(&[1, 1]);
        let gave_up = RunSummary {
            statuses: &two,
            status: 1,
            gave_up: Some("no retries left"),
            ..run
        };
        assert_eq!(
            annotation(&gave_up).unwrap(),
            "::error title=retry%3A curl::curl failed: gave up after 2 attempts \
             (no retries left); statuses: 1, 1"
        );
    }

    #[test]
    fn a_success_that_retry_could_not_record_is_an_error_with_the_status() {
        for list in [&[0][..], &[1, 0][..]] {
            let list = statuses(list);
            let run = RunSummary {
                program: "make",
                statuses: &list,
                status: 125,
                gave_up: None,
                failed_late: Some("cannot write --metrics-file m.prom: Is a directory"),
            };
            let n = list.count();
            assert_eq!(
                annotation(&run).unwrap(),
                format!(
                    "::error title=retry%3A make::make succeeded on attempt {n}, but retry exits \
                     with status 125: cannot write --metrics-file m.prom: Is a directory; \
                     statuses: {}",
                    list.listed()
                )
            );
        }
    }

    #[test]
    fn the_annotation_stays_under_4_kib_for_any_run() {
        let mut many = Statuses::default();
        for i in 0..1_000_000u32 {
            many.push((i % 256) as u8);
        }
        assert_eq!(many.count(), 1_000_000);
        let listed = many.listed();
        assert!(
            listed.starts_with("0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (999980 more), "),
            "{listed}"
        );
        assert!(listed.ends_with(", 62, 63"), "{listed}");
        // Every character of a long program name and reason escaped to three.
        let program = "%é".repeat(100_000);
        let why = "\n".repeat(100_000);
        for (gave_up, failed_late) in [(Some(why.as_str()), None), (None, Some(why.as_str()))] {
            let run = RunSummary {
                program: &program,
                statuses: &many,
                status: 125,
                gave_up,
                failed_late,
            };
            let line = annotation(&run).unwrap();
            assert!(line.len() < 4096, "{} bytes", line.len());
            assert!(!line.contains('\n'));
        }
        assert_eq!(statuses(&[1; 20]).listed(), ["1"; 20].join(", "));
        assert_eq!(
            statuses(&[1; 21]).listed(),
            format!(
                "{}, ... (1 more), {}",
                ["1"; 10].join(", "),
                ["1"; 10].join(", ")
            )
        );
        assert_eq!(statuses(&[]).listed(), "");
    }

    #[test]
    fn newlines_cannot_forge_a_second_command() {
        let two = statuses(&[1, 0]);
        let run = RunSummary {
            program: "a\n::error::x,y%",
            statuses: &two,
            status: 0,
            gave_up: None,
            failed_late: None,
        };
        let line = annotation(&run).unwrap();
        assert!(!line.contains('\n'));
        assert!(line.starts_with("::warning title=retry%3A a%0A%3A%3Aerror%3A%3Ax%2Cy%25::"));
    }

    #[test]
    fn outputs_are_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, "before=1\n").unwrap();
        append_outputs(&path, 3, 0, None).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "before=1\nattempts=3\nstatus=0\n"
        );
        assert!(append_outputs(&dir.path().join("no/such/dir"), 1, 0, None).is_err());
    }
}
