//! The examples of README.md and of the guide (`docs/*.md`), run as written: each fenced block
//! after a `<!-- readme-test: NAME -->` line (an example) or a `<!-- readme-output: NAME -->`
//! line (the output an example shows) is extracted and executed with `retry` first on PATH,
//! against the local HTTP test server ([`crate::helpers::http`]) where the example names a URL
//! variable. A marker names its block uniquely across all those files, and every marker is used
//! by a test ([`USED`]): a test fails on a duplicate, on a marker no test uses and on a test
//! whose marker has gone. Here: the markers, the helpers and the transcripts and charts the
//! guide shows; the HTTP and pipeline examples are in `readme_examples.rs`, the CI and cron
//! recipes in `readme_ci.rs`, the loops in `readme_loops.rs`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::helpers::http::{HttpServer, Reply};

/// Every marker a test of this module or of `readme_*.rs` reads, as `(kind, name)`.
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
    ("readme-test", "loops-forever"),
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
pub(crate) struct Block {
    /// The file, relative to the repository root.
    pub(crate) file: String,
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
pub(crate) fn marked(kind: &str, name: &str) -> &'static Block {
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
pub(crate) fn readme_output(name: &str) -> String {
    marked("readme-output", name).text.clone()
}

/// The whole text of the file that holds the example `name`.
pub(crate) fn file_of(name: &str) -> String {
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
pub(crate) fn server<F>(handler: F) -> HttpServer
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
