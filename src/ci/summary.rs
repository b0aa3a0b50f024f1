//! GitHub Actions' step summary: when a run needed retries or gave up, a Markdown table of its
//! attempts (number, status, duration, the delay after it, the server's hint that set that
//! delay) under a heading naming the command, with the closing line under it, appended to the
//! file `$GITHUB_STEP_SUMMARY` names ("Adding a job summary" in GitHub's workflow commands
//! documentation, <https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions#adding-a-job-summary>).
//!
//! The text is GitHub-flavoured Markdown (<https://github.github.com/gfm/#tables-extension->).
//! Everything that may come from outside (the command, a reason that quotes a key or a
//! server) is escaped: control characters as retry escapes them everywhere
//! ([`crate::report::escape`], so a newline is `\n` and cannot end a row), then every Markdown
//! punctuation character with a backslash (GFM lets any ASCII punctuation be escaped so), `|`
//! included, so no cell can end early or hold a link, an image or HTML.

use std::io;
use std::path::Path;

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

/// The Markdown block for a run of `command` (as progress names it) whose attempts are `rows`
/// and whose closing line (without `retry: `) is `closing`: a blank line, a heading, the
/// table, the closing line, a blank line.
pub fn markdown(command: &str, rows: &[Row], closing: &str) -> String {
    let mut text = format!(
        "\n### retry: {}\n\n| attempt | status | duration | delay after | hint |\n\
         | ---: | --- | ---: | ---: | --- |\n",
        escape_markdown(command)
    );
    for row in rows {
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
/// reader past a stop signal ([`crate::outlet::append`]).
///
/// # Errors
/// When the file cannot be opened or written.
pub fn append(path: &Path, text: &str) -> io::Result<()> {
    crate::outlet::append(path, text.as_bytes())
}

/// `text` safe in a Markdown paragraph or table cell: control characters escaped as
/// [`crate::report::escape`] does, then a backslash before every character Markdown gives a
/// meaning inline (and `|`, which ends a cell).
pub fn escape_markdown(text: &str) -> String {
    let shown = crate::report::escape(text);
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
        let rows = [
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
        ];
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
    fn nothing_from_outside_can_end_a_cell_or_a_row() {
        assert_eq!(escape_markdown("a|b\nc"), r"a\|b\\nc");
        assert_eq!(
            escape_markdown("<img src=x>[l](u) *e* `c` # &amp;"),
            r"\<img src=x\>\[l\](u) \*e\* \`c\` \# \&amp;"
        );
    }
}
