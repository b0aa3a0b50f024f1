//! `dist/install.sh`'s failures, under each shell ([`Shell`]): a read-only `--to` (a read-only
//! bind mount as root), a file where a directory should be, a failure after directories were
//! made, an unknown platform, a missing downloader, a checksum mismatch, a 404, a download cut
//! in the middle, bad arguments. Each is one line on stderr and exit status 1, and leaves
//! nothing behind: no file, no directory the script made, nothing in TMPDIR.
//! (`script.rs` holds the installs that succeed; `adversarial.rs` what an adversary sends.)

use std::path::Path;
use std::process::Command;

use crate::release::{Release, members, repository, small};
use crate::script::{args, shells};
use crate::server::{Answer, Server};
use crate::support::{
    Scratch, Shell, each_shell, install_sh, is_root, make_executable, run, serve, shell_path,
};
use crate::tools::{self, require};

#[test]
fn a_read_only_to_fails_with_one_line_and_leaves_nothing() {
    if !shells() || !require(&[tools::UNSHARE]) {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        std::fs::create_dir(&to).unwrap();
        let before = scratch.tree();
        // As root, a mode does not stop a write: the directory is made read-only by a read-only
        // bind mount of it, in a mount namespace of the run's own; otherwise by its mode.
        let run = if is_root() {
            read_only_run(
                shell,
                &scratch,
                &to,
                &args(release, server.url(), to.to_str().unwrap()),
            )
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o555)).unwrap();
            install_sh(
                shell,
                &scratch,
                &args(release, server.url(), to.to_str().unwrap()),
                &[],
            )
        };
        let line = run.one_line_failure();
        assert_eq!(
            line,
            format!(
                "install.sh: cannot write to '{}': {}",
                to.display(),
                if is_root() {
                    "Read-only file system"
                } else {
                    "Permission denied"
                }
            ),
            "{shell:?}"
        );
        assert_eq!(scratch.tree(), before, "{shell:?}");
    });
}

/// install.sh with `args` under `shell`, with `dir` bound read-only onto itself in a mount
/// namespace of its own (root only).
fn read_only_run(
    shell: Shell,
    scratch: &Scratch,
    dir: &Path,
    args: &[&str],
) -> crate::support::Run {
    let inner = shell.command(&repository().join("dist/install.sh"));
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@""#)
        .arg("sh")
        .arg(dir)
        .arg(inner.get_program())
        .args(inner.get_args())
        .args(args);
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    crate::support::hermetic(&mut cmd, scratch);
    run(cmd)
}

#[test]
fn a_to_under_a_file_fails_with_one_line_and_leaves_nothing() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        std::fs::write(
            scratch.path().join("file"),
            "a file where a directory should be\n",
        )
        .unwrap();
        let before = scratch.tree();
        let to = scratch.path().join("file/sub/bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[],
        );
        let line = run.one_line_failure();
        let file = scratch.path().join("file");
        assert_eq!(
            line,
            format!(
                "install.sh: cannot make the directory '{}': File exists",
                file.display()
            ),
            "{shell:?}"
        );
        assert_eq!(scratch.tree(), before, "{shell:?}");
    });
}

#[test]
fn a_failure_after_some_directories_were_made_removes_them() {
    if !shells() || !require(&[tools::UNSHARE]) || !is_root() {
        return;
    }
    // PREFIX/bin is made and written; PREFIX/share is a read-only mount: the binary staged in
    // bin must go, and so must bin, which the script made.
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let share = scratch.path().join("prefix/share");
        std::fs::create_dir_all(&share).unwrap();
        let before = scratch.tree();
        let to = scratch.path().join("prefix/bin");
        let run = read_only_run(
            shell,
            &scratch,
            &share,
            &args(release, server.url(), to.to_str().unwrap()),
        );
        let line = run.one_line_failure();
        assert_eq!(
            line,
            format!(
                "install.sh: cannot make the directory '{}': Read-only file system",
                share.join("man").display()
            ),
            "{shell:?}"
        );
        assert_eq!(scratch.tree(), before, "{shell:?}");
    });
}

#[test]
fn an_unknown_platform_is_one_line_naming_uname() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        // A uname that says SunOS sparc64, first on PATH.
        let fake = scratch.path().join("fake");
        std::fs::create_dir(&fake).unwrap();
        let uname = fake.join("uname");
        std::fs::write(
            &uname,
            "#!/bin/sh\ncase $1 in -s) echo SunOS ;; -m) echo sparc64 ;; esac\n",
        )
        .unwrap();
        make_executable(&uname);
        let path = format!("{}:{}", fake.display(), shell_path(shell));
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
            &[("PATH", &path)],
        );
        let line = run.one_line_failure();
        assert!(
            line.starts_with("install.sh: no retry release for this platform (uname -s 'SunOS', uname -m 'sparc64')"),
            "{shell:?}: {line}"
        );
        assert!(!to.exists(), "{shell:?}");
    });
    assert_eq!(server.requests(), Vec::<String>::new());
}

#[test]
fn a_missing_downloader_is_one_line_and_other_targets_are_taken_with_target() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    // A PATH with the tools install.sh needs, but neither curl nor wget.
    let scratch = Scratch::new();
    let bin = scratch.path().join("some tools");
    std::fs::create_dir(&bin).unwrap();
    for tool in crate::downloaders::SCRIPT_TOOLS {
        std::os::unix::fs::symlink(crate::support::which(tool), bin.join(tool)).unwrap();
    }
    let to = scratch.path().join("bin");
    for shell in [Shell::Dash, Shell::Bash, Shell::ZshSh] {
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[("PATH", bin.to_str().unwrap())],
        );
        assert_eq!(
            run.one_line_failure(),
            "install.sh: needs curl or wget to download, and finds neither on PATH"
        );
    }
    assert!(!to.exists());
    // A file:// source needs neither; --target takes another platform's archive.
    let other = Release::of(
        &release.version,
        "x86_64-unknown-freebsd",
        &members(
            &format!("retry-tool-{}-x86_64-unknown-freebsd", release.version),
            b"#!/bin/sh\necho a FreeBSD binary\n".to_vec(),
        ),
    );
    let dir = scratch.path().join("release files");
    other.write_to(&dir);
    let from = format!("file://{}", dir.display());
    let run = install_sh(
        Shell::Dash,
        &scratch,
        &[
            "--version",
            &release.version,
            "--from",
            &from,
            "--to",
            to.to_str().unwrap(),
            "--target",
            "x86_64-unknown-freebsd",
        ],
        &[("PATH", bin.to_str().unwrap())],
    );
    run.ok();
    assert!(run.stdout.contains("(x86_64-unknown-freebsd)"), "{run:#?}");
    assert_eq!(
        std::fs::read(to.join("retry")).unwrap(),
        b"#!/bin/sh\necho a FreeBSD binary\n"
    );
}

#[test]
fn a_checksum_mismatch_is_one_line_and_installs_nothing() {
    if !shells() {
        return;
    }
    let release = small();
    let mut wrong = release.clone();
    wrong.checksum = std::sync::Arc::new(crate::release::checksum_file(
        &release.archive_name(),
        b"other bytes",
    ));
    let server = serve(&wrong);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[],
        );
        let line = run.one_line_failure();
        assert!(
            line.starts_with(&format!(
                "install.sh: checksum mismatch: {} has SHA-256 {}, its .sha256 says ",
                release.archive_name(),
                crate::release::sha256(&release.archive)
            )),
            "{shell:?}: {line}"
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
}

#[test]
fn a_missing_release_404_is_one_line_naming_the_url() {
    if !shells() {
        return;
    }
    let server = Server::start(|_| Answer::Status(404));
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &[
                "--version",
                "9.8.7",
                "--from",
                server.url(),
                "--to",
                to.to_str().unwrap(),
            ],
            &[],
        );
        let line = run.one_line_failure();
        let url = format!(
            "{}/retry-tool-9.8.7-{}.tar.gz.sha256",
            server.url(),
            crate::release::host().0
        );
        assert!(
            line.starts_with(&format!("install.sh: cannot download '{url}': ")),
            "{shell:?}: {line}"
        );
        assert!(line.contains("404"), "{shell:?}: {line}");
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
}

#[test]
fn a_download_cut_in_the_middle_is_one_line_and_installs_nothing() {
    if !shells() {
        return;
    }
    let release = small();
    let (archive, checksum) = (
        release.archive_name(),
        format!("{}.sha256", release.archive_name()),
    );
    let (body, sums) = (
        std::sync::Arc::clone(&release.archive),
        std::sync::Arc::clone(&release.checksum),
    );
    let server = Server::start(move |path| {
        let file = path.trim_start_matches('/');
        if file == checksum {
            Answer::Body(std::sync::Arc::clone(&sums))
        } else if file == archive {
            Answer::Cut {
                body: std::sync::Arc::clone(&body),
                after: body.len() / 2,
            }
        } else {
            Answer::Status(404)
        }
    });
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[],
        );
        let line = run.one_line_failure();
        // curl and BusyBox's wget see the connection close early; were a short body taken as
        // whole, the checksum would not match.
        assert!(
            line.starts_with(&format!(
                "install.sh: cannot download '{}/{}': ",
                server.url(),
                release.archive_name()
            )) || line.starts_with("install.sh: checksum mismatch: "),
            "{shell:?}: {line}"
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
}

#[test]
fn bad_arguments_are_one_line_naming_the_flag_or_variable() {
    if !require(&[tools::DASH]) {
        return;
    }
    let scratch = Scratch::new();
    // The arguments, the environment, the one line.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (
            &["--to"],
            &[],
            "install.sh: --to needs a value (install.sh --help)",
        ),
        (&["--to", ""], &[], "install.sh: --to is empty"),
        (&["--version="], &[], "install.sh: --version is empty"),
        (
            &["--frm", "x"],
            &[],
            "install.sh: unknown argument '--frm' (install.sh --help lists the options)",
        ),
        (
            &["--from", "http://x"],
            &[],
            "install.sh: no --version given, and this copy of install.sh belongs to no release (use the one attached to a release, or give --version)",
        ),
        (
            &["--version", "1.2.3"],
            &[],
            "install.sh: no --from given (nor RETRY_INSTALL_FROM), and this copy of install.sh belongs to no release (use the one attached to a release, or give --from)",
        ),
        (
            &["--version", "1.2"],
            &[],
            "install.sh: --version '1.2' is not a release version (like 1.2.3 or 1.2.3-rc.1)",
        ),
        (
            &["--version", "1.2.3", "--from", "ftp://x/y"],
            &[],
            "install.sh: --from 'ftp://x/y' is not an http://, https:// or file:/// URL of a directory",
        ),
        (
            &["--version", "1.2.3"],
            &[("RETRY_INSTALL_FROM", "/srv/files")],
            "install.sh: RETRY_INSTALL_FROM '/srv/files' is not an http://, https:// or file:/// URL of a directory",
        ),
        (
            &[
                "--version",
                "1.2.3",
                "--from",
                "http://x",
                "--target",
                "x86_64-pc-windows-gnu",
            ],
            &[],
            "install.sh: --target 'x86_64-pc-windows-gnu' has no .tar.gz; there are: x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin x86_64-unknown-freebsd",
        ),
        (
            &["--version", "1.2.3", "--from", "http://x"],
            &[("RETRY_INSTALL_STALL_TIMEOUT", "0")],
            "install.sh: RETRY_INSTALL_STALL_TIMEOUT '0' is not a number of seconds (1 to 3600)",
        ),
        (
            &["--version", "1.2.3", "--from", "http://x"],
            &[("RETRY_INSTALL_STALL_TIMEOUT", "9999")],
            "install.sh: RETRY_INSTALL_STALL_TIMEOUT '9999' is not a number of seconds (1 to 3600)",
        ),
    ];
    for (args, env, expected) in cases {
        let run = install_sh(Shell::Dash, &scratch, args, env);
        assert_eq!(run.one_line_failure(), *expected, "{args:?} {env:?}");
        assert!(run.stdout.is_empty(), "{run:#?}");
    }
    // --from beats RETRY_INSTALL_FROM (the bad variable is not even read).
    let run = install_sh(
        Shell::Dash,
        &scratch,
        &["--version", "1.2.3", "--from", "ftp://a"],
        &[("RETRY_INSTALL_FROM", "/srv/files")],
    );
    assert!(
        run.one_line_failure()
            .starts_with("install.sh: --from 'ftp://a'")
    );
}
