//! `dist/install.sh`'s one line where a path or a URL is odd, under each shell ([`Shell`]) or
//! downloader ([`Downloader`]): a `--to` that starts with `-`, a TMPDIR that is not there, an
//! archive tar cannot read (the cause, not tar's summary), and a user and password in the URL:
//! shown as `***` in every message, and passed to curl and GNU wget where ps cannot see them
//! (no process's command line holds them while the server answers), refused with BusyBox's.

use std::sync::{Arc, Mutex};

use crate::downloaders::Downloader;
use crate::release::{checksum_file, small};
use crate::script::{args, shells};
use crate::server::{Answer, Server};
use crate::support::{Scratch, Shell, each_shell, install_sh, serve};

#[test]
fn a_to_that_starts_with_a_dash_is_a_directory_like_any_other() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        // Relative to the run's directory, the scratch directory.
        install_sh(shell, &scratch, &args(release, server.url(), "-x"), &[]).ok();
        assert!(scratch.path().join("-x/retry").is_file(), "{shell:?}");
    });
}

#[test]
fn a_tmpdir_that_is_not_there_is_one_line() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let gone = scratch.path().join("gone");
        let to = scratch.path().join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[("TMPDIR", gone.to_str().unwrap())],
        );
        assert_eq!(
            run.one_line_failure(),
            format!(
                "install.sh: cannot make a temporary directory in '{}': No such file or directory",
                gone.display()
            ),
            "{shell:?}"
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
    assert_eq!(server.requests(), Vec::<String>::new());
}

#[test]
fn an_archive_tar_cannot_read_says_why_not_that_tar_gave_up() {
    if !shells() {
        return;
    }
    // Bytes that are no gzip, with their right checksum.
    let mut bad = small().clone();
    bad.archive = Arc::new(b"no gzip here\n".repeat(100));
    bad.checksum = Arc::new(checksum_file(&bad.archive_name(), &bad.archive));
    let server = serve(&bad);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(&bad, server.url(), to.to_str().unwrap()),
            &[],
        );
        // GNU tar ends with "tar: Error is not recoverable: exiting now"; the cause is gzip's.
        let cause = if shell == Shell::Busybox {
            "tar: invalid magic"
        } else {
            "gzip: stdin: not in gzip format"
        };
        assert_eq!(
            run.one_line_failure(),
            format!("install.sh: cannot read {}: {cause}", bad.archive_name()),
            "{shell:?}"
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{shell:?}");
    });
}

/// `bytes` in base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The command lines of the machine's processes that hold `needle`.
fn command_lines_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(line) = std::fs::read(entry.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&line).replace('\0', " ");
            if line.contains(needle) {
                found.push(line);
            }
        }
    }
    found
}

#[test]
fn a_password_in_the_url_is_hidden_from_messages_and_from_ps() {
    if !Downloader::all_here() {
        return;
    }
    let release = small().clone();
    // Names no other process holds; the password has an `@` in it, percent-encoded in the URL.
    let user = format!("user{}x{:?}", std::process::id(), std::time::Instant::now())
        .replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let password = format!("pw@{user}");
    let expected = format!("Basic {}", base64(format!("{user}:{password}").as_bytes()));
    // Every request: which command lines hold the user's name, while the downloader waits.
    let seen: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let (log, name) = (Arc::clone(&seen), user.clone());
    let server = Server::start_with_authorization(move |path, auth| {
        log.lock().unwrap().extend(command_lines_with(&name));
        if auth != Some(expected.as_str()) {
            return Answer::Unauthorized;
        }
        match release.file(path.trim_start_matches('/')) {
            Some(bytes) => Answer::Body(bytes),
            None => Answer::Status(404),
        }
    });
    let release = small();
    let from = server
        .url()
        .replace("http://", &format!("http://{user}:pw%40{user}@"));
    let hidden = server.url().replace("http://", "http://***@");
    for downloader in Downloader::ALL {
        let scratch = Scratch::new();
        let to = scratch.path().join("bin");
        let mut env = downloader.env();
        // In the environment, not on the script's own command line.
        env.push(("RETRY_INSTALL_FROM", from.clone()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let install = |version: &str| {
            install_sh(
                downloader.shell(),
                &scratch,
                &["--version", version, "--to", to.to_str().unwrap()],
                &env,
            )
        };
        if downloader == Downloader::Busybox {
            assert_eq!(
                install(&release.version).one_line_failure(),
                format!(
                    "install.sh: RETRY_INSTALL_FROM '{hidden}' has a user or password in it, which BusyBox's wget would show to ps on its command line: install curl or GNU wget"
                )
            );
            continue;
        }
        install(&release.version).ok();
        // A failure names the URL without them.
        let line = install("9.9.9").one_line_failure().to_string();
        assert!(
            line.starts_with(&format!(
                "install.sh: cannot download '{hidden}/retry-tool-9.9.9-"
            )),
            "{downloader:?}: {line}"
        );
        assert!(
            !line.contains(&user) && !line.contains("pw"),
            "{downloader:?}: {line}"
        );
    }
    // Both downloaders were asked (and passed the password: the install succeeded), and no
    // command line held it while they waited for an answer.
    assert!(server.requests().len() >= 4, "{:?}", server.requests());
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new());
}
