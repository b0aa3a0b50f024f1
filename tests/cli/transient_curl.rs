//! `--transient` with the real curl against servers on 127.0.0.1 (issue 43): a 503 with `-f`
//! is `http` and retried, a 404 is given up at once with curl's 22, a server that never
//! answers within `--max-time` is `timeout` (28), one that closes without a reply is `reset`
//! (52).

use std::time::Duration;

use crate::helpers::http::{HttpServer, RawServer, Reply, without_proxies};
use crate::helpers::retry;
use crate::tools::{self, require};

/// retry's stderr and status for `--transient -n 1 -b 1ms -- curl ARGS`.
fn transient_curl(args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = retry();
    without_proxies(&mut cmd);
    let out = cmd
        .args(["--transient", "-n", "1", "-b", "1ms", "--", "curl"])
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_503_is_http_and_retried_a_404_is_given_up_at_once() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = HttpServer::start(|path, _, _| match path {
        "/busy" => Reply::new(503, "busy\n"),
        _ => Reply::new(404, "no\n"),
    });
    let (code, err) = transient_curl(&["-fsS", &format!("{}/busy", server.url())]);
    assert_eq!(code, Some(22), "{err}");
    assert!(err.contains("(transient: http); retrying in"), "{err}");
    assert!(err.contains("gave up after 2 attempts"), "{err}");
    let (code, err) = transient_curl(&["-fsS", &format!("{}/typo", server.url())]);
    assert_eq!(code, Some(22), "{err}");
    assert!(err.contains("gave up after 1 attempt"), "{err}");
    assert!(err.contains("not known to be transient"), "{err}");
}

#[test]
fn a_server_that_never_answers_is_a_timeout() {
    if !require(&[tools::CURL]) {
        return;
    }
    let silent = RawServer::start(vec![Vec::new()], Duration::from_secs(30));
    let (code, err) = transient_curl(&["-sS", "--max-time", "0.3", silent.url()]);
    assert_eq!(code, Some(28), "{err}");
    assert!(err.contains("(transient: timeout); retrying in"), "{err}");
    assert_eq!(silent.connections(), 2, "{err}");
}

#[test]
fn a_server_that_closes_without_a_reply_is_a_reset() {
    if !require(&[tools::CURL]) {
        return;
    }
    let closing = RawServer::start(vec![Vec::new()], Duration::ZERO);
    let (code, err) = transient_curl(&["-sS", closing.url()]);
    assert_eq!(code, Some(52), "{err}");
    assert!(err.contains("(transient: reset); retrying in"), "{err}");
}

/// git clone over HTTP: a server answering 503 is `http`, retried; a repository that does not
/// exist (404) is given up at once with git's 128.
#[test]
fn git_clone_of_a_busy_server_is_retried_of_a_missing_repository_not() {
    if !require(&[tools::GIT]) {
        return;
    }
    let server = HttpServer::start(|path, _, _| {
        if path.starts_with("/busy/") {
            Reply::new(503, "busy\n")
        } else {
            Reply::new(404, "no\n")
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let clone = |repo: &str| {
        let mut cmd = retry();
        without_proxies(&mut cmd);
        let target = dir.path().join(repo.replace('/', "-"));
        let out = cmd
            .env("GIT_TERMINAL_PROMPT", "0")
            .args([
                "--transient",
                "-n",
                "1",
                "-b",
                "1ms",
                "--",
                "git",
                "clone",
                "-q",
            ])
            .arg(format!("{}/{repo}.git", server.url()))
            .arg(target)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, err) = clone("busy/repo");
    assert_eq!(code, Some(128), "{err}");
    assert!(err.contains("(transient: http); retrying in"), "{err}");
    let (code, err) = clone("org/typo");
    assert_eq!(code, Some(128), "{err}");
    assert!(err.contains("gave up after 1 attempt"), "{err}");
}
