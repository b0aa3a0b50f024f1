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
use std::time::SystemTime;

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
/// early, which only changes how the log folds.
#[derive(Clone, Copy, Debug)]
pub struct Groups;

impl Folds for Groups {
    fn open(&self, _attempt: u64, label: &str, _run: &str, _now: SystemTime) -> String {
        format!("::group::{}\n", escape_data(label))
    }

    fn close(&self, _attempt: u64, _run: &str, _now: SystemTime) -> Option<String> {
        Some("::endgroup::\n".into())
    }
}

/// The end of a run, as GitHub is told of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary<'a> {
    /// The program's name (the command's first word).
    pub program: &'a str,
    /// Attempts made.
    pub attempts: u64,
    /// The status of each attempt in order (exit code, 128 + N for a signal, 124/137 when
    /// stopped).
    pub statuses: &'a [u8],
    /// The status retry ends with.
    pub status: u8,
    /// `None` when the command succeeded; else why retry gave up.
    pub gave_up: Option<&'a str>,
}

/// The workflow command for this run: a `::warning` when it succeeded after failures, an
/// `::error` when it gave up, nothing for a success without failures.
pub fn annotation(run: &RunSummary<'_>) -> Option<String> {
    let statuses = run
        .statuses
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let title = escape_property(&format!("retry: {}", run.program));
    match run.gave_up {
        // A first-attempt success, or successes only (`--successes`, `--until-fail`).
        None if run.attempts <= 1 || run.statuses.iter().all(|&s| s == 0) => None,
        None => Some(format!(
            "::warning title={title}::{}",
            escape_data(&format!(
                "{} succeeded on attempt {} after failures (statuses: {statuses})",
                run.program, run.attempts
            ))
        )),
        Some(why) => Some(format!(
            "::error title={title}::{}",
            escape_data(&format!(
                "{} failed: gave up after {} attempt{} ({why}); statuses: {statuses}",
                run.program,
                run.attempts,
                if run.attempts == 1 { "" } else { "s" }
            ))
        )),
    }
}

/// Appends `attempts=N` and `status=S` to the step-output file at `path`, in one write,
/// without ever waiting for a reader past a stop signal ([`crate::outlet::append`]: a FIFO
/// with no reader is an error at once).
///
/// # Errors
/// When the file cannot be opened or written.
pub fn append_outputs(path: &Path, attempts: u64, status: u8) -> io::Result<()> {
    crate::outlet::append(
        path,
        format!("attempts={attempts}\nstatus={status}\n").as_bytes(),
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

    #[test]
    fn warning_after_retries_error_on_giving_up_nothing_on_first_success() {
        let run = RunSummary {
            program: "curl",
            attempts: 3,
            statuses: &[22, 7, 0],
            status: 0,
            gave_up: None,
        };
        assert_eq!(
            annotation(&run).unwrap(),
            "::warning title=retry%3A curl::curl succeeded on attempt 3 after failures \
             (statuses: 22, 7, 0)"
        );
        let first = RunSummary {
            attempts: 1,
            statuses: &[0],
            ..run.clone()
        };
        assert_eq!(annotation(&first), None);
        let gave_up = RunSummary {
            attempts: 2,
            statuses: &[1, 1],
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
    fn newlines_cannot_forge_a_second_command() {
        let run = RunSummary {
            program: "a\n::error::x,y%",
            attempts: 2,
            statuses: &[1, 0],
            status: 0,
            gave_up: None,
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
        append_outputs(&path, 3, 0).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "before=1\nattempts=3\nstatus=0\n"
        );
        assert!(append_outputs(&dir.path().join("no/such/dir"), 1, 0).is_err());
    }
}
