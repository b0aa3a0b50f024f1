//! The adversarial pass over the install script and the action: servers that trickle,
//! redirect in a loop or off to a local file, or answer 500 or an HTML page; archives with `..`
//! in a name, a symbolic link out of the unpacking directory, a hard link; versions with shell
//! metacharacters; a tool cache and a source URL with spaces, quotes and `%`. Each must end in
//! one line (or one `::error::` line), with nothing written outside the scratch directory's
//! own files, and nothing run that the input named.

use std::sync::Arc;
use std::time::Duration;

use crate::action::Job;
use crate::release::{Entry, Release, members, small};
use crate::server::{Answer, Server};
use crate::support::{Scratch, Shell, each_shell, install_sh, serve, tree};
use crate::tools::require;

fn shells() -> bool {
    require(&Shell::TOOLS)
}

/// A server for `release` whose archive is answered by `answer` (its `.sha256` as it is).
fn serving_archive_as(
    release: &Release,
    answer: impl Fn(Arc<Vec<u8>>) -> Answer + Send + Sync + 'static,
) -> Server {
    let release = release.clone();
    Server::start(move |path| {
        let file = path.trim_start_matches('/');
        if file == release.archive_name() {
            answer(Arc::clone(&release.archive))
        } else {
            match release.file(file) {
                Some(bytes) => Answer::Body(bytes),
                None => Answer::Status(404),
            }
        }
    })
}

#[test]
fn a_trickling_server_is_abandoned_after_the_stall_timeout() {
    if !shells() {
        return;
    }
    // Five bytes a second, forever (the archive is megabytes): with curl, under 1 KiB/s for
    // RETRY_INSTALL_STALL_TIMEOUT seconds ends the download. BusyBox's wget has no such limit
    // (docs/install.md says so), hence no BusyBox here.
    let release = small();
    let server = serving_archive_as(release, |body| Answer::Trickle {
        body,
        every: Duration::from_millis(200),
    });
    each_shell(&[Shell::Dash, Shell::Bash, Shell::ZshSh], |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &[
                "--version",
                &release.version,
                "--from",
                server.url(),
                "--to",
                to.to_str().unwrap(),
            ],
            &[("RETRY_INSTALL_STALL_TIMEOUT", "1")],
        );
        let line = run.one_line_failure();
        assert!(
            line.contains(&format!(
                "cannot download '{}/{}'",
                server.url(),
                release.archive_name()
            )),
            "{shell:?}: {line}"
        );
        assert!(
            run.took < Duration::from_secs(20),
            "{shell:?}: took {:?}",
            run.took
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
    // The action passes the variable on.
    let job = Job::new();
    let run = job.uses_here(
        "",
        &[
            ("RETRY_INSTALL_FROM", server.url()),
            ("RETRY_INSTALL_STALL_TIMEOUT", "1"),
        ],
    );
    assert!(job.failed(&run).contains("cannot download"), "{run:#?}");
    assert!(run.took < Duration::from_secs(20), "took {:?}", run.took);
}

#[test]
fn redirects_are_followed_but_not_in_a_loop_nor_to_a_local_file() {
    if !shells() {
        return;
    }
    let release = small();
    each_shell(&Shell::ALL, |shell| {
        let served = release.clone();
        // /moved/FILE -> /FILE (as GitHub sends a release's files elsewhere); /loop/FILE -> itself;
        // /local/FILE -> file:///etc/hostname.
        let server = Server::start(move |path| {
            if let Some(rest) = path.strip_prefix("/moved/") {
                Answer::Redirect(format!("/{rest}"))
            } else if path.starts_with("/loop/") {
                Answer::Redirect(path.to_string())
            } else if path.starts_with("/local/") {
                Answer::Redirect("file:///etc/hostname".to_string())
            } else {
                match served.file(path.trim_start_matches('/')) {
                    Some(bytes) => Answer::Body(bytes),
                    None => Answer::Status(404),
                }
            }
        });
        let loops = || {
            server
                .requests()
                .iter()
                .filter(|p| p.starts_with("/loop/"))
                .count()
        };
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let to = to.to_str().unwrap();
        let moved = format!("{}/moved", server.url());
        install_sh(
            shell,
            &scratch,
            &["--version", &release.version, "--from", &moved, "--to", to],
            &[],
        )
        .ok();
        std::fs::remove_dir_all(scratch.path().join("bin")).unwrap();
        std::fs::remove_dir_all(scratch.path().join("share")).unwrap();
        for bad in ["loop", "local"] {
            let before = loops();
            let from = format!("{}/{bad}", server.url());
            let run = install_sh(
                shell,
                &scratch,
                &["--version", &release.version, "--from", &from, "--to", to],
                &[],
            );
            let line = run.one_line_failure();
            assert!(
                line.starts_with(&format!("install.sh: cannot download '{from}/")),
                "{shell:?} {bad}: {line}"
            );
            assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?} {bad}");
            // The loop cut short: curl follows 10 redirects (--max-redirs), BusyBox's wget its
            // own few.
            let followed = loops() - before;
            assert!(
                followed <= if shell.has_curl() { 11 } else { 21 },
                "{shell:?}: {followed} requests of the loop"
            );
        }
    });
}

#[test]
fn errors_and_pages_that_are_no_checksum_are_one_line() {
    if !shells() {
        return;
    }
    let release = small();
    let checksum = format!("{}.sha256", release.archive_name());
    let page = Arc::new(b"<html><body>Sign in to the Wi-Fi</body></html>\n".to_vec());
    let server = Server::start(move |path| {
        if path.starts_with("/error/") {
            Answer::Status(500)
        } else if path == format!("/portal/{checksum}") {
            Answer::Body(Arc::clone(&page))
        } else {
            Answer::Status(404)
        }
    });
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let to = to.to_str().unwrap();
        let from = format!("{}/error", server.url());
        let run = install_sh(
            shell,
            &scratch,
            &["--version", &release.version, "--from", &from, "--to", to],
            &[],
        );
        let line = run.one_line_failure();
        assert!(
            line.starts_with(&format!("install.sh: cannot download '{from}/"))
                && line.contains("500"),
            "{shell:?}: {line}"
        );
        let from = format!("{}/portal", server.url());
        let run = install_sh(
            shell,
            &scratch,
            &["--version", &release.version, "--from", &from, "--to", to],
            &[],
        );
        assert_eq!(
            run.one_line_failure(),
            format!(
                "install.sh: '{from}/{}.sha256' is not a SHA-256 checksum file",
                release.archive_name()
            ),
            "{shell:?}"
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
}

/// This version's release for this machine holding `extra` beside the usual members, or, with
/// `replace`, instead of the members named as one of `extra`.
fn release_with(extra: Vec<Entry>) -> Release {
    let base = small();
    let name = base.name();
    // Refused before it is unpacked: a small stand-in for the binary keeps the test quick.
    let binary = b"#!/bin/sh\necho a stand-in for retry\n".to_vec();
    let names: Vec<String> = extra
        .iter()
        .map(|e| match e {
            Entry::File(n, ..) | Entry::Dir(n) | Entry::Symlink(n, _) | Entry::Hardlink(n, _) => {
                n.clone()
            }
        })
        .collect();
    let mut entries: Vec<Entry> = members(&name, binary)
        .into_iter()
        .filter(|e| match e {
            Entry::File(n, ..) | Entry::Dir(n) => !names.contains(n),
            _ => true,
        })
        .collect();
    entries.extend(extra);
    Release::of(&base.version, &base.target, &entries)
}

#[test]
fn archives_with_dotdot_or_links_out_are_refused_before_anything_is_unpacked() {
    if !shells() {
        return;
    }
    let name = small().name();
    let scratch_for_links = Scratch::new();
    let outside = scratch_for_links.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let outside_str = outside.display().to_string();
    let cases: Vec<(&str, Vec<Entry>, &str)> = vec![
        (
            "a member named with ..",
            vec![Entry::File(
                format!("{name}/../../escaped"),
                b"escaped\n".to_vec(),
                0o644,
            )],
            "holds a path outside",
        ),
        (
            "a member outside the top directory",
            vec![Entry::File(
                "elsewhere".into(),
                b"elsewhere\n".to_vec(),
                0o644,
            )],
            "holds a path outside",
        ),
        (
            "the binary a link to /bin/sh",
            vec![Entry::Symlink(format!("{name}/retry"), "/bin/sh".into())],
            "holds a link or a special file",
        ),
        (
            "a directory linked out, a file written through it",
            vec![
                Entry::Symlink(format!("{name}/doc"), outside_str.clone()),
                Entry::File(
                    format!("{name}/doc/retry.1"),
                    b"through the link\n".to_vec(),
                    0o644,
                ),
            ],
            "holds a link or a special file",
        ),
        (
            "the binary a hard link to another member",
            vec![Entry::Hardlink(
                format!("{name}/retry"),
                format!("{name}/README.md"),
            )],
            "holds a link or a special file",
        ),
    ];
    for (what, extra, says) in cases {
        let bad = release_with(extra);
        let server = serve(&bad);
        each_shell(&Shell::ALL, |shell| {
            let scratch = Scratch::new();
            let to = scratch.path().join("prefix/bin");
            let run = install_sh(
                shell,
                &scratch,
                &[
                    "--version",
                    &bad.version,
                    "--from",
                    server.url(),
                    "--to",
                    to.to_str().unwrap(),
                ],
                &[],
            );
            let line = run.one_line_failure();
            assert_eq!(
                line,
                format!(
                    "install.sh: {} {says}{}",
                    bad.archive_name(),
                    match says {
                        "holds a path outside" => format!(" {name}/ or with '..': refused"),
                        _ => ": refused".to_string(),
                    }
                ),
                "{what}, {shell:?}"
            );
            assert_eq!(scratch.tree(), ["home/", "tmp/"], "{what}, {shell:?}");
            assert_eq!(tree(&outside), Vec::<String>::new(), "{what}, {shell:?}");
        });
    }
}

/// Versions that are shell code, not versions.
const HOSTILE_VERSIONS: &[&str] = &[
    "1.2.3;touch PWNED",
    "$(touch PWNED)",
    "`touch PWNED`",
    "1.2.3 && touch PWNED",
    "1.2.3\ntouch PWNED",
    "1.2.3|touch PWNED",
    "../../../1.2.3",
    "1.2.3-rc.1/../../x",
];

#[test]
fn a_version_with_shell_metacharacters_is_refused_with_one_line() {
    if !shells() {
        return;
    }
    let server = serve(small());
    each_shell(&Shell::ALL, |shell| {
        for version in HOSTILE_VERSIONS {
            let scratch = Scratch::new();
            let to = scratch.path().join("bin");
            let run = install_sh(
                shell,
                &scratch,
                &[
                    "--version",
                    version,
                    "--from",
                    server.url(),
                    "--to",
                    to.to_str().unwrap(),
                ],
                &[],
            );
            let shown = version.replace('\n', "?");
            assert_eq!(
                run.one_line_failure(),
                format!(
                    "install.sh: --version '{shown}' is not a release version (like 1.2.3 or 1.2.3-rc.1)"
                ),
                "{shell:?}"
            );
            assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?} {version:?}");
        }
    });
    for version in HOSTILE_VERSIONS {
        let job = Job::new();
        let run = job.uses_here(version, &[("RETRY_INSTALL_FROM", server.url())]);
        let line = job.failed(&run);
        assert!(
            line.starts_with("::error::retry action: the version input: "),
            "{line}"
        );
        assert!(
            line.ends_with(" is not a release version (like 1.2.3)"),
            "{line}"
        );
        assert!(!job.scratch.path().join("PWNED").exists());
    }
    assert_eq!(server.requests(), Vec::<String>::new());
}

#[test]
fn refused_values_read_the_same_under_every_shell() {
    if !shells() {
        return;
    }
    // A value with an escape, a tab and letters: each unprintable byte a `?`, the rest as given
    // (BusyBox's tr -c '[:print:]' turned letters into `?` too).
    let scratch = Scratch::new();
    each_shell(&Shell::ALL, |shell| {
        let run = install_sh(shell, &scratch, &["--version", "1.2\u{1b}[2J\tbeta"], &[]);
        assert_eq!(
            run.one_line_failure(),
            "install.sh: --version '1.2?[2J?beta' is not a release version (like 1.2.3 or 1.2.3-rc.1)",
            "{shell:?}"
        );
    });
}

#[test]
fn a_tool_cache_and_a_source_with_spaces_quotes_and_percent_signs() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    // The tool cache under a directory named with a space, a quote, `$` and `%`; the files in
    // a file:// directory named the same way.
    let job = Job::new();
    let odd = job.scratch.path().join("it's $HOME %41 here");
    let cache = odd.join("tool cache");
    std::fs::create_dir_all(&cache).unwrap();
    let files = odd.join("release files");
    release.write_to(&files);
    let from = format!("file://{}", files.display());
    let run = job.uses_here(
        "",
        &[
            ("RUNNER_TOOL_CACHE", cache.to_str().unwrap()),
            ("RETRY_INSTALL_FROM", &from),
        ],
    );
    run.ok();
    let path = crate::support::lines(&job.github_output())[0].clone();
    assert!(
        path.starts_with(&format!("path={}", cache.display())),
        "{path}"
    );
    crate::support::version_of(std::path::Path::new(path.strip_prefix("path=").unwrap()));
    // And a failure whose message has `%` in it: escaped as a workflow command's message is
    // (%25), so that the runner shows `%41`, not `A`.
    let job = Job::new();
    let from = format!("{}/a%41b", server.url());
    let run = job.uses_here("", &[("RETRY_INSTALL_FROM", &from)]);
    let line = job.failed(&run);
    assert!(
        line.contains(&format!("cannot download '{}/a%2541b/", server.url())),
        "{line}"
    );
}

#[test]
fn a_download_cut_in_the_middle_fails_the_action_and_leaves_nothing() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serving_archive_as(release, |body| {
        let after = body.len() / 3;
        Answer::Cut { body, after }
    });
    let job = Job::new();
    let run = job.uses_here("", &[("RETRY_INSTALL_FROM", server.url())]);
    assert!(job.failed(&run).contains(&format!(
        "cannot download '{}/{}'",
        server.url(),
        release.archive_name()
    )));
}
