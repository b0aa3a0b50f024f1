//! GitHub Actions' step summary: when a run needed retries or gave up, a Markdown table of its
//! attempts (number, status, duration, the delay after it, the server's hint that set that
//! delay) under a heading naming the command, with the closing line under it, appended to the
//! file `$GITHUB_STEP_SUMMARY` names ("Adding a job summary" in GitHub's workflow commands
//! documentation, <https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions#adding-a-job-summary>).
//!
//! The text is GitHub-flavoured Markdown (<https://github.github.com/gfm/#tables-extension->).
//! Everything that may come from outside (the command, a reason that quotes a key or a
//! server) is escaped: control characters as retry escapes them everywhere
//! ([`crate::escape::escape`], so a newline is `\n` and cannot end a row), then every Markdown
//! punctuation character with a backslash (GFM lets any ASCII punctuation be escaped so), `|`
//! included, so no cell can end early or hold a link, an image or HTML.

use std::io;
use std::path::Path;
use std::time::Instant;

/// One attempt, as the table shows it; every cell is text for people.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// Its number, from 1.
    pub attempt: u64,
    /// How it ended (`exited with status 22`, `timed out (status 124)`).
    pub status: String,
    /// How long it ran (`1.2s`).
    pub duration: String,
    /// The wait after it, if one followed (`2s`).
    pub delay: Option<String>,
    /// The server's hint that set that wait, if one did (`Retry-After`).
    pub hint: Option<String>,
}

/// How many of a run's first attempts the table keeps.
pub const FIRST_ROWS: usize = 20;
/// How many of a run's last attempts the table keeps: with [`FIRST_ROWS`], a table of at most
/// 101 rows (about 10 KB), however long an unlimited run goes on, well under the 1 MiB GitHub
/// takes for a step's summary ("Adding a job summary" in GitHub's workflow commands,
/// <https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands>).
pub const LAST_ROWS: usize = 80;

/// The rows of a run's table as its attempts end: the first [`FIRST_ROWS`] and the last
/// [`LAST_ROWS`], and how many between them were left out; memory stays bounded.
#[derive(Debug, Default)]
pub struct Rows {
    rows: Vec<Row>,
    omitted: u64,
}

impl Rows {
    /// Adds the row of an attempt that ended, dropping the oldest of the last rows kept once
    /// there are [`FIRST_ROWS`] + [`LAST_ROWS`].
    pub fn push(&mut self, row: Row) {
        if self.rows.len() == FIRST_ROWS + LAST_ROWS {
            self.rows.remove(FIRST_ROWS);
            self.omitted += 1;
        }
        self.rows.push(row);
    }

    /// The row of the last attempt, to add the wait after it.
    pub fn last_mut(&mut self) -> Option<&mut Row> {
        self.rows.last_mut()
    }
}

/// The Markdown block for a run of `command` (as progress names it) whose attempts are `rows`
/// and whose closing line (without `retry: `) is `closing`: a blank line, a heading, the
/// table (a row in the middle saying how many attempts are not shown, if any were left out),
/// the closing line, a blank line.
pub fn markdown(command: &str, rows: &Rows, closing: &str) -> String {
    let mut text = format!(
        "\n### retry: {}\n\n| attempt | status | duration | delay after | hint |\n\
         | ---: | --- | ---: | ---: | --- |\n",
        escape_markdown(command)
    );
    for (i, row) in rows.rows.iter().enumerate() {
        if i == FIRST_ROWS && rows.omitted > 0 {
            let n = rows.omitted;
            let s = if n == 1 { "" } else { "s" };
            text.push_str(&format!("| ... | {n} attempt{s} not shown |  |  |  |\n"));
        }
        let cell = |c: &Option<String>| c.as_deref().map(escape_markdown).unwrap_or_default();
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            row.attempt,
            escape_markdown(&row.status),
            escape_markdown(&row.duration),
            cell(&row.delay),
            cell(&row.hint),
        ));
    }
    text.push_str(&format!("\n{}\n\n", escape_markdown(&capitalised(closing))));
    text
}

/// Appends `text` to the summary file at `path`, in one write, without ever waiting for a
/// reader past a stop signal or `patience` (the run's writer's, [`crate::outlet::append`]).
///
/// # Errors
/// When the file cannot be opened or written.
pub fn append(path: &Path, text: &str, patience: Option<Instant>) -> io::Result<()> {
    crate::outlet::append(path, text.as_bytes(), patience)
}

/// `text` safe in a Markdown paragraph or table cell: control characters escaped as
/// [`crate::escape::escape`] does, then a backslash before every character Markdown gives a
/// meaning inline (and `|`, which ends a cell).
pub fn escape_markdown(text: &str) -> String {
    let shown = crate::escape::escape(text);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        if "\\`*_[]<>|#!~&".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` with its first letter in capitals (a closing line as a sentence).
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_a_table_and_the_closing_line() {
        let mut rows = Rows::default();
        for row in [
            Row {
                attempt: 1,
                status: "exited with status 22".into(),
                duration: "1.2s".into(),
                delay: Some("2s".into()),
                hint: Some("Retry-After".into()),
            },
            Row {
                attempt: 2,
                status: "exited with status 0".into(),
                duration: "40ms".into(),
                ..Row::default()
            },
        ] {
            rows.push(row);
        }
        assert_eq!(
            markdown("curl", &rows, "succeeded on attempt 2 of 6 after 3.3s"),
            "\n### retry: curl\n\n\
             | attempt | status | duration | delay after | hint |\n\
             | ---: | --- | ---: | ---: | --- |\n\
             | 1 | exited with status 22 | 1.2s | 2s | Retry-After |\n\
             | 2 | exited with status 0 | 40ms |  |  |\n\
             \nSucceeded on attempt 2 of 6 after 3.3s\n\n"
        );
    }

    #[test]
    fn a_long_run_keeps_its_first_and_last_attempts_and_says_how_many_are_left_out() {
        let mut rows = Rows::default();
        for attempt in 1..=10_000 {
            rows.push(Row {
                attempt,
                status: "exited with status 1".into(),
                duration: "1ms".into(),
                ..Row::default()
            });
        }
        assert_eq!(rows.rows.len(), FIRST_ROWS + LAST_ROWS);
        let text = markdown(
            "x",
            &rows,
            "gave up after 10000 attempts in 1m: no retries left",
        );
        let attempts: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.split(' ').next())
            .skip(2)
            .collect();
        let expected: Vec<String> = (1..=20)
            .map(|n| n.to_string())
            .chain(["...".to_string()])
            .chain((9921..=10_000).map(|n| n.to_string()))
            .collect();
        assert_eq!(attempts, expected);
        assert!(
            text.contains("| ... | 9900 attempts not shown |  |  |  |\n"),
            "{text}"
        );
        assert!(text.len() < 16 * 1024, "{}", text.len());
    }

    #[test]
    fn nothing_from_outside_can_end_a_cell_or_a_row() {
        assert_eq!(escape_markdown("a|b\nc"), r"a\|b\\nc");
        assert_eq!(
            escape_markdown("<img src=x>[l](u) *e* `c` # &amp;"),
            r"\<img src=x\>\[l\](u) \*e\* \`c\` \# \&amp;"
        );
    }
}
