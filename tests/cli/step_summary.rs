//! GitHub Actions' step summary: when a run needed retries or gave up, a Markdown table of its
//! attempts is appended to `GITHUB_STEP_SUMMARY` under a heading naming the command, read back
//! here as GitHub-flavoured Markdown (a table's rows split on unescaped `|`, backslash escapes
//! undone): nothing in the command can end a cell or a row. A first-attempt success writes
//! nothing; a file that cannot be written is reported and is never an exit 0.

use std::path::Path;

use crate::helpers::{retry, timeless};

/// A GFM table as read back: the heading before it, the header cells, the rows' cells, and
/// the paragraph after it.
#[derive(Debug)]
struct Table {
    heading: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    after: String,
}

/// The cells of one table row: split on `|` not escaped by a backslash, the outer pipes
/// dropped, each cell trimmed and its backslash escapes undone (GFM: a backslash before ASCII
/// punctuation stands for that character).
fn cells(row: &str) -> Vec<String> {
    let inner = row
        .trim()
        .strip_prefix('|')
        .and_then(|r| r.strip_suffix('|'))
        .unwrap_or_else(|| panic!("not a table row: {row:?}"));
    let mut out = vec![String::new()];
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) if n.is_ascii_punctuation() => out.last_mut().unwrap().push(n),
                Some(n) => {
                    out.last_mut().unwrap().push('\\');
                    out.last_mut().unwrap().push(n);
                }
                None => out.last_mut().unwrap().push('\\'),
            },
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Backslash escapes undone in a paragraph or heading.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek() {
            Some(&n) if c == '\\' && n.is_ascii_punctuation() => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// Reads the one summary block in `text`: `### heading`, a blank line, the table (a header,
/// a delimiter row of `---`, rows), a blank line, a paragraph.
fn parse(text: &str) -> Table {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let heading = lines.next().unwrap().strip_prefix("### ").unwrap();
    assert_eq!(lines.next(), Some(""), "{text}");
    let header = cells(lines.next().unwrap());
    let delimiter = cells(lines.next().unwrap());
    assert_eq!(delimiter.len(), header.len(), "{text}");
    assert!(
        delimiter
            .iter()
            .all(|d| d.trim_matches(':').chars().all(|c| c == '-') && d.contains("---")),
        "{text}"
    );
    let mut rows = Vec::new();
    for line in lines.by_ref() {
        if line.is_empty() {
            break;
        }
        let row = cells(line);
        assert_eq!(row.len(), header.len(), "a row split or merged: {line:?}");
        rows.push(row);
    }
    let after: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
    Table {
        heading: unescape(heading),
        header,
        rows,
        after: unescape(&after.join(" ")),
    }
}

/// Runs `retry ARGS` under GitHub Actions with `GITHUB_STEP_SUMMARY=summary`; returns the
/// status and stderr.
fn in_actions(summary: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = retry()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", summary)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_run_that_needed_retries_appends_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "Earlier step's text.\n").unwrap();
    // Attempt 1 asks for a 50 ms wait (named as the hint that set it), attempt 2 fails at
    // once, attempt 3 succeeds.
    let script = "case $RETRY_ATTEMPT in 1) echo 'wait 0.05'; exit 3;; 2) exit 4;; esac";
    let (code, stderr) = in_actions(
        &summary,
        &[
            "-b",
            "0",
            "--delay-from-output",
            "^wait (.*)$",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&summary).unwrap();
    let rest = text.strip_prefix("Earlier step's text.\n").unwrap();
    let table = parse(rest);
    assert_eq!(table.heading, "retry: sh");
    assert_eq!(
        table.header,
        ["attempt", "status", "duration", "delay after", "hint"]
    );
    assert_eq!(table.rows.len(), 3, "{text}");
    let column = |i: usize| -> Vec<&str> { table.rows.iter().map(|r| r[i].as_str()).collect() };
    assert_eq!(column(0), ["1", "2", "3"]);
    assert_eq!(
        column(1),
        [
            "exited with status 3",
            "exited with status 4",
            "exited with status 0"
        ]
    );
    assert!(column(2).iter().all(|d| d.ends_with('s')), "{text}");
    let delay = &table.rows[0][3];
    assert!(delay.ends_with("ms") && !delay.starts_with('0'), "{text}");
    assert_eq!(&table.rows[1][3], "0s");
    assert_eq!(&table.rows[2][3], "");
    assert_eq!(column(4), ["--delay-from-output", "", ""]);
    // Its closing line, as a sentence, as retry said it.
    let closing = stderr
        .lines()
        .find_map(|l| l.strip_prefix("retry: succeeded"))
        .unwrap();
    assert_eq!(table.after, format!("Succeeded{closing}"));
    assert!(timeless(&stderr).contains("succeeded on attempt 3 of 6 after T"));
}

#[test]
fn giving_up_appends_it_and_a_first_success_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let (code, _) = in_actions(&summary, &["--", "true"]);
    assert_eq!(code, Some(0));
    assert!(!summary.exists(), "a first-attempt success wrote a summary");
    let (code, stderr) = in_actions(&summary, &["-n", "0", "--", "sh", "-c", "exit 9"]);
    assert_eq!(code, Some(9), "{stderr}");
    let table = parse(&std::fs::read_to_string(&summary).unwrap());
    assert_eq!(
        table.rows,
        [["1", "exited with status 9", &table.rows[0][2], "", ""]]
    );
    assert!(
        table.after.starts_with("Gave up after 1 attempt in ")
            && table.after.ends_with(": no retries left"),
        "{table:?}"
    );
    // --no-github and --no-ci leave it alone.
    for off in ["--no-github", "--no-ci"] {
        let other = dir.path().join(off);
        let (code, _) = in_actions(&other, &[off, "-n", "0", "--", "false"]);
        assert_eq!(code, Some(1));
        assert!(!other.exists(), "{off}");
    }
}

#[test]
fn pipes_and_newlines_in_the_command_stay_in_their_cell() {
    let dir = tempfile::tempdir().unwrap();
    // A program whose name holds a pipe, a newline, Markdown and HTML.
    let name = "we|ird\n| x | y |\n<b>*bold*<i>";
    let program = dir.path().join(name);
    std::fs::write(&program, "#!/bin/sh\nexit 2\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let summary = dir.path().join("summary.md");
    let program_arg = program.to_str().unwrap();
    let (code, stderr) = in_actions(
        &summary,
        &["-v", "-n", "1", "-b", "0", "--", program_arg, "a|b", "c\nd"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    let text = std::fs::read_to_string(&summary).unwrap();
    let table = parse(&text);
    assert_eq!(table.rows.len(), 2, "{text}");
    // The heading: the command line as --verbose shows it (quoted), every control character
    // escaped, nothing interpreted.
    assert!(!table.heading.contains('\n'));
    assert!(
        table.heading.contains("we|ird\\n| x | y |\\n<b>*bold*<i>"),
        "{text}"
    );
    assert!(table.heading.ends_with(" 'a|b' $'c\\nd'"), "{text}");
    assert!(!text.contains("<b>") && !text.contains("| x |"), "{text}");
}

#[test]
fn a_summary_that_cannot_be_written_is_never_an_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("no-such-dir/summary.md");
    let until_2 = "test $RETRY_ATTEMPT -ge 2 || exit 3";
    let (code, stderr) = in_actions(&summary, &["-b", "0", "--", "sh", "-c", until_2]);
    assert_eq!(code, Some(125), "{stderr}");
    let complaint: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("GITHUB_STEP_SUMMARY"))
        .collect();
    assert_eq!(complaint.len(), 1, "{stderr}");
    assert!(
        complaint[0].starts_with("retry: cannot append the step summary to GITHUB_STEP_SUMMARY ("),
        "{stderr}"
    );
    // A failure keeps its own status.
    let (code, stderr) = in_actions(&summary, &["-n", "0", "--", "sh", "-c", "exit 7"]);
    assert_eq!(code, Some(7), "{stderr}");
    assert!(
        stderr.contains("cannot append the step summary"),
        "{stderr}"
    );
    // A FIFO nobody reads is an error at once, not a wait.
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let started = std::time::Instant::now();
    let (code, stderr) = in_actions(&fifo, &["-b", "0", "--", "sh", "-c", until_2]);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
