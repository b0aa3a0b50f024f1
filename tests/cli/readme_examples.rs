//! The README's HTTP and pipeline examples, run as written against the local test server:
//! the quick start, the pipeline, the HTTP status, `Retry-After` and idempotency-key examples
//! (markers and helpers in `readme.rs`).

use crate::helpers::http::Request;
use crate::readme::{example, readme_output, server, sh};
use crate::tools::{self, require};

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
