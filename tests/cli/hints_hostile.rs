//! Server hints from hostile or odd output, printed with `printf` as curl would print it: hints
//! too large for a float are past every limit. Each attempt fails with status 1; a hint that
//! was read shows in the progress line.

use crate::helpers::retry;

/// What `retry ARGS -b 0 -c 0 -n 1 -- sh -c "printf FORMAT; exit 1"` said: status, stderr.
fn printed(args: &[&str], format: &str) -> (Option<i32>, String) {
    let out = retry()
        .args(args)
        .args(["-b", "0", "-c", "0", "-n", "1", "--max-hint", "1m", "--"])
        .args(["sh", "-c", &format!("printf '{format}'; exit 1"), "sh"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts the run gave up after attempt 1, a hint named `source` asking for more than
/// `--max-hint`.
fn gave_up_on(run: &(Option<i32>, String), source: &str, what: &str) {
    let (code, stderr) = run;
    assert_eq!(*code, Some(1), "{what}: {stderr}");
    let want =
        format!("retry: giving up after 1 attempt: the server's {source} asks for a wait of ");
    assert!(
        stderr.contains(&want) && stderr.contains("longer than --max-hint (60.000s)"),
        "{what}: {stderr}"
    );
}

#[test]
fn hints_too_large_for_a_float_are_past_every_limit() {
    for digits in [300, 400, 5000] {
        let n = "9".repeat(digits);
        let block =
            |field: &str| format!("HTTP/1.1 429 Too Many Requests\\r\\n{field}\\r\\n\\r\\n");
        let hinted = ["--http-hints"];
        for (field, source) in [
            (format!("Retry-After: {n}"), "Retry-After"),
            (format!("x-amz-retry-after: {n}"), "x-amz-retry-after"),
            (format!("RateLimit: \"q\";r=0;t={n}"), "RateLimit"),
            (
                format!("RateLimit-Remaining: 0\\r\\nRateLimit-Reset: {n}"),
                "RateLimit",
            ),
            (
                format!("X-RateLimit-Remaining: 0\\r\\nX-RateLimit-Reset: {n}"),
                "X-RateLimit-Reset",
            ),
        ] {
            gave_up_on(&printed(&hinted, &block(&field)), source, &field[..20]);
        }
        let delay = ["--delay-from-output", "^wait ([0-9.]+)$"];
        let run = printed(&delay, &format!("wait {n}.5\\n"));
        gave_up_on(&run, "--delay-from-output", "a capture");
    }
    // With no --max-hint, the deadline is the limit.
    let n = "9".repeat(400);
    let out = retry()
        .args([
            "--http-hints",
            "--max-hint",
            "0",
            "-d",
            "30s",
            "-b",
            "0",
            "--",
        ])
        .args(["sh", "-c"])
        .arg(format!(
            "printf 'HTTP/2 503\\r\\nretry-after: {n}\\r\\n\\r\\n'; exit 1"
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("giving up after 1 attempt: the next delay (")
            && stderr.contains("would end at or past the deadline"),
        "{stderr}"
    );
}
