//! `dist/install.sh` under each shell it is written for ([`Shell`]), against a local server
//! serving a release of the layout `dist/release.sh` makes: where it puts the binary, the man
//! page and the completions; a missing `--to` made; the one-liner's pipe into `sh -s`; `--help`;
//! the stamped copy a release attaches. (`script_failures.rs` holds the failures.)

use std::path::Path;
use std::process::Command;

use crate::release::{Release, release, repository, small};
use crate::support::{Scratch, Shell, each_shell, install_sh, run, serve, tree, version_of};
use crate::tools::{self, require};

/// Whether every shell is here (else the test is skipped, or fails under CI).
pub fn shells() -> bool {
    require(&Shell::TOOLS)
}

/// `--version V --from URL --to DIR` for `release` served at `url`.
pub fn args<'a>(release: &'a Release, url: &'a str, to: &'a str) -> Vec<&'a str> {
    vec!["--version", &release.version, "--from", url, "--to", to]
}

/// What a PREFIX/bin install puts under PREFIX, relative to PREFIX.
pub const PREFIX_FILES: &[&str] = &[
    "bin/",
    "bin/retry",
    "share/",
    "share/bash-completion/",
    "share/bash-completion/completions/",
    "share/bash-completion/completions/retry",
    "share/fish/",
    "share/fish/vendor_completions.d/",
    "share/fish/vendor_completions.d/retry.fish",
    "share/man/",
    "share/man/man1/",
    "share/man/man1/retry.1",
    "share/zsh/",
    "share/zsh/site-functions/",
    "share/zsh/site-functions/_retry",
];

#[test]
fn installs_the_binary_man_page_and_completions_under_the_prefix_of_a_bin_directory() {
    if !shells() {
        return;
    }
    let release = release();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let prefix = scratch.path().join("prefix");
        let to = prefix.join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[],
        );
        run.ok();
        assert_eq!(tree(&prefix), PREFIX_FILES, "{shell:?}: {run:#?}");
        let mode = |p: &str| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(prefix.join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777
        };
        assert_eq!(mode("bin/retry"), 0o755, "{shell:?}");
        assert_eq!(mode("share/man/man1/retry.1"), 0o644, "{shell:?}");
        let repo = repository();
        for (installed, committed) in [
            ("share/man/man1/retry.1", "man/retry.1"),
            (
                "share/bash-completion/completions/retry",
                "completions/retry.bash",
            ),
            ("share/zsh/site-functions/_retry", "completions/_retry"),
            (
                "share/fish/vendor_completions.d/retry.fish",
                "completions/retry.fish",
            ),
        ] {
            assert_eq!(
                std::fs::read(prefix.join(installed)).unwrap(),
                std::fs::read(repo.join(committed)).unwrap(),
                "{shell:?}: {installed}"
            );
        }
        assert_eq!(
            version_of(&to.join("retry")),
            format!("retry {}", release.version),
            "{shell:?}"
        );
        assert!(
            run.stdout.contains(&format!(
                "installed retry {} ({})",
                release.version, release.target
            )),
            "{shell:?}: {run:#?}"
        );
        // Only the scratch directory's own, the prefix, and nothing in TMPDIR.
        let top: Vec<String> = scratch
            .tree()
            .into_iter()
            .filter(|p| !p.starts_with("prefix/"))
            .collect();
        assert_eq!(top, ["home/", "tmp/"], "{shell:?}");
    });
    // Each shell fetched the checksum and the archive, nothing else.
    let archive = release.archive_name();
    let mut requests = server.requests();
    requests.sort();
    let mut expected: Vec<String> = (0..Shell::ALL.len())
        .flat_map(|_| [format!("/{archive}.sha256"), format!("/{archive}")])
        .collect();
    expected.sort();
    assert_eq!(requests, expected);
}

#[test]
fn a_directory_not_named_bin_gets_the_binary_alone_and_a_missing_one_is_made() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        // Two levels that do not exist yet, and a space in the path.
        let to = scratch.path().join("tools dir/retry here");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[],
        );
        run.ok();
        assert_eq!(
            tree(&scratch.path().join("tools dir")),
            ["retry here/", "retry here/retry"],
            "{shell:?}"
        );
        assert!(
            run.stdout.contains("retry --generate"),
            "{shell:?}: {run:#?}"
        );
        assert!(run.stdout.contains("is not on PATH"), "{shell:?}: {run:#?}");
    });
}

#[test]
fn without_curl_gnu_wget_downloads() {
    if !shells() || !require(&[tools::WGET]) {
        return;
    }
    let release = small();
    let server = serve(release);
    // A PATH with GNU wget and the other tools install.sh needs, and no curl.
    let scratch = Scratch::new();
    let bin = scratch.path().join("no curl");
    std::fs::create_dir(&bin).unwrap();
    for tool in crate::downloaders::SCRIPT_TOOLS.iter().chain(&["wget"]) {
        std::os::unix::fs::symlink(crate::support::which(tool), bin.join(tool)).unwrap();
    }
    let to = scratch.path().join("prefix/bin");
    let run = install_sh(
        Shell::Dash,
        &scratch,
        &args(release, server.url(), to.to_str().unwrap()),
        &[("PATH", bin.to_str().unwrap())],
    );
    run.ok();
    assert_eq!(
        version_of(&to.join("retry")),
        format!("retry {}", release.version)
    );
    // A 404 under wget: its own line, after the URL.
    let run = install_sh(
        Shell::Dash,
        &scratch,
        &[
            "--version",
            "9.9.9",
            "--from",
            server.url(),
            "--to",
            to.to_str().unwrap(),
        ],
        &[("PATH", bin.to_str().unwrap())],
    );
    let line = run.one_line_failure();
    assert!(
        line.starts_with(&format!(
            "install.sh: cannot download '{}/retry-tool-9.9.9-",
            server.url()
        )),
        "{line}"
    );
}

#[test]
fn the_default_to_is_home_local_bin_and_a_second_install_replaces_the_first() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    let scratch = Scratch::new();
    for shell in [Shell::Dash, Shell::Busybox] {
        let run = install_sh(
            shell,
            &scratch,
            &["--version", &release.version, "--from", server.url()],
            &[],
        );
        run.ok();
        let prefix = scratch.home().join(".local");
        assert_eq!(tree(&prefix), PREFIX_FILES, "{shell:?}");
    }
}

#[test]
fn help_says_the_options_and_the_defaults_of_this_copy() {
    if !require(&[tools::DASH]) {
        return;
    }
    let scratch = Scratch::new();
    let run = install_sh(Shell::Dash, &scratch, &["--help"], &[]);
    run.ok();
    for flag in [
        "--to DIR",
        "--version VERSION",
        "--from URL",
        "--target TARGET",
        "RETRY_INSTALL_FROM",
        "RETRY_INSTALL_STALL_TIMEOUT",
    ] {
        assert!(run.stdout.contains(flag), "{flag}: {}", run.stdout);
    }
    assert!(
        run.stdout.contains("(default: none in this copy)"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.is_empty());
}

/// `dist/stamp-install.sh REPOSITORY VERSION`'s output, written to `dir/install.sh`.
pub fn stamped(dir: &Path, repository: &str, version: &str) -> std::path::PathBuf {
    let out = Command::new(crate::release::repository().join("dist/stamp-install.sh"))
        .args([repository, version])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let path = dir.join("install.sh");
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

#[test]
fn the_copy_a_release_attaches_installs_that_release_by_default() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    let scratch = Scratch::new();
    let script = stamped(scratch.path(), "someone/retry", &release.version);
    let mut cmd = Command::new("dash");
    cmd.arg(&script).arg("--help");
    crate::support::hermetic(&mut cmd, &scratch);
    let help = run(cmd);
    help.ok();
    assert!(
        help.stdout
            .contains(&format!("(default: {})", release.version)),
        "{}",
        help.stdout
    );
    assert!(
        help.stdout
            .contains("else https://github.com/someone/retry/releases/download/vVERSION)"),
        "{}",
        help.stdout
    );
    // No --version: the stamped one, from RETRY_INSTALL_FROM.
    let to = scratch.path().join("bin");
    let mut cmd = Command::new("dash");
    cmd.arg(&script).args(["--to", to.to_str().unwrap()]);
    crate::support::hermetic(&mut cmd, &scratch);
    cmd.env("RETRY_INSTALL_FROM", server.url());
    run(cmd).ok();
    assert_eq!(
        version_of(&to.join("retry")),
        format!("retry {}", release.version)
    );
    // The stamp refuses what is not a repository or a version.
    for (repository, version) in [("someone", "1.2.3"), ("a/b'c", "1.2.3"), ("a/b", "1.2.3;x")] {
        let out = Command::new(crate::release::repository().join("dist/stamp-install.sh"))
            .args([repository, version])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{repository} {version}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "{out:?}"
        );
    }
}

#[test]
fn the_one_liner_pipes_the_script_into_sh() {
    if !shells() {
        return;
    }
    // `curl -fsSL URL | sh -s -- ARGS`, each shell reading the script from stdin.
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let mut cmd = shell.command(Path::new("-s"));
        crate::support::hermetic(&mut cmd, &scratch);
        cmd.arg("--")
            .args(args(release, server.url(), to.to_str().unwrap()));
        let script = std::fs::read(repository().join("dist/install.sh")).unwrap();
        let run = crate::support::run_with_stdin(cmd, Some(script));
        run.ok();
        assert!(to.join("retry").is_file(), "{shell:?}: {run:#?}");
    });
}
