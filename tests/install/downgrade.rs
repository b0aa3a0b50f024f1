//! Redirects under each downloader ([`Downloader`]), from an https:// source served by
//! `tls_relay.py`: followed while they stay https://, refused when one leads to http:// (as
//! docs/install.md promises: "from https:// only to https://"), and GNU wget's, which the
//! script follows itself, followed as curl follows them: relative Locations, at most 10, no
//! other scheme. curl and GNU wget never make the plain-HTTP request; BusyBox's wget, which
//! cannot be told not to follow, has made it, and its file is refused.

use std::sync::{Arc, OnceLock};

use crate::downloaders::{Downloader, Tls};
use crate::release::small;
use crate::server::{Answer, Server};
use crate::support::{Scratch, install_sh};

/// A server for the small release, over http:// and (through the relay) https://: `/FILE` the
/// file, `/moved/FILE` a redirect to `/FILE`, `/down/FILE` to `http://127.0.0.1:PORT/FILE`
/// (itself, in plain HTTP), `/up/FILE` to `https://localhost:PORT/FILE`, `/relative/a/FILE` to
/// `../../FILE` (`/FILE`), `/ftp/FILE` to an ftp:// URL, `/loop/FILE` to itself.
fn redirecting_server() -> (Server, Tls) {
    let release = small().clone();
    let urls: Arc<OnceLock<(String, String)>> = Arc::new(OnceLock::new());
    let own = Arc::clone(&urls);
    let server = Server::start(move |path| {
        if let Some(rest) = path.strip_prefix("/moved/") {
            Answer::Redirect(format!("/{rest}"))
        } else if let Some(rest) = path.strip_prefix("/down/") {
            Answer::Redirect(format!("{}/{rest}", own.get().unwrap().0))
        } else if let Some(rest) = path.strip_prefix("/up/") {
            Answer::Redirect(format!("{}/{rest}", own.get().unwrap().1))
        } else if let Some(rest) = path.strip_prefix("/relative/a/") {
            Answer::Redirect(format!("../../{rest}"))
        } else if let Some(rest) = path.strip_prefix("/ftp/") {
            Answer::Redirect(format!("ftp://127.0.0.1/{rest}"))
        } else if path.starts_with("/loop/") {
            Answer::Redirect(path.to_string())
        } else {
            match release.file(path.trim_start_matches('/')) {
                Some(bytes) => Answer::Body(bytes),
                None => Answer::Status(404),
            }
        }
    });
    let tls = Tls::start(&server);
    urls.set((server.url().to_string(), tls.url())).unwrap();
    (server, tls)
}

#[test]
fn an_https_source_is_followed_to_https_and_never_to_http() {
    if !Downloader::all_here() {
        return;
    }
    let release = small();
    let (server, tls) = redirecting_server();
    let archive = release.archive_name();
    for downloader in Downloader::ALL {
        let env = downloader.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let scratch = Scratch::new();
        let to = scratch.path().join("prefix/bin");
        let to = to.to_str().unwrap();
        // Followed while it stays https://: the certificate is trusted, the redirect taken.
        let moved = format!("{}/moved", tls.url());
        let run = install_sh(
            downloader.shell(),
            &scratch,
            &["--version", &release.version, "--from", &moved, "--to", to],
            &env,
        );
        run.ok();
        std::fs::remove_dir_all(scratch.path().join("prefix")).unwrap();
        // To http://: refused, with one line, and nothing installed.
        let before = server.requests().len();
        let from = format!("{}/down", tls.url());
        let run = install_sh(
            downloader.shell(),
            &scratch,
            &["--version", &release.version, "--from", &from, "--to", to],
            &env,
        );
        let line = run.one_line_failure();
        assert!(
            line.starts_with(&format!(
                "install.sh: cannot download '{from}/{archive}.sha256': "
            )),
            "{downloader:?}: {line}"
        );
        if downloader != Downloader::Curl {
            assert!(
                line.ends_with(&format!(
                    "it redirects to '{}/{archive}.sha256', not https://: refused",
                    server.url()
                )),
                "{downloader:?}: {line}"
            );
        }
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{downloader:?}");
        // curl and GNU wget refuse before the plain request; BusyBox's wget has made it.
        let plain = server.requests()[before..]
            .iter()
            .filter(|p| **p == format!("/{archive}.sha256"))
            .count();
        assert_eq!(
            plain,
            usize::from(downloader == Downloader::Busybox),
            "{downloader:?}: {:?}",
            server.requests()
        );
    }
}

#[test]
fn gnu_wget_s_redirects_are_followed_as_curl_follows_them() {
    if !Downloader::all_here() {
        return;
    }
    let release = small();
    let (server, tls) = redirecting_server();
    let env = Downloader::GnuWget.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let scratch = Scratch::new();
    let to = scratch.path().join("tools");
    let to = to.to_str().unwrap();
    // A relative Location (../../FILE), over plain HTTP and over https, and one from http:// to
    // https:// (an upgrade is no downgrade).
    let upgrade = format!("{}/up", server.url());
    for from in [
        format!("{}/relative/a", server.url()),
        format!("{}/relative/a", tls.url()),
        upgrade,
    ] {
        let run = install_sh(
            Downloader::GnuWget.shell(),
            &scratch,
            &["--version", &release.version, "--from", &from, "--to", to],
            &env,
        );
        run.ok();
        std::fs::remove_dir_all(scratch.path().join("tools")).unwrap();
    }
    // ftp://, and a loop: refused, the loop after 10 redirects (11 requests).
    for (bad, says) in [
        ("ftp", "not http:// or https://: refused"),
        ("loop", "more than 10 redirects"),
    ] {
        let before = server.requests().len();
        let from = format!("{}/{bad}", server.url());
        let run = install_sh(
            Downloader::GnuWget.shell(),
            &scratch,
            &["--version", &release.version, "--from", &from, "--to", to],
            &env,
        );
        let line = run.one_line_failure();
        assert!(
            line.starts_with(&format!("install.sh: cannot download '{from}/"))
                && line.ends_with(says),
            "{bad}: {line}"
        );
        assert_eq!(scratch.tree(), ["home/", "tmp/"], "{bad}");
        if bad == "loop" {
            assert_eq!(server.requests().len() - before, 11);
        }
    }
}
