//! What a newcomer meets in the first hour (issue 30), through the release binary: a flag
//! without its value, refused values shown as typed, one human form for durations in text,
//! `--dry-run`'s rows past the twentieth, the pointer to this retry's manual, the jitter modes
//! in the completions, and the documentation's claims and examples.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::helpers::http::{HttpServer, Reply};
use crate::helpers::release::release_bin;
use crate::helpers::{clear_outside_env, dry_run_cells, refused, release};
use crate::tools::{self, require};

/// `retry ARGS` (the release build) refused, naming each of `needles`.
fn refuses(args: &[&str], needles: &[&str]) -> String {
    refused(release().args(args), needles)
}

/// `retry ARGS` with `vars` set (the release build) refused, naming each of `needles`.
fn refuses_env(vars: &[(&str, &str)], args: &[&str], needles: &[&str]) -> String {
    refused(release().envs(vars.iter().copied()).args(args), needles)
}

#[test]
fn a_flag_given_no_value_says_it_needs_one() {
    for (args, flag) in [
        (&["-b", "--", "true"][..], "--base"),
        (&["--cap", "--", "true"], "--cap"),
        (&["-n", "--", "true"], "--max-retries"),
        (&["-s", "--", "true"], "--signal"),
        (&["-j", "--", "true"], "--jitter"),
        (&["--max-output", "--", "true"], "--max-output"),
        (&["--retry-on", "--", "true"], "--retry-on"),
        (&["--lock", "--", "true"], "--lock"),
        (&["--preset", "--", "true"], "--preset"),
        (&["-b"], "--base"),
    ] {
        let line = refuses(args, &[flag, "needs a value"]);
        assert!(!line.contains("invalid value '--'"), "{args:?}: {line}");
    }
    // What looks like the next flag is named as such, with the way to give such a value.
    let line = refuses(&["-b", "-x", "true"], &["--base", "needs a value", "'-x'"]);
    assert!(line.contains("--base=-x"), "{line}");
    let line = refuses(
        &["-t", "--verbose", "true"],
        &["--timeout", "needs a value"],
    );
    assert!(line.contains("'--verbose'"), "{line}");
    // A negative number is a value, refused as one.
    refuses(
        &["-b", "-5", "true"],
        &["--base", "-5", "cannot be negative"],
    );
}

/// The stdout of `retry ARGS` (the release build), which must succeed.
fn stdout(args: &[&str]) -> String {
    let out = release().args(args).assert().success().get_output().clone();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn refused_durations_are_shown_as_typed() {
    refuses(
        &[
            "--breaker",
            "2",
            "--breaker-cooldown",
            "10000y",
            "--",
            "true",
        ],
        &["--breaker-cooldown (10000y)"],
    );
    refuses_env(
        &[("RETRY_BREAKER_COOLDOWN", "101 years")],
        &["--breaker", "2", "--", "true"],
        &["(101 years from RETRY_BREAKER_COOLDOWN)"],
    );
    refuses(
        &["--delays", "1s,5s", "-b", "1000ms", "--", "true"],
        &["--base (1000ms)"],
    );
    refuses(
        &["--lock-wait", "90s", "--", "true"],
        &["--lock-wait (90s)"],
    );
    refuses(
        &["--until-fail", "--reset-after", "1e400", "--", "true"],
        &["--reset-after (1e400)"],
    );
}

#[test]
fn durations_read_as_the_closing_line_writes_them() {
    let table = stdout(&[
        "--dry-run",
        "-j",
        "none",
        "-b",
        "2m",
        "-c",
        "3h",
        "-n",
        "7",
        "-t",
        "90s",
    ]);
    assert!(!table.contains(".000s"), "{table}");
    let rows = dry_run_cells(&table);
    let delays: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let totals: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(
        delays,
        ["2m", "4m", "8m", "16m", "32m", "1h 4m", "2h 8m"],
        "{table}"
    );
    assert_eq!(
        totals,
        ["2m", "6m", "14m", "30m", "1h 2m", "2h 6m", "4h 14m"],
        "{table}"
    );
    assert!(
        table.contains("stop   at --timeout 1m 30s: SIGTERM") && table.contains("KILL 10s later"),
        "{table}"
    );
    // A limit below a microsecond is not shown as 0 (which would mean none).
    let tiny = stdout(&["--dry-run", "-n", "0", "-t", "1e-10000"]);
    assert!(tiny.contains("--timeout 1ns"), "{tiny}");
    let splay = stdout(&["--dry-run", "-n", "1", "--splay", "2h", "--seed", "1"]);
    assert!(!splay.contains(".000s"), "{splay}");
    // Messages too: the wait a deadline cuts short.
    let out = release()
        .args([
            "--delays",
            "30s",
            "-n",
            "3",
            "-d",
            "20s",
            "--successes",
            "2",
            "--",
            "true",
        ])
        .assert()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the next wait (30s)"), "{stderr}");
}

#[test]
fn dry_run_says_how_many_rows_are_not_shown() {
    let table = stdout(&["--dry-run", "-n", "unlimited", "-b", "1ms"]);
    assert_eq!(dry_run_cells(&table).len(), 20, "{table}");
    let last = table.lines().last().unwrap();
    assert!(
        last.contains("not shown") && last.contains("without end"),
        "{table}"
    );
    // With a deadline the rows end: the table says how many more there are, which the same
    // schedule with room for every row shows.
    let args = ["--dry-run", "-j", "none", "-d", "2h"];
    let cut = stdout(&[&args[..], &["-n", "unlimited"]].concat());
    let whole = stdout(&[&args[..], &["-n", "100000"]].concat());
    let all = dry_run_cells(&whole).len();
    assert!(all > 20, "{whole}");
    let said = format!("{} more", all - 20);
    assert!(
        cut.lines().last().unwrap().contains(&said),
        "{said:?}:\n{cut}"
    );
    assert_eq!(dry_run_cells(&cut), dry_run_cells(&whole)[..20]);
    // When every row is shown, nothing is said.
    let short = stdout(&["--dry-run", "-j", "none", "-n", "unlimited", "-d", "15s"]);
    assert!(!short.contains("not shown"), "{short}");
}

#[test]
fn the_manual_is_pointed_to_as_this_retry_prints_it() {
    let short = stdout(&["-h"]);
    assert!(short.lines().count() <= 40, "{short}");
    let long = stdout(&["--help"]);
    // `man retry` only as a warning: it may open another program's page.
    let only_warned = |text: &str| {
        text.replace('\n', " ")
            .split("man retry")
            .skip(1)
            .all(|after| after.trim_start_matches('`').starts_with(" may open"))
    };
    for text in [&short, &long] {
        assert!(text.contains("retry --generate man | man -l -"), "{text}");
        assert!(only_warned(text), "{text}");
    }
    assert!(long.contains("--generate <WHAT>"), "{long}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for page in ["README.md", "docs/usage.md"] {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        assert!(only_warned(&text), "{page}");
        assert!(text.contains("retry --generate man | man -l -"), "{page}");
    }
    // What it points to works (man-db's `man -l`).
    if require(&[tools::MAN]) {
        let out = Command::new("sh")
            .args(["-c", "\"$0\" --generate man | MANPAGER=cat man -l -"])
            .arg(release_bin())
            .env("MANWIDTH", "80")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let page = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        assert!(page.contains("--breaker-cooldown"), "{page}");
    }
}

#[test]
fn the_completions_describe_jitter_modes_in_defined_terms() {
    for shell in ["zsh", "fish", "bash", "elvish", "powershell"] {
        let script = stdout(&["--generate", shell]);
        for undefined in ["(0, v)", "v/2", "v *"] {
            assert!(!script.contains(undefined), "{shell}: {undefined:?}");
        }
    }
}

/// The `retry --http-hints` example of `text` (a line of it), its URL pointed at `url`.
fn http_hints_example(text: &str, url: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("retry --http-hints"))
        .expect("an --http-hints example");
    let line = line.split(" #").next().unwrap().trim();
    let at = line.find("https://").expect("a URL");
    let end = line[at..].find(' ').map_or(line.len(), |e| at + e);
    format!("{}{url}{}", &line[..at], &line[end..])
}

#[test]
fn the_http_hints_examples_keep_stdout_for_the_body() {
    if !require(&[tools::CURL]) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    // The release build first: the server stops answering after the hang limit.
    let help = stdout(&["--help"]);
    let server = HttpServer::start(|_, n, _| match n {
        0 => Reply::new(429, Vec::new()).header("retry-after", "1"),
        _ => Reply::new(200, b"the body".to_vec()),
    });
    let bin_dir = release_bin().parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    // Each on a path of its own: the server's 429 is for a path's first request.
    for (text, route, first) in [(&readme, "readme", 0), (&help, "help", 2)] {
        let dir = tempfile::tempdir().unwrap();
        let script = http_hints_example(text, &format!("{}/{route}", server.url()));
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script])
            .current_dir(dir.path())
            .env("PATH", &path)
            .stdin(Stdio::null());
        clear_outside_env(&mut cmd);
        for (k, _) in std::env::vars_os()
            .filter(|(k, _)| k.to_string_lossy().to_ascii_lowercase().ends_with("_proxy"))
        {
            cmd.env_remove(k);
        }
        let out = cmd.env("RETRY_BASE", "10ms").output().unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{script}: {o} {e}");
        assert_eq!(o, "the body", "{script}: stderr {e}");
        assert!(e.contains("retry-after: 1"), "{script}: {e}");
        assert!(e.contains("(Retry-After)"), "{script}: {e}");
        assert_eq!(server.requests().len(), first + 2, "{script}");
    }
}

#[test]
fn no_page_says_a_tiny_timeout_behaves_as_every_timeout_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        pages.push(entry.unwrap().path());
    }
    for page in pages
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(page).unwrap();
        // Paragraphs, a claim may wrap; a table's rows one by one.
        let rows = text
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(String::from);
        let paragraphs = text.split("\n\n").filter(|p| !p.starts_with('|'));
        for flat in paragraphs.map(|p| p.replace('\n', " ")).chain(rows) {
            if flat.contains("1e-10000") && flat.contains("as with `timeout`") {
                panic!("{}: {flat}", page.display());
            }
            if flat.contains("1e-10000") && flat.contains("`timeout`") {
                assert!(flat.contains("9.7"), "{}: {flat}", page.display());
            }
        }
    }
}

#[test]
fn a_flag_followed_by_an_unknown_flag_is_given_no_value() {
    for (args, flag) in [
        (&["--budget", "-x", "true"][..], "--budget"),
        (&["--lock", "-x", "--", "true"], "--lock"),
        (&["--on-retry", "-zz", "true"], "--on-retry"),
        (&["--preset", "--nope", "true"], "--preset"),
    ] {
        let line = refuses(args, &[flag, "needs a value", "looks like a flag"]);
        assert!(!line.contains("use '-- -"), "{args:?}: {line}");
    }
    refuses(&["-n", "3", "-x", "true"], &["unexpected argument '-x'"]);
}

#[test]
fn a_refused_value_never_drives_the_terminal() {
    use crate::helpers::pty::{read_until_closed, retry_on_pty};
    for args in [
        &["-b", "-x\u{1b}[2J", "true"][..],
        &["-b", "1\u{1b}[2J", "true"],
        &["--budget", "-\u{1b}[2J", "true"],
    ] {
        let (mut child, mut master) = retry_on_pty(args, &[("TERM", "xterm")], 80);
        let out = read_until_closed(&mut master);
        assert_eq!(
            crate::helpers::wait_with_limit(&mut child).code(),
            Some(125)
        );
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("retry: "), "{text:?}");
        assert!(!text.contains("\u{1b}[2J"), "{args:?}: {text:?}");
        assert!(text.contains("\\u{1b}[2J"), "{args:?}: {text:?}");
    }
}

#[test]
fn a_refused_variable_is_shown_escaped() {
    let line = refuses_env(
        &[("RETRY_BASE", "1\u{1b}[2J")],
        &["--", "true"],
        &["RETRY_BASE", "'1\\u{1b}[2J'"],
    );
    assert!(!line.contains('\u{1b}'), "{line:?}");
}

#[test]
fn every_tool_the_tests_need_is_installed_by_ci_run_deps_and_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let docs = std::fs::read_to_string(root.join("docs/development.md")).unwrap();
    let word = |text: &str, w: &str| {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .any(|t| t == w)
    };
    for tool in tools::ALL {
        // .ci/run installs a program's package by the package's name or the program's.
        let program = tool.name.rsplit('/').next().unwrap();
        assert!(
            word(&ci, tool.from) || word(&ci, program),
            ".ci/run --deps installs neither {} nor {program}",
            tool.from
        );
        assert!(
            docs.contains(&format!("({})", tool.from)),
            "docs/development.md does not name the package {} ({})",
            tool.from,
            tool.name
        );
    }
    let receiver = crate::helpers::otlp::RECEIVER;
    assert!(ci.contains("opentelemetry-proto") && docs.contains("opentelemetry-proto"));
    assert!(receiver.describe().contains("opentelemetry-proto"));
}

#[test]
fn a_missing_tool_is_a_skip_with_a_summary_or_under_ci_a_failure() {
    // This test binary again, on one test that needs curl, with a PATH where nothing is: from
    // a hard link three directories down a scratch directory, so that its list of skips
    // (TARGET/tests-skipped.txt, TARGET being three levels above the binary) is its own.
    let exe = std::env::current_exe().unwrap();
    let scratch = tempfile::tempdir_in(exe.parent().unwrap()).unwrap();
    let deps = scratch.path().join("debug/deps");
    std::fs::create_dir_all(&deps).unwrap();
    let linked = deps.join(exe.file_name().unwrap());
    if std::fs::hard_link(&exe, &linked).is_err() {
        std::fs::copy(&exe, &linked).unwrap();
    }
    let empty = tempfile::tempdir().unwrap();
    let run = |require: bool| {
        let mut cmd = Command::new(&linked);
        clear_outside_env(&mut cmd);
        cmd.env_remove(tools::REQUIRE_VARIABLE)
            .env("PATH", empty.path())
            .args([
                "--exact",
                "http::retries_503_and_429_until_200",
                "--test-threads",
                "1",
            ]);
        if require {
            cmd.env(tools::REQUIRE_VARIABLE, "1");
        }
        cmd.stdin(Stdio::null()).output().unwrap()
    };
    let skipped = run(false);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    let stdout = String::from_utf8_lossy(&skipped.stdout);
    assert!(skipped.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    let line = "http::retries_503_and_429_until_200: skipped: needs curl (Debian package curl)";
    assert!(
        stderr.contains("\n1 test of `cli` skipped for want of a tool"),
        "{stderr}"
    );
    // libtest holds a passing test's own stderr: the summary is what shows each skip.
    assert!(stderr.contains(&format!("\n  {line}\n")), "{stderr}");
    let listed = std::fs::read_to_string(scratch.path().join(tools::SKIPPED_FILE)).unwrap();
    assert_eq!(listed, format!("[cli] {line}\n"));
    let failed = run(true);
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert_eq!(failed.status.code(), Some(101), "{stdout}");
    assert!(
        stdout
            .contains("RETRY_TESTS_REQUIRE_TOOLS=1 and this test needs curl (Debian package curl)"),
        "{stdout}"
    );
}
