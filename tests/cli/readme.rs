//! The examples of README.md and of the guide (`docs/*.md`), run as written: each fenced block
//! after a `<!-- readme-test: NAME -->` line (an example) or a `<!-- readme-output: NAME -->`
//! line (the output an example shows) is extracted and executed with `retry` first on PATH,
//! against the local HTTP test server ([`crate::helpers::http`]) where the example names a URL
//! variable. A marker names its block uniquely across all those files, and every marker is used
//! by a test ([`USED`]): a test fails on a duplicate, on a marker no test uses and on a test
//! whose marker has gone.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::helpers::http::{HttpServer, Reply, Request};
use crate::tools::{self, require};

/// Every marker a test of this module reads, as `(kind, name)`.
const USED: &[(&str, &str)] = &[
    ("readme-test", "quick-start"),
    ("readme-test", "pipeline"),
    ("readme-test", "http-status"),
    ("readme-test", "retry-after"),
    ("readme-output", "retry-after"),
    ("readme-test", "idempotency-key"),
    ("readme-test", "github-actions"),
    ("readme-test", "cron"),
    ("readme-test", "cron-chronic"),
    ("readme-test", "makefile"),
    ("readme-test", "simulate-refusal"),
    ("readme-test", "simulate-occ-table"),
    ("readme-test", "simulate-occ-chart"),
    ("readme-test", "simulate-rate-limit-table"),
    ("readme-test", "failure-rate-table"),
    ("readme-test", "failure-rate-chart"),
    ("readme-test", "cron-budget"),
    // Run by readme_loops.rs.
    ("readme-test", "loops-delays"),
    ("readme-test", "loops-successes"),
    ("readme-test", "loops-until-fail"),
    ("readme-test", "loops-lock"),
    ("readme-test", "loops-env-file"),
    ("readme-test", "metrics-cron"),
    ("readme-test", "healthchecks"),
    ("readme-test", "ci-traces"),
];

/// The marker kinds: an example, and the output an example shows.
const KINDS: &[&str] = &["readme-test", "readme-output"];

/// The files whose marked blocks are examples: README.md, then `docs/*.md` by name.
fn doc_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    std::iter::once(root.join("README.md"))
        .chain(docs)
        .collect()
}

/// A marker's kind and name: `("readme-test", "pipeline")`.
type Key = (String, String);

/// The marked blocks, by `(kind, name)`.
type Blocks = BTreeMap<Key, Block>;

/// One marked block: where it is and what it holds.
#[derive(Debug)]
struct Block {
    /// The file, relative to the repository root.
    file: String,
    /// The marker's line number (from 1).
    line: usize,
    /// The block's lines between its fences, each ending in `\n`.
    text: String,
}

/// The marker a line is, as `(kind, name)`; `Err` for a line that mentions a marker kind but is
/// not a well-formed marker.
fn marker(line: &str) -> Option<Result<(String, String), String>> {
    let t = line.trim();
    if !t.starts_with("<!--") || !KINDS.iter().any(|k| t.contains(k)) {
        return None;
    }
    let parsed = t
        .strip_prefix("<!-- ")
        .and_then(|t| t.strip_suffix(" -->"))
        .and_then(|t| t.split_once(": "))
        .filter(|(kind, name)| {
            KINDS.contains(kind)
                && !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        });
    Some(
        parsed
            .map(|(kind, name)| (kind.to_string(), name.to_string()))
            .ok_or_else(|| format!("not a well-formed marker: {t:?}")),
    )
}

/// Every marker of `text` (the file `file`) with its block, in order; a marker must be followed
/// by a fenced block, blank lines allowed between them.
fn parse(file: &str, text: &str) -> Result<Vec<(Key, Block)>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(m) = marker(line) else { continue };
        let key = m.map_err(|e| format!("{file}:{}: {e}", i + 1))?;
        let mut rest = lines[i + 1..].iter().skip_while(|l| l.trim().is_empty());
        let fence = rest.next().map(|l| l.trim_start()).unwrap_or_default();
        if !fence.starts_with("```") {
            return Err(format!(
                "{file}:{}: {key:?} is not followed by a fenced block",
                i + 1
            ));
        }
        let mut body = String::new();
        let mut closed = false;
        for l in rest {
            if l.trim_start().starts_with("```") {
                closed = true;
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        if !closed {
            return Err(format!("{file}:{}: {key:?}'s block is not closed", i + 1));
        }
        let block = Block {
            file: file.to_string(),
            line: i + 1,
            text: body,
        };
        found.push((key, block));
    }
    Ok(found)
}

/// Every marked block of `files` (name and text), by `(kind, name)`; `Err` lists what is wrong:
/// a malformed marker, a marker without its block, a name used twice.
fn collect(files: &[(String, String)]) -> Result<Blocks, String> {
    let mut blocks = Blocks::new();
    let mut errors = Vec::new();
    for (file, text) in files {
        match parse(file, text) {
            Err(e) => errors.push(e),
            Ok(found) => {
                for (key, block) in found {
                    if let Some(first) = blocks.get(&key) {
                        errors.push(format!(
                            "{}:{}: {key:?} is already at {}:{}",
                            block.file, block.line, first.file, first.line
                        ));
                    } else {
                        blocks.insert(key, block);
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(blocks)
    } else {
        Err(errors.join("\n"))
    }
}

/// Every marked block of [`doc_files`].
fn all_blocks() -> Result<Blocks, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<(String, String)> = doc_files()
        .iter()
        .map(|path| {
            let file = path.strip_prefix(root).unwrap().display().to_string();
            (file, std::fs::read_to_string(path).unwrap())
        })
        .collect();
    collect(&files)
}

/// [`all_blocks`], read once; panics with what is wrong.
fn blocks() -> &'static Blocks {
    static BLOCKS: OnceLock<Result<Blocks, String>> = OnceLock::new();
    BLOCKS
        .get_or_init(all_blocks)
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The block marked `<!-- kind: name -->`, which must be in [`USED`].
fn marked(kind: &str, name: &str) -> &'static Block {
    assert!(
        USED.contains(&(kind, name)),
        "({kind:?}, {name:?}) is read by a test but missing from USED"
    );
    blocks()
        .get(&(kind.to_string(), name.to_string()))
        .unwrap_or_else(|| panic!("no file of README.md and docs/*.md has <!-- {kind}: {name} -->"))
}

/// The code block marked `<!-- readme-test: name -->`.
pub(crate) fn example(name: &str) -> String {
    marked("readme-test", name).text.clone()
}

/// The sample output block marked `<!-- readme-output: name -->`.
fn readme_output(name: &str) -> String {
    marked("readme-output", name).text.clone()
}

/// The whole text of the file that holds the example `name`.
fn file_of(name: &str) -> String {
    let file = &marked("readme-test", name).file;
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

/// A transcript block: its first line `$ COMMAND`, then what the command prints.
fn transcript(name: &str) -> (String, String) {
    let block = example(name);
    let (first, rest) = block.split_once('\n').unwrap();
    let command = first
        .strip_prefix("$ ")
        .unwrap_or_else(|| panic!("{name}: the first line is not `$ COMMAND`: {first:?}"));
    (command.to_string(), rest.to_string())
}

#[test]
fn every_marker_is_well_formed_unique_and_used_by_a_test() {
    let blocks = all_blocks().unwrap_or_else(|e| panic!("{e}"));
    let unused: Vec<String> = blocks
        .iter()
        .filter(|((kind, name), _)| !USED.contains(&(kind.as_str(), name.as_str())))
        .map(|((kind, name), b)| format!("{}:{}: <!-- {kind}: {name} -->", b.file, b.line))
        .collect();
    assert!(
        unused.is_empty(),
        "markers no test uses:\n{}",
        unused.join("\n")
    );
    let gone: Vec<&(&str, &str)> = USED
        .iter()
        .filter(|(kind, name)| !blocks.contains_key(&(kind.to_string(), name.to_string())))
        .collect();
    assert!(
        gone.is_empty(),
        "markers tests use but no file has: {gone:?}"
    );
}

#[test]
fn the_release_files_named_are_this_versions() {
    let version = env!("CARGO_PKG_VERSION");
    let mut named = 0;
    for path in doc_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for prefix in ["retry-tool-", "retry-tool_"] {
            for (i, _) in text.match_indices(prefix) {
                let rest = &text[i + prefix.len()..];
                if rest.starts_with(|c: char| c.is_ascii_digit()) {
                    let shown = rest.split('-').next().unwrap();
                    assert_eq!(shown, version, "{}: {prefix}{shown}", path.display());
                    named += 1;
                }
            }
        }
    }
    assert!(
        named >= 4,
        "README.md and docs/install.md name the release files"
    );
}

#[test]
fn the_marker_parser_refuses_duplicates_strays_and_blocks_missing() {
    let ok = "<!-- readme-test: a -->\n\n```sh\necho a\n```\n";
    let found = parse("x.md", ok).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, ("readme-test".to_string(), "a".to_string()));
    assert_eq!(found[0].1.text, "echo a\n");
    for bad in [
        "<!-- readme-test: a -->\ntext\n```sh\necho\n```\n",
        "<!-- readme-test: a -->\n```sh\necho\n",
        "<!-- readme-test:a -->\n```sh\necho\n```\n",
        "<!-- readme-tests: a -->\n```sh\necho\n```\n",
        "<!-- readme-test: A b -->\n```sh\necho\n```\n",
    ] {
        assert!(parse("x.md", bad).is_err(), "{bad:?}");
    }
    // A name is unique across the files, whatever the kind's other uses.
    let files = |second: &str| {
        [
            ("README.md".to_string(), ok.to_string()),
            ("docs/x.md".to_string(), second.replace("NAME", "a")),
        ]
    };
    let twice = collect(&files("<!-- readme-test: NAME -->\n```\nb\n```\n")).unwrap_err();
    assert!(
        twice.contains("docs/x.md:1") && twice.contains("README.md:1"),
        "{twice}"
    );
    assert!(collect(&files("<!-- readme-output: NAME -->\n```\nb\n```\n")).is_ok());
}

/// A directory with `retry` in it, for PATH.
fn bin_dir() -> PathBuf {
    Path::new(crate::helpers::bin())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs `script` with `sh -c` in `dir`, `retry` first on PATH, the caller's `RETRY_*`,
/// `GITHUB_*` and proxy variables removed and `env` added; kills it after the hang limit.
pub(crate) fn sh(script: &str, dir: &Path, env: &[(&str, String)]) -> Output {
    let path = format!("{}:{}", bin_dir().display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null());
    crate::helpers::clear_outside_env(&mut cmd);
    for (k, _) in std::env::vars_os()
        .filter(|(k, _)| k.to_string_lossy().to_ascii_lowercase().ends_with("_proxy"))
    {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        err.read_to_end(&mut s).unwrap();
        s
    });
    let mut stdout = Vec::new();
    out.read_to_end(&mut stdout).unwrap();
    let stderr = err_reader.join().unwrap();
    let status = crate::helpers::wait_with_limit(&mut child);
    Output {
        status,
        stdout,
        stderr,
    }
}

/// The test server answering with `handler(path, n, body)`'s status and JSON body; a 429 says
/// when to come back, its header name in lower case as HTTP/2 sends it.
fn server<F>(handler: F) -> HttpServer
where
    F: Fn(&str, usize, &[u8]) -> (u16, Vec<u8>) + Send + 'static,
{
    HttpServer::start(move |path, n, body| {
        let (code, body) = handler(path, n, body);
        let reply = Reply::new(code, body).header("Content-Type", "application/json");
        if code == 429 {
            reply.header("retry-after", "1")
        } else {
            reply
        }
    })
}

#[test]
fn the_quick_start_prints_what_the_readme_shows_but_for_the_drawn_delays() {
    let block = example("quick-start");
    // The `$ ` lines are commands, run in one shell; the others are what they print, stdout and
    // stderr together.
    let mut script = String::from("exec 2>&1\n");
    let mut shown = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => script.push_str(&format!("{command}\n")),
            None => shown.push(line.to_string()),
        }
    }
    assert!(block.starts_with("$ retry --base 200ms -- "), "{block}");
    let dir = tempfile::tempdir().unwrap();
    let out = sh(&script, dir.path(), &[]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    let printed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    // Each delay is drawn (full jitter): at most 200 ms before retry 1, 400 ms before retry 2.
    let drawn = |lines: &[String], whose: &str| -> Vec<String> {
        lines
            .iter()
            .map(|line| match line.split_once("; retrying in ") {
                Some((head, delay)) => {
                    let secs = humantime::parse_duration(delay)
                        .unwrap_or_else(|e| panic!("{whose}: {line}: {e}"))
                        .as_secs_f64();
                    let attempt: i32 = head
                        .strip_prefix("retry: attempt ")
                        .and_then(|h| h.split(' ').next())
                        .unwrap()
                        .parse()
                        .unwrap();
                    let most = 0.2 * 2f64.powi(attempt - 1);
                    assert!((0.0..=most).contains(&secs), "{whose}: {line}");
                    format!("{head}; retrying in ...")
                }
                // The closing line's elapsed time varies too.
                None => match line.split_once(" after ") {
                    Some((head, _)) if head.starts_with("retry: succeeded on attempt ") => {
                        format!("{head} after ...")
                    }
                    _ => line.clone(),
                },
            })
            .collect()
    };
    assert_eq!(drawn(&printed, "retry"), drawn(&shown, "README.md"));
}

#[test]
fn the_pipeline_example_posts_the_same_body_and_jq_sees_one_answer() {
    if !require(&[tools::CURL, tools::JQ]) {
        return;
    }
    let server = server(|path, n, body| match (path, n) {
        ("/source", _) => (200, br#"{"id": 7, "name": "widget"}"#.to_vec()),
        // The API fails twice (a partial answer, then an error), then echoes what it got.
        ("/api", 0) => (503, br#"{"partial": "#.to_vec()),
        ("/api", 1) => (500, b"oops".to_vec()),
        ("/api", _) => (200, [br#"{"received": "#.as_slice(), body, b"}"].concat()),
        _ => (404, Vec::new()),
    });
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        &example("pipeline"),
        dir.path(),
        &[
            ("SOURCE_URL", format!("{}/source", server.url())),
            ("API_URL", format!("{}/api", server.url())),
            ("RETRY_BASE", "10ms".into()),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["received"]["name"], "widget");
    let posts: Vec<Request> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api")
        .collect();
    assert_eq!(posts.len(), 3);
    assert!(
        posts
            .iter()
            .all(|p| p.method == "POST" && p.body == posts[0].body)
    );
    assert_eq!(posts[0].body, br#"{"id": 7, "name": "widget"}"#);
}

#[test]
fn the_http_status_example_retries_until_a_2xx() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server(|_, n, _| match n {
        0 => (503, Vec::new()),
        1 => (429, Vec::new()),
        _ => (200, b"fine".to_vec()),
    });
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        &example("http-status"),
        dir.path(),
        &[
            ("STATUS_URL", format!("{}/status", server.url())),
            ("RETRY_BASE", "10ms".into()),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "503\n429\n200\n");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn the_retry_after_example_waits_as_long_as_a_lower_case_header_says() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server(|_, n, _| match n {
        0 => (429, Vec::new()),
        _ => (200, b"fine".to_vec()),
    });
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        &example("retry-after"),
        dir.path(),
        &[
            ("LIMITED_URL", format!("{}/limited", server.url())),
            ("RETRY_BASE", "10ms".into()),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("answer.json")).unwrap(),
        "fine"
    );
    // The headers of both responses went to stdout, as curl printed them.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("retry-after: 1\r\n"), "{stdout}");
    // retry's lines are the README's, but for the delay's digits: the 10 ms base would give
    // at most 10 ms; the header's second (counted from its arrival) won, and is named; then
    // the closing line, but for the time the run took.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("retry: "))
        .collect();
    let shown = readme_output("retry-after");
    let theirs: Vec<&str> = shown.lines().filter(|l| l.starts_with("retry: ")).collect();
    assert_eq!(ours.len(), 2, "{stderr}");
    assert_eq!(theirs.len(), 2, "{shown}");
    let closing = |line: &str| crate::helpers::timeless(line);
    assert_eq!(closing(ours[1]), closing(theirs[1]), "{stderr}");
    let split = |line: &str| -> (String, f64, String) {
        let (head, rest) = line.split_once("retrying in ").unwrap();
        let (shown, tail) = rest.split_once(' ').unwrap();
        (
            head.to_string(),
            crate::helpers::human_secs(shown),
            tail.to_string(),
        )
    };
    let (ours, theirs) = (split(ours[0]), split(theirs[0]));
    assert_eq!((&ours.0, &ours.2), (&theirs.0, &theirs.2), "{stderr}");
    assert!((0.5..=1.0).contains(&ours.1), "{stderr}");
    assert!((0.5..=1.0).contains(&theirs.1), "{shown}");
    // The response lines the README shows are curl's.
    for line in shown
        .lines()
        .filter(|l| l.starts_with("HTTP/") || l.starts_with("curl:"))
    {
        assert!(
            stdout.contains(line) || stderr.contains(line),
            "README line {line:?} not in the output:\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn the_idempotency_key_example_sends_one_key_and_body_for_every_attempt() {
    if !require(&[tools::CURL]) {
        return;
    }
    // A server of its own, to see the request headers: 503, then 200.
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}/orders", server.server_addr().to_ip().unwrap());
    let seen = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for code in [503, 200] {
            let Ok(Some(mut request)) = server.recv_timeout(crate::helpers::HANG_LIMIT) else {
                break;
            };
            let key = request
                .headers()
                .iter()
                .find(|h| h.field.equiv("Idempotency-Key"))
                .map(|h| h.value.to_string());
            let mut body = Vec::new();
            request.as_reader().read_to_end(&mut body).unwrap();
            seen.push((key, body));
            let reply = tiny_http::Response::from_string(r#"{"order": 1}"#).with_status_code(code);
            request.respond(reply).unwrap();
        }
        seen
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("order.json"), r#"{"item": "widget"}"#).unwrap();
    let out = sh(
        &example("idempotency-key"),
        dir.path(),
        &[("ORDERS_URL", url), ("RETRY_BASE", "10ms".into())],
    );
    assert!(out.status.success(), "{out:?}");
    let seen = seen.join().unwrap();
    assert_eq!(seen.len(), 2, "{seen:?}");
    // One key for both attempts: a version 4 UUID; the same body each time.
    let key = seen[0].0.clone().unwrap();
    assert!(
        key.len() == 36
            && key.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
            && key.as_bytes()[14] == b'4',
        "{key}"
    );
    assert!(
        seen.iter()
            .all(|(k, b)| k.as_deref() == Some(key.as_str()) && b == br#"{"item": "widget"}"#)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("reply.json")).unwrap(),
        r#"{"order": 1}"#
    );
}

#[test]
fn the_github_actions_step_runs_as_written() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server(|_, n, _| match n {
        0 => (502, Vec::new()),
        _ => (200, br#"{"version": "1.2.3"}"#.to_vec()),
    });
    let step = example("github-actions");
    // The step's `env:` entries and its `run:` line, as a runner would use them.
    let mut env: Vec<(String, String)> = Vec::new();
    let mut run = None;
    let mut in_env = false;
    for line in step.lines() {
        let t = line.trim();
        if t == "env:" {
            in_env = true;
        } else if let Some(cmd) = t.strip_prefix("run:") {
            run = Some(cmd.trim().to_string());
            in_env = false;
        } else if in_env && let Some((k, v)) = t.split_once(':') {
            env.push((k.trim().into(), v.trim().trim_matches('"').into()));
        }
    }
    assert!(env.iter().any(|(k, _)| k == "RETRY_PRESET"), "{env:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<(&str, String)> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    all.push(("MANIFEST_URL", format!("{}/manifest.json", server.url())));
    // The preset's 1 s base would make the test slow: RETRY_BASE beats RETRY_PRESET.
    all.push(("RETRY_BASE", "10ms".into()));
    // As on a runner: GitHub Actions, with a step-output file.
    let outputs = dir.path().join("github_output");
    all.push(("GITHUB_ACTIONS", "true".into()));
    all.push(("GITHUB_OUTPUT", outputs.display().to_string()));
    let out = sh(&run.unwrap(), dir.path(), &all);
    assert!(out.status.success(), "{out:?}");
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    assert!(manifest.contains("1.2.3"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    // retry's events, between curl's own error lines.
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(stderr.contains("curl: (22)"), "{stderr}");
    assert_eq!(events.last().unwrap()["event"], "success");
    // RETRY_MAX_RETRIES=4 from the step's env beats the aws preset's 2.
    assert_eq!(events[0]["max_attempts"], 5);
    // The README's annotation, and the outputs `steps.manifest.outputs.attempts` reads.
    let warning: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("::") && !l.contains("group::"))
        .collect();
    assert_eq!(
        warning,
        [
            "::warning title=retry%3A curl::curl succeeded on attempt 2 after failures \
          (statuses: 22, 0)"
        ]
    );
    let page = file_of("github-actions");
    assert!(
        page.replace('\n', " ")
            .contains(&format!("(`{}`)", warning[0])),
        "{} shows another annotation than {}",
        marked("readme-test", "github-actions").file,
        warning[0]
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "attempts=2\nstatus=0\n"
    );
}

#[test]
fn the_cron_line_runs_as_written() {
    let line = example("cron");
    let line = line.trim();
    // The five schedule fields, then the command cron hands to sh.
    let command = line.splitn(6, ' ').nth(5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // Stand-ins on PATH: a backup that fails with status 3, and a logger that records.
    let log = dir.path().join("logged");
    let write = |name: &str, body: String| {
        let p = bin.join(name);
        std::fs::write(&p, body).unwrap();
        let mut perm = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&p, perm).unwrap();
    };
    write("backup", "#!/bin/sh\nexit 3\n".into());
    write(
        "logger",
        format!("#!/bin/sh\necho \"$*\" >> {}\n", log.display()),
    );
    let command = command.replace("/usr/local/bin/backup", "backup");
    let out = sh(
        &format!("PATH={}:$PATH; {command}", bin.display()),
        dir.path(),
        &[
            ("RETRY_BASE", "0".into()),
            ("RETRY_MAX_RETRIES", "2".into()),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "-t backup backup failed: status 3\n"
    );
}

#[test]
fn the_chronic_cron_line_prints_nothing_after_a_late_success_and_everything_after_giving_up() {
    let line = example("cron-chronic");
    let line = line.trim();
    let command = line.splitn(6, ' ').nth(5).unwrap();
    assert!(command.contains("retry --chronic "), "{command}");
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A stand-in that prints on both streams and fails until attempt $OK.
    let stub = bin.join("sync-mirror");
    std::fs::write(
        &stub,
        "#!/bin/sh\necho \"synced $RETRY_ATTEMPT\"\necho \"error $RETRY_ATTEMPT\" >&2\n\
         [ \"$RETRY_ATTEMPT\" -ge \"$OK\" ]\n",
    )
    .unwrap();
    let mut perm = std::fs::metadata(&stub).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&stub, perm).unwrap();
    let command = command.replace("/usr/local/bin/sync-mirror", "sync-mirror");
    let script = format!("PATH={}:$PATH; {command}", bin.display());
    let env = |ok: &str| {
        [
            ("RETRY_BASE", "0".to_string()),
            ("RETRY_MAX_RETRIES", "2".to_string()),
            ("OK", ok.to_string()),
        ]
    };
    // Success on attempt 3: not one byte, so cron sends no mail.
    let out = sh(&script, dir.path(), &env("3"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // Never: all of it, in order, then the give-up line.
    let out = sh(&script, dir.path(), &env("9"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "synced 1\nsynced 2\nsynced 3\n"
    );
    let stderr = crate::helpers::timeless(&String::from_utf8(out.stderr).unwrap());
    assert_eq!(
        stderr,
        "error 1\nretry: attempt 1 of 3: sync-mirror exited with status 1; retrying in 0s\n\
         error 2\nretry: attempt 2 of 3: sync-mirror exited with status 1; retrying in 0s\n\
         error 3\nretry: attempt 3 of 3: sync-mirror exited with status 1\n\
         retry: gave up after 3 attempts in T: no retries left\n"
    );
}

#[test]
fn the_makefile_target_runs_as_written() {
    if !require(&[tools::MAKE]) {
        return;
    }
    let target = example("makefile");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Makefile"), &target).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A pg_isready stand-in that is ready on its third call.
    let stub = bin.join("pg_isready");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\necho \"$*\" >> {0}/calls\ntest $(wc -l < {0}/calls) -ge 3\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&stub).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&stub, perm).unwrap();
    let out = sh(
        &format!(
            "PATH={}:$PATH make -s wait-for-db DB_HOST=db.internal",
            bin.display()
        ),
        dir.path(),
        &[("RETRY_BASE", "0".into())],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calls")).unwrap(),
        "-h db.internal\n-h db.internal\n-h db.internal\n"
    );
}

#[test]
fn the_refused_simulation_says_what_the_guide_shows() {
    let (command, expected) = transcript("simulate-refusal");
    let dir = tempfile::tempdir().unwrap();
    let out = sh(&command, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(String::from_utf8_lossy(&out.stderr), expected);
    assert!(out.stdout.is_empty());
}

/// Runs the transcript `name` and checks that it prints exactly what the block shows, on
/// stdout, and nothing on stderr.
fn prints_what_it_shows(name: &str) {
    let (command, expected) = transcript(name);
    let dir = tempfile::tempdir().unwrap();
    let out = sh(&command, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{name}");
    assert!(out.stderr.is_empty(), "{name}: {out:?}");
}

#[test]
fn the_failure_rate_table_is_what_the_guide_shows() {
    prints_what_it_shows("failure-rate-table");
}

#[test]
fn the_contention_tables_are_what_the_guide_shows() {
    prints_what_it_shows("simulate-occ-table");
    prints_what_it_shows("simulate-rate-limit-table");
}

/// Runs the chart command `name` as written, in a scratch directory with a `docs/` of its own,
/// and checks that it draws the committed chart byte for byte.
fn draws_the_committed_chart(name: &str) {
    let command = example(name);
    let command = command.trim();
    let svg = command.rsplit(' ').next().unwrap();
    assert!(
        svg.starts_with("docs/") && svg.ends_with(".svg"),
        "{command}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    let out = sh(command, dir.path(), &[]);
    assert!(out.status.success(), "{out:?}");
    let drawn = std::fs::read(dir.path().join(svg)).unwrap();
    let committed = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(svg)).unwrap();
    assert!(
        drawn == committed,
        "{svg} is not what `{command}` draws now: run it in the repository's top directory"
    );
}

#[test]
fn the_failure_rate_chart_is_what_its_command_draws() {
    draws_the_committed_chart("failure-rate-chart");
}

/// About 20 s of two cores in a debug build: `cargo test -- --ignored occ_chart`.
#[test]
#[ignore = "slow in a debug build"]
fn the_occ_chart_is_what_its_command_draws() {
    draws_the_committed_chart("simulate-occ-chart");
}

#[test]
fn the_fleet_cron_line_runs_as_written_but_for_a_shorter_splay() {
    let line = example("cron-budget");
    let line = line.trim();
    // The five schedule fields, then the command cron hands to sh.
    let command = line.splitn(6, ' ').nth(5).unwrap();
    assert!(
        command.contains("--splay 5m") && command.contains("--breaker 3"),
        "{command}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A stand-in for the job that fails with status 3 and counts its calls.
    let calls = dir.path().join("calls");
    let stub = bin.join("sync-inventory");
    std::fs::write(
        &stub,
        format!("#!/bin/sh\necho x >> {}\nexit 3\n", calls.display()),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&stub).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&stub, perm).unwrap();
    // The default store, in a runtime directory of the test's own.
    let runtime = dir.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    let env = [
        ("XDG_RUNTIME_DIR", runtime.display().to_string()),
        // The default 1 s base would make the test slow; nothing on the line sets it.
        ("RETRY_BASE", "0".to_string()),
    ];
    // The line's flags plan a splay of up to 5 minutes.
    let flags = command.split(" -- ").next().unwrap();
    let out = sh(&format!("{flags} --dry-run"), dir.path(), &env);
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    let rows = crate::helpers::dry_run_cells(&table);
    assert_eq!(rows[0].0, "splay", "{table}");
    let splay = crate::helpers::human_secs(&rows[0].1);
    assert!((0.0..=300.0).contains(&splay), "{table}");
    // Run as written, but for a splay of 50ms instead of up to 5 minutes.
    let command = command
        .replace("/usr/local/bin/sync-inventory", "sync-inventory")
        .replace("--splay 5m", "--splay 50ms");
    let script = format!("PATH={}:$PATH; {command}", bin.display());
    let count = || std::fs::read_to_string(&calls).map_or(0, |t| t.lines().count());
    // The first run gets the 4 retries a full bucket grants, then the budget is spent.
    let out = sh(&script, dir.path(), &env);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(count(), 5);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        crate::helpers::timeless(&stderr)
            .contains("gave up after 5 attempts in T: retry budget for inventory-api is spent"),
        "{stderr}"
    );
    // Two more runs give up after their first attempt: three in a row open the breaker.
    for _ in 0..2 {
        assert_eq!(sh(&script, dir.path(), &env).status.code(), Some(3));
    }
    assert_eq!(count(), 7);
    let out = sh(&script, dir.path(), &env);
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert_eq!(count(), 7, "a refused run ran the job");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("retry: circuit breaker for inventory-api is open until ")
            && stderr.ends_with(": not running sync-inventory (status 75)\n"),
        "{stderr}"
    );
    assert!(runtime.join("retry/inventory-api.json").exists());
}

/// Writes an executable script `name` with `body` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// A stand-in that fails with status 3 the first time it runs in `dir`, then succeeds; or
/// always fails, with `always`.
fn flaky(dir: &Path, always: bool) -> String {
    let flag = dir.join("ran-once");
    if always {
        "#!/bin/sh\nexit 3\n".to_string()
    } else {
        format!(
            "#!/bin/sh\n[ -e '{0}' ] && exit 0\n: > '{0}'\nexit 3\n",
            flag.display()
        )
    }
}

#[test]
fn the_metrics_cron_line_leaves_a_file_node_exporter_serves() {
    if !require(&[tools::PROMTOOL, tools::NODE_EXPORTER]) {
        return;
    }
    let line = example("metrics-cron");
    let command = line.trim().splitn(6, ' ').nth(5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let textfiles = dir.path().join("node-exporter");
    std::fs::create_dir(&textfiles).unwrap();
    let backup = script(dir.path(), "backup", &flaky(dir.path(), false));
    let command = command
        .replace(
            "/var/lib/prometheus/node-exporter",
            textfiles.to_str().unwrap(),
        )
        .replace("/usr/local/bin/backup", backup.to_str().unwrap());
    assert_ne!(command, line.trim());
    let out = sh(&command, dir.path(), &[("RETRY_BASE", "0".into())]);
    assert!(out.status.success(), "{out:?}");
    let file = std::fs::read_to_string(textfiles.join("backup.prom")).unwrap();
    crate::helpers::prometheus::promtool(&file).unwrap();
    let scraped = crate::helpers::prometheus::NodeExporter::start(&textfiles).scrape();
    for series in [
        "node_textfile_scrape_error 0",
        "retry_runs_total{job=\"backup\",result=\"success\"} 1",
        "retry_last_attempts{job=\"backup\"} 2",
        "retry_attempts_total{job=\"backup\"} 2",
    ] {
        assert!(scraped.contains(series), "{series} not in {scraped}");
    }
}

#[test]
fn the_healthchecks_pings_carry_one_run_id_for_start_log_success_and_fail() {
    if !require(&[tools::CURL]) {
        return;
    }
    let example = example("healthchecks");
    for always in [false, true] {
        let server = server(|_, _, _| (200, b"OK".to_vec()));
        let dir = tempfile::tempdir().unwrap();
        let backup = script(dir.path(), "backup", &flaky(dir.path(), always));
        let ping = format!("{}/ping/check-uuid", server.url());
        let text = example
            .replace("https://hc-ping.com/your-check-uuid", &ping)
            .replace("/usr/local/bin/backup", backup.to_str().unwrap());
        let out = sh(
            &text,
            dir.path(),
            &[
                ("RETRY_BASE", "0".into()),
                ("RETRY_MAX_RETRIES", "1".into()),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(if always { 3 } else { 0 }),
            "{out:?}"
        );
        let seen = server.requests();
        let paths: Vec<String> = seen.iter().map(|r| r.path.clone()).collect();
        let rid = paths[0]
            .split_once("rid=")
            .map(|(_, r)| r.to_string())
            .unwrap_or_else(|| panic!("{paths:?}"));
        assert_eq!(rid.len(), 36, "{rid}");
        let last = if always { "/fail" } else { "" };
        assert_eq!(
            paths,
            [
                format!("/ping/check-uuid/start?rid={rid}"),
                format!("/ping/check-uuid/log?rid={rid}"),
                format!("/ping/check-uuid/start?rid={rid}"),
                format!("/ping/check-uuid{last}?rid={rid}"),
            ],
            "{out:?}"
        );
        assert_eq!(seen[1].body, b"attempt 1: status 3");
    }
}

#[test]
fn the_ci_trace_recipe_sends_the_run_and_its_attempts_in_the_pipelines_trace() {
    if !require(&[crate::helpers::otlp::RECEIVER]) {
        return;
    }
    use crate::helpers::otlp::{Receiver, attr_in};
    let receiver = Receiver::start("answer");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("traceparents");
    script(
        dir.path(),
        "deploy.sh",
        &format!(
            "#!/bin/sh\necho \"$TRACEPARENT\" >> '{}'\n{}",
            log.display(),
            flaky(dir.path(), false).trim_start_matches("#!/bin/sh\n")
        ),
    );
    let recipe = example("ci-traces");
    let text = recipe.replace("http://127.0.0.1:4318", &receiver.endpoint());
    assert_ne!(text, recipe);
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let out = sh(
        &text,
        dir.path(),
        &[("RETRY_BASE", "0".into()), ("TRACEPARENT", parent.into())],
    );
    assert!(out.status.success(), "{out:?}");
    let requests = receiver.requests(1);
    let resource = &requests[0]["request"]["resourceSpans"][0]["resource"]["attributes"];
    let string = |v: Option<serde_json::Value>| v.unwrap()["stringValue"].clone();
    assert_eq!(string(attr_in(resource, "service.name")), "deploy");
    assert_eq!(
        string(attr_in(resource, "deployment.environment")),
        "staging"
    );
    let spans = Receiver::spans(&requests[0]);
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert_eq!(
        spans[0].field("traceId"),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(spans[0].field("parentSpanId"), "00f067aa0ba902b7");
    let seen: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let sent: Vec<String> = spans[1..]
        .iter()
        .map(|s| format!("00-{}-{}-01", s.field("traceId"), s.field("spanId")))
        .collect();
    assert_eq!(seen, sent);
}
