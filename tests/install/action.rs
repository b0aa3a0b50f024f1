//! The GitHub Action as a Linux or macOS runner runs it: `action.yml`'s bash step, its `run:`
//! line and its `env:` read from the file (so that the test runs what the action runs:
//! `dist/action/install.sh`), with the variables a runner sets (`RUNNER_OS`, `RUNNER_ARCH`,
//! `RUNNER_TOOL_CACHE`, `RUNNER_TEMP`, `GITHUB_PATH`, `GITHUB_OUTPUT`, `GITHUB_ACTION_PATH`),
//! against a local server: retry on the path, the tool cache's second use downloading nothing,
//! and each failure one `::error::` line with nothing on the path nor in the cache.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::release::{Release, host, release, repository, small};
use crate::server::{Answer, Server};
use crate::support::{Run, Scratch, hermetic, lines, run, serve, tree, version_of};
use crate::tools::{self, require};

/// The `run:` line and the `env:` entries of `action.yml`'s step `id`, as written.
pub fn step(id: &str) -> (String, Vec<(String, String)>) {
    let text = std::fs::read_to_string(repository().join("action.yml")).unwrap();
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim() != format!("- id: {id}"));
    assert!(lines.next().is_some(), "action.yml has no step {id}");
    let (mut run, mut env, mut in_env) = (None, Vec::new(), false);
    for line in lines.take_while(|l| !l.trim_start().starts_with("- ")) {
        let t = line.trim();
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        if t == "env:" {
            in_env = true;
        } else if let Some(r) = t.strip_prefix("run: ") {
            run = Some(r.to_string());
            in_env = false;
        } else if in_env && line.starts_with("        ") {
            let (k, v) = t.split_once(": ").unwrap();
            env.push((k.to_string(), v.to_string()));
        } else {
            in_env = false;
        }
    }
    (run.expect("a run: line"), env)
}

/// A runner's job: its tool cache (with a space in its path, as `C:\hostedtoolcache` is not,
/// but a self-hosted runner's may be), its GITHUB_PATH and GITHUB_OUTPUT files.
pub struct Job {
    pub scratch: Scratch,
    pub tool_cache: PathBuf,
}

impl Job {
    pub fn new() -> Job {
        let scratch = Scratch::new();
        let tool_cache = scratch.path().join("tool cache");
        std::fs::create_dir(&tool_cache).unwrap();
        Job {
            scratch,
            tool_cache,
        }
    }

    pub fn github_path(&self) -> PathBuf {
        self.scratch.path().join("github_path")
    }

    pub fn github_output(&self) -> PathBuf {
        self.scratch.path().join("github_output")
    }

    /// The step `uses: OWNER/retry@REF` with `version` as its input, on a runner of `os` and
    /// `arch`, with `env` set (RETRY_INSTALL_FROM, ...): action.yml's bash step run as a runner
    /// runs it (`bash -e {0}` of its `run:` line, with its `env:`).
    pub fn uses(&self, os: &str, arch: &str, version: &str, env: &[(&str, &str)]) -> Run {
        let (line, step_env) = step("unix");
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-e", "-o", "pipefail", "-c", &line]);
        hermetic(&mut cmd, &self.scratch);
        for (name, value) in step_env {
            let value = match value.as_str() {
                "${{ inputs.version }}" => version.to_string(),
                // What the runner gives a composite action's step, when it gives it at all
                // (actions/runner issue 2473): here, nothing.
                "${{ github.action_repository }}" => String::new(),
                other => panic!(
                    "action.yml's step sets {name} to {other}, which this test does not know"
                ),
            };
            cmd.env(name, value);
        }
        cmd.env("RUNNER_OS", os)
            .env("RUNNER_ARCH", arch)
            .env("RUNNER_TOOL_CACHE", &self.tool_cache)
            .env("RUNNER_TEMP", self.scratch.tmp())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_PATH", self.github_path())
            .env("GITHUB_OUTPUT", self.github_output())
            .env("GITHUB_ACTION_PATH", repository())
            .envs(env.iter().copied());
        let run = run(cmd);
        assert_eq!(
            tree(&self.scratch.tmp()),
            Vec::<String>::new(),
            "RUNNER_TEMP after {run:#?}"
        );
        run
    }

    /// [`Job::uses`] on a runner of this machine's platform.
    pub fn uses_here(&self, version: &str, env: &[(&str, &str)]) -> Run {
        let (os, arch) = runner();
        self.uses(os, arch, version, env)
    }

    /// Asserts that `run` failed with one `::error::` line, and that nothing went on the path,
    /// into the outputs or into the tool cache; returns the line.
    pub fn failed<'a>(&self, run: &'a Run) -> &'a str {
        assert_eq!(run.status, Some(1), "{run:#?}");
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 1, "{run:#?}");
        assert!(lines[0].starts_with("::error::retry action: "), "{run:#?}");
        assert!(run.stderr.is_empty(), "{run:#?}");
        assert_eq!(
            crate::support::lines(&self.github_path()),
            Vec::<String>::new()
        );
        assert_eq!(
            crate::support::lines(&self.github_output()),
            Vec::<String>::new()
        );
        assert_eq!(tree(&self.tool_cache), Vec::<String>::new(), "{run:#?}");
        lines[0]
    }
}

/// RUNNER_OS and RUNNER_ARCH of a runner of this machine's platform.
pub fn runner() -> (&'static str, &'static str) {
    host().1.expect("a GitHub runner's platform")
}

/// Whether the action's tests can run here: on a runner's platform, with bash.
fn here() -> bool {
    if host().1.is_none() {
        eprintln!("skipped: no GitHub runner is of this platform");
        return false;
    }
    require(&[tools::BASH])
}

#[test]
fn puts_retry_on_the_path_and_a_second_use_downloads_nothing() {
    if !here() {
        return;
    }
    let release = release();
    let server = serve(release);
    let job = Job::new();
    let first = job.uses_here("", &[("RETRY_INSTALL_FROM", server.url())]);
    first.ok();
    let (_, arch) = runner();
    let bin = job.tool_cache.join(format!(
        "retry/{}/{}/bin",
        release.version,
        arch.to_ascii_lowercase()
    ));
    assert_eq!(lines(&job.github_path()), [bin.display().to_string()]);
    assert_eq!(
        lines(&job.github_output()),
        [format!("path={}", bin.join("retry").display())]
    );
    // The next step's PATH: GITHUB_PATH's lines before the job's.
    let out = Command::new("sh")
        .args(["-c", "retry --version && command -v retry"])
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "retry {}\n{}\n",
            release.version,
            bin.join("retry").display()
        )
    );
    // Marked whole, as the actions toolkit's tool-cache marks a directory.
    assert!(
        job.tool_cache
            .join(format!(
                "retry/{}/{}.complete",
                release.version,
                arch.to_ascii_lowercase()
            ))
            .is_file()
    );
    let archive = release.archive_name();
    assert_eq!(
        server.requests(),
        [format!("/{archive}.sha256"), format!("/{archive}")]
    );

    // The second use: from the cache, not one request, and the same path again.
    let second = job.uses_here("", &[("RETRY_INSTALL_FROM", server.url())]);
    second.ok();
    assert!(second.stdout.contains("from the tool cache"), "{second:#?}");
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());
    assert_eq!(
        lines(&job.github_path()),
        [bin.display().to_string(), bin.display().to_string()]
    );
}

#[test]
fn the_default_version_is_the_actions_own_from_its_repositorys_release() {
    if !here() {
        return;
    }
    // Without RETRY_INSTALL_FROM: GITHUB_SERVER_URL/REPOSITORY/releases/download/vVERSION/,
    // VERSION being Cargo.toml's (the action's own release), REPOSITORY GITHUB_REPOSITORY
    // when github.action_repository is empty (a workflow using the action with `uses: ./`).
    let release = small();
    assert_eq!(release.version, env!("CARGO_PKG_VERSION"));
    let prefix = format!("/someone/retry/releases/download/v{}/", release.version);
    let served = release.clone();
    let server =
        Server::start(
            move |path| match path.strip_prefix(&prefix).and_then(|f| served.file(f)) {
                Some(bytes) => Answer::Body(bytes),
                None => Answer::Status(404),
            },
        );
    let job = Job::new();
    let run = job.uses_here(
        "",
        &[
            ("GITHUB_SERVER_URL", server.url()),
            ("GITHUB_REPOSITORY", "someone/retry"),
        ],
    );
    run.ok();
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());
    let path = lines(&job.github_output())[0]
        .strip_prefix("path=")
        .unwrap()
        .to_string();
    assert_eq!(
        version_of(Path::new(&path)),
        format!("retry {}", release.version)
    );
}

#[test]
fn the_version_input_picks_another_release() {
    if !here() {
        return;
    }
    let target = host().0;
    let other = Release::of(
        "7.8.9-rc.1",
        target,
        &crate::release::members(
            &format!("retry-tool-7.8.9-rc.1-{target}"),
            std::fs::read(crate::release::binary()).unwrap(),
        ),
    );
    let server = serve(&other);
    let job = Job::new();
    // With a leading v, as a tag names it.
    job.uses_here("v7.8.9-rc.1", &[("RETRY_INSTALL_FROM", server.url())])
        .ok();
    let path = lines(&job.github_output())[0].clone();
    assert!(path.contains("/retry/7.8.9-rc.1/"), "{path}");
    assert_eq!(server.requests()[1], format!("/{}", other.archive_name()));
}

#[test]
fn a_wrong_checksum_fails_with_its_line_and_leaves_nothing() {
    if !here() {
        return;
    }
    let release = small();
    let mut wrong = release.clone();
    wrong.checksum = std::sync::Arc::new(crate::release::checksum_file(
        &release.archive_name(),
        b"not it",
    ));
    let server = serve(&wrong);
    let job = Job::new();
    let run = job.uses_here("", &[("RETRY_INSTALL_FROM", server.url())]);
    let line = job.failed(&run);
    assert!(
        line.starts_with(&format!(
            "::error::retry action: checksum mismatch: {} has SHA-256 ",
            release.archive_name()
        )),
        "{line}"
    );
}

#[test]
fn a_missing_release_404_fails_with_its_line_and_leaves_nothing() {
    if !here() {
        return;
    }
    let server = Server::start(|_| Answer::Status(404));
    let job = Job::new();
    let run = job.uses_here("3.2.1", &[("RETRY_INSTALL_FROM", server.url())]);
    let line = job.failed(&run);
    let url = format!(
        "{}/retry-tool-3.2.1-{}.tar.gz.sha256",
        server.url(),
        host().0
    );
    assert!(
        line.starts_with(&format!("::error::retry action: cannot download '{url}': ")),
        "{line}"
    );
    assert!(line.contains("404"), "{line}");
}

#[test]
fn an_unsupported_runner_fails_with_its_line_and_downloads_nothing() {
    if !here() {
        return;
    }
    let server = serve(small());
    for (os, arch) in [
        ("Linux", "ARM"),
        ("Linux", "X86"),
        ("macOS", "ARM"),
        ("Windows", "X64"),
        ("FreeBSD", "X64"),
    ] {
        let job = Job::new();
        let run = job.uses(os, arch, "", &[("RETRY_INSTALL_FROM", server.url())]);
        assert_eq!(
            job.failed(&run),
            format!(
                "::error::retry action: no retry release for this runner (RUNNER_OS {os}, RUNNER_ARCH {arch}); \
                 there are Linux X64 and ARM64, macOS X64 and ARM64, Windows X64"
            )
        );
    }
    assert_eq!(server.requests(), Vec::<String>::new());
}

#[test]
fn a_missing_runner_variable_is_one_error_line() {
    if !here() {
        return;
    }
    let job = Job::new();
    let run = job.uses_here("", &[("RUNNER_TOOL_CACHE", "")]);
    assert_eq!(
        job.failed(&run),
        "::error::retry action: RUNNER_TOOL_CACHE is not set (this runs on a GitHub Actions runner)"
    );
}

#[test]
fn an_earlier_install_that_did_not_finish_is_replaced() {
    if !here() {
        return;
    }
    // A directory without its .complete marker (a job cancelled mid-way): installed again.
    let release = small();
    let server = serve(release);
    let job = Job::new();
    let (_, arch) = runner();
    let dir = job.tool_cache.join(format!(
        "retry/{}/{}",
        release.version,
        arch.to_ascii_lowercase()
    ));
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(dir.join("bin/retry"), "#!/bin/sh\nexit 1\n").unwrap();
    crate::support::make_executable(&dir.join("bin/retry"));
    job.uses_here("", &[("RETRY_INSTALL_FROM", server.url())])
        .ok();
    assert_eq!(
        version_of(&dir.join("bin/retry")),
        format!("retry {}", release.version)
    );
    assert_eq!(server.requests().len(), 2);
}
