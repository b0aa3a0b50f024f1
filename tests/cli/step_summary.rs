//! GitHub Actions' step summary: when a run needed retries or gave up, a Markdown table of its
//! attempts is appended to `GITHUB_STEP_SUMMARY` under a heading naming the command, read back
//! here as GitHub-flavoured Markdown by a CommonMark parser with GitHub's tables
//! (pulldown-cmark): nothing in the command can end a cell or a row, or make HTML or emphasis.
//! A first-attempt success writes nothing; a file that cannot be written is reported and is
//! never an exit 0.

use std::path::Path;

use crate::helpers::{retry, timeless};

/// A GFM table as read back: the heading before it, the header cells, the rows' cells, and
/// the paragraph after it (each as plain text: escapes undone, nothing else inside).
#[derive(Debug, Default)]
struct Table {
    heading: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    after: String,
}

/// Reads the one summary block in `text` with a CommonMark parser that knows GitHub's tables
/// (pulldown-cmark, `ENABLE_TABLES`): a level-3 heading, a table, a paragraph, and nothing
/// else: no HTML, no emphasis, no link, no second table, no other block.
fn parse(text: &str) -> Table {
    use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
    #[derive(PartialEq)]
    enum In {
        Nothing,
        Heading,
        Head,
        Row,
        Paragraph,
    }
    let mut table = Table::default();
    let mut at = In::Nothing;
    let mut blocks = Vec::new();
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                assert_eq!(level, HeadingLevel::H3, "{text}");
                blocks.push("heading");
                at = In::Heading;
            }
            Event::Start(Tag::Table(_)) => blocks.push("table"),
            Event::Start(Tag::TableHead) => at = In::Head,
            Event::Start(Tag::TableRow) => {
                table.rows.push(Vec::new());
                at = In::Row;
            }
            Event::Start(Tag::TableCell) => match at {
                In::Head => table.header.push(String::new()),
                In::Row => table.rows.last_mut().unwrap().push(String::new()),
                _ => panic!("a cell outside a row: {text}"),
            },
            Event::Start(Tag::Paragraph) => {
                blocks.push("paragraph");
                at = In::Paragraph;
            }
            Event::Text(t) => {
                let into = match at {
                    In::Heading => &mut table.heading,
                    In::Head => table.header.last_mut().unwrap(),
                    In::Row => table.rows.last_mut().unwrap().last_mut().unwrap(),
                    In::Paragraph => &mut table.after,
                    In::Nothing => panic!("text outside a block: {t:?} in {text}"),
                };
                into.push_str(&t);
            }
            Event::SoftBreak if at == In::Paragraph => table.after.push(' '),
            Event::End(TagEnd::Heading(_) | TagEnd::TableHead | TagEnd::Paragraph) => {
                at = In::Nothing
            }
            Event::End(TagEnd::TableRow | TagEnd::TableCell | TagEnd::Table) => {}
            other => panic!("not plain text in the summary: {other:?} in {text}"),
        }
    }
    assert_eq!(blocks, ["heading", "table", "paragraph"], "{text}");
    for row in &table.rows {
        assert_eq!(
            row.len(),
            table.header.len(),
            "a row split or merged: {text}"
        );
    }
    table
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
        .filter(|l| l.contains("GITHUB_STEP_SUMMARY") && !l.starts_with("::"))
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

#[test]
fn a_long_run_shows_its_first_and_last_attempts_and_how_many_are_left_out() {
    // 150 attempts: the table keeps the first 20 and the last 80, and says so between them.
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let (code, stderr) = in_actions(
        &summary,
        &["-q", "-b", "0", "-n", "149", "--", "sh", "-c", "exit 5"],
    );
    assert_eq!(code, Some(5), "{stderr}");
    let text = std::fs::read_to_string(&summary).unwrap();
    let table = parse(&text);
    let attempts: Vec<&str> = table.rows.iter().map(|r| r[0].as_str()).collect();
    let expected: Vec<String> = (1..=20)
        .map(|n| n.to_string())
        .chain(["...".to_string()])
        .chain((71..=150).map(|n| n.to_string()))
        .collect();
    assert_eq!(attempts, expected, "{text}");
    assert_eq!(table.rows[20][1], "50 attempts not shown");
    assert!(
        table.after.starts_with("Gave up after 150 attempts in "),
        "{}",
        table.after
    );
}
