//! The documentation's one-liners, run as written: each fenced block after a
//! `<!-- install-test: NAME -->` line of README.md or `docs/*.md` (a marker kind of its own, which
//! the cli tests' `readme-test` markers do not see; the same rules: a name once, each used by a
//! test here). The workflow steps run as a runner would (the action's step, then each `run:`
//! with bash and GITHUB_PATH's directories first on PATH, `make` finding a Makefile whose target
//! fails once); the install script's line with its GitHub URL pointed at the local server, which
//! serves the copy a release attaches (`dist/stamp-install.sh`).

use std::collections::BTreeMap;
use std::process::Command;

use crate::action::Job;
use crate::release::{release, repository};
use crate::server::{Answer, Server};
use crate::support::{Scratch, hermetic, lines, run, tree, version_of};
use crate::tools::{self, require};

/// Every marker a test here reads.
const USED: &[&str] = &[
    "readme-action",
    "readme-install-script",
    "action-usage",
    "ci-action-usage",
    "install-script",
];

/// The marked blocks of README.md and docs/*.md, by name, with the file each is in.
fn blocks() -> BTreeMap<String, (String, String)> {
    let root = repository();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut found = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name_of = file.strip_prefix(&root).unwrap().display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            if !t.starts_with("<!--") || !t.contains("install-test") {
                continue;
            }
            let name = t
                .strip_prefix("<!-- install-test: ")
                .and_then(|r| r.strip_suffix(" -->"))
                .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
                .unwrap_or_else(|| panic!("{name_of}:{}: not a well-formed marker: {t:?}", i + 1));
            let mut rest = lines[i + 1..].iter().skip_while(|l| l.trim().is_empty());
            assert!(
                rest.next().is_some_and(|l| l.starts_with("```")),
                "{name_of}:{}: {name} is not followed by a fenced block",
                i + 1
            );
            let body: Vec<&str> = rest
                .take_while(|l| !l.starts_with("```"))
                .copied()
                .collect();
            let previous =
                found.insert(name.to_string(), (name_of.clone(), body.join("\n") + "\n"));
            assert!(previous.is_none(), "{name} is marked twice");
        }
    }
    found
}

/// The block marked `name`.
fn block(name: &str) -> String {
    blocks()
        .remove(name)
        .unwrap_or_else(|| panic!("no block is marked {name}"))
        .1
}

#[test]
fn every_marker_is_used_and_every_used_one_is_there() {
    let found = blocks();
    let names: Vec<&str> = found.keys().map(String::as_str).collect();
    let mut used = USED.to_vec();
    used.sort();
    assert_eq!(names, used);
}

/// Runs the workflow steps of block `name` as a job would, in a directory whose Makefile's
/// `integration-test` fails the first time.
fn runs_the_workflow_steps(name: &str) {
    if !require(&[tools::BASH, tools::MAKE]) || crate::release::host().1.is_none() {
        return;
    }
    let release = release();
    let server = crate::support::serve(release);
    let job = Job::new();
    std::fs::write(
        job.scratch.path().join("Makefile"),
        "integration-test:\n\t@n=$$(cat attempts 2>/dev/null || echo 0); echo $$((n + 1)) > attempts; test $$n -ge 1\n",
    )
    .unwrap();
    let mut ran = 0;
    for line in block(name).lines() {
        let step = line.trim().trim_start_matches("- ");
        if step == "steps:" || step.starts_with("uses: actions/checkout@") {
            continue;
        }
        if let Some(reference) = step.strip_prefix("uses: OWNER/retry@") {
            assert_eq!(reference, "v1", "{name}: {line}");
            job.uses_here("", &[("RETRY_INSTALL_FROM", server.url())])
                .ok();
            ran += 1;
        } else if let Some(script) = step.strip_prefix("run: ") {
            // The next step's PATH: GITHUB_PATH's lines first, the last added first.
            let mut path: Vec<String> = lines(&job.github_path());
            path.reverse();
            path.push(std::env::var("PATH").unwrap());
            let mut cmd = Command::new("bash");
            cmd.args([
                "--noprofile",
                "--norc",
                "-e",
                "-o",
                "pipefail",
                "-c",
                script,
            ]);
            hermetic(&mut cmd, &job.scratch);
            // Short delays between the attempts (RETRY_BASE: not in the line as written).
            cmd.env("PATH", path.join(":")).env("RETRY_BASE", "10ms");
            let out = run(cmd);
            out.ok();
            assert!(out.stderr.contains("attempt 1"), "{name}: {out:#?}");
            ran += 1;
        } else {
            panic!("{name}: a line this test does not know: {line}");
        }
    }
    assert_eq!(ran, 2, "{name}: the action, then retry");
    assert_eq!(
        std::fs::read_to_string(job.scratch.path().join("attempts")).unwrap(),
        "2\n"
    );
}

#[test]
fn the_readme_workflow_steps_run_as_written() {
    runs_the_workflow_steps("readme-action");
}

#[test]
fn the_guides_workflow_steps_run_as_written() {
    runs_the_workflow_steps("action-usage");
    runs_the_workflow_steps("ci-action-usage");
}

/// Runs the install one-liner of block `name` with its GitHub URL the local server's.
fn runs_the_install_one_liner(name: &str) {
    if !require(&[tools::BASH, tools::CURL, tools::DASH]) {
        return;
    }
    let release = release();
    let scratch = Scratch::new();
    let script = crate::script::stamped(scratch.path(), "OWNER/retry", &release.version);
    let script = std::sync::Arc::new(std::fs::read(script).unwrap());
    std::fs::remove_file(scratch.path().join("install.sh")).unwrap();
    let served = release.clone();
    let server = Server::start(move |path| {
        if path == "/OWNER/retry/releases/latest/download/install.sh" {
            Answer::Body(std::sync::Arc::clone(&script))
        } else {
            match served.file(path.trim_start_matches('/')) {
                Some(bytes) => Answer::Body(bytes),
                None => Answer::Status(404),
            }
        }
    });
    let text = block(name);
    let github = "https://github.com/OWNER/retry/releases/latest/download/install.sh";
    assert_eq!(text.matches(github).count(), 1, "{name}: {text}");
    let line = text.trim().replace("https://github.com", server.url());
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &line]);
    hermetic(&mut cmd, &scratch);
    // The files themselves from the server too: the stamped copy would fetch them from GitHub.
    cmd.env("RETRY_INSTALL_FROM", server.url());
    let out = run(cmd);
    out.ok();
    let local = scratch.home().join(".local");
    assert_eq!(
        version_of(&local.join("bin/retry")),
        format!("retry {}", release.version)
    );
    assert!(
        tree(&local).contains(&"share/man/man1/retry.1".to_string()),
        "{:?}",
        tree(&local)
    );
    assert_eq!(
        server.requests()[0],
        "/OWNER/retry/releases/latest/download/install.sh"
    );
}

#[test]
fn the_readme_install_one_liner_runs_as_written() {
    runs_the_install_one_liner("readme-install-script");
}

#[test]
fn the_guides_install_one_liner_runs_as_written() {
    runs_the_install_one_liner("install-script");
}
