//! Unit tests of the header-block reader: which lines are fields, bodies skipped by length,
//! curl -v blocks, and any stream read the same in pieces of any size.

use super::*;
use crate::hints::HintSource;
use std::time::Duration;

mod clients;

fn now() -> SystemTime {
    // 2026-01-01T00:00:00Z
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
}

/// The wait `text` asks for, read in one piece, and its source.
fn wait(text: &str) -> Option<(f64, HintSource)> {
    let mut h = HeaderHints::new();
    h.feed(text.as_bytes(), now());
    h.end(now());
    h.hint()
        .map(|h| (h.wait_from(now()).as_secs_f64(), h.source))
}

/// The hint `text` gives, fed in pieces of `size` bytes.
fn in_pieces(text: &[u8], size: usize) -> Option<Hint> {
    let mut h = HeaderHints::new();
    for piece in text.chunks(size) {
        h.feed(piece, now());
    }
    h.end(now());
    h.hint()
}

const RA: HintSource = HintSource::RetryAfter;

#[test]
fn only_fields_of_a_header_block_count() {
    assert_eq!(
        wait("HTTP/1.1 503 Busy\r\nRetry-After: 7\r\n\r\n"),
        Some((7.0, RA))
    );
    assert_eq!(wait("HTTP/2 429\nretry-after: 7\n"), Some((7.0, RA)));
    assert_eq!(
        wait("HTTP/2 429 \r\nretry-after: 7"),
        Some((7.0, RA)),
        "no line end"
    );
    assert_eq!(wait("Retry-After: 7\r\n"), None, "no status line");
    assert_eq!(
        wait("HTTP/1.1 503\r\n\r\nRetry-After: 7\r\n"),
        None,
        "after the block"
    );
    // Not status lines: the version, the code, the separator, a control character.
    for bad in [
        "HTTPS/1.1 503",
        "HTTP/1.1.1 503",
        "HTTP/11 503",
        "HTTP/1.1 5034",
        "HTTP/1.1 50",
        "HTTP/1.1  503",
        "HTTP/1.1 503\x1bBusy",
        "HTTP/1.1 503 Busy\rRetry-After: 7",
        "xHTTP/1.1 503",
        "<HTTP/1.1 503",
    ] {
        assert_eq!(wait(&format!("{bad}\nRetry-After: 7\n")), None, "{bad:?}");
    }
}

#[test]
fn curl_verbose_blocks_have_their_prefix_and_no_body_here() {
    let verbose = "* Trying\r\n> GET / HTTP/1.1\r\n> Retry-After: 99\r\n>\r\n\
                   < HTTP/1.1 503 Busy\r\n* a note\r\n< RETRY-AFTER:3\r\n\
                   < Content-Length: 400\r\n< \r\n{ [400 bytes data]\r\n";
    assert_eq!(wait(verbose), Some((3.0, RA)));
    // A plain line inside a verbose block is not a field of it.
    assert_eq!(wait("< HTTP/1.1 503\nRetry-After: 9\n< \n"), None);
    // The block ended at "< ": a body of 400 bytes is not awaited on this stream.
    let next = format!("{verbose}< HTTP/1.1 429\r\n< Retry-After: 8\r\n< \r\n");
    assert_eq!(wait(&next), Some((8.0, RA)));
}

#[test]
fn a_body_of_known_length_is_skipped_whole() {
    let quoted = "HTTP/1.1 429 Slow\r\nRetry-After: 3000\r\n\r\n";
    let text = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\nsee:\n{quoted}\
         HTTP/1.1 503 Busy\r\nRetry-After: 4\r\n\r\n",
        quoted.len() + 5
    );
    assert_eq!(wait(&text), Some((4.0, RA)));
    // A body without a newline, the next block right after it.
    let text = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/2 503\nretry-after: 5\n";
    assert_eq!(wait(text), Some((5.0, RA)));
    // Bodies that look like the start of a status line, and no more.
    for body in ["HTTP", "HTTP/x", "HTTP/1.1 200"] {
        let text = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}HTTP/2 503\nretry-after: 5\n",
            body.len()
        );
        assert_eq!(wait(&text), Some((5.0, RA)), "{body}");
    }
}

#[test]
fn a_status_line_right_after_a_block_is_the_next_response() {
    // -D - with -o, -I, a redirect curl followed: blocks with no body between them.
    for length in [1, 5, 7, 500] {
        let text = format!(
            "HTTP/1.1 302 Found\r\nContent-Length: {length}\r\n\r\n\
             HTTP/1.1 503 Busy\r\nRetry-After: 6\r\n\r\n"
        );
        assert_eq!(wait(&text), Some((6.0, RA)), "{length}");
    }
    let text = "< HTTP/1.1 302 Found\r\n< Content-Length: 500\r\n< \r\n\
                < HTTP/1.1 503 Busy\r\n< Retry-After: 6\r\n< \r\n";
    assert_eq!(wait(text), Some((6.0, RA)));
    // An interim response, then the final one; 204 and 304 have no body either.
    for first in [
        "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\n\r\n",
    ] {
        let text = format!("{first}HTTP/1.1 503 Busy\r\nRetry-After: 6\r\n\r\n");
        assert_eq!(wait(&text), Some((6.0, RA)), "{first:?}");
    }
}

#[test]
fn a_body_of_unknown_length_is_read_only_for_status_lines() {
    for fields in [
        "Transfer-Encoding: chunked",
        "Content-Encoding: gzip\r\nContent-Length: 9",
        "Content-Length: 9, 10",
        "X-Other: 1",
    ] {
        let text =
            format!("HTTP/1.1 200 OK\r\n{fields}\r\n\r\nretry-after: 3000\nx-amz-retry-after: 9\n");
        assert_eq!(wait(&text), None, "{fields}");
        let text = format!("{text}HTTP/1.1 503 Busy\r\nRetry-After: 2\r\n\r\n");
        assert_eq!(wait(&text), Some((2.0, RA)), "{fields}");
    }
}

#[test]
fn each_response_pairs_its_own_fields() {
    let epoch = 1_767_225_600 + 45;
    let one = format!("HTTP/1.1 403\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: {epoch}\n");
    assert_eq!(wait(&one), Some((45.0, HintSource::XRateLimitReset)));
    let split = format!(
        "HTTP/1.1 200 OK\nX-RateLimit-Remaining: 0\n\nHTTP/1.1 200 OK\nX-RateLimit-Reset: {epoch}\n"
    );
    assert_eq!(wait(&split), None);
}

#[test]
fn long_and_binary_lines_are_not_fields() {
    // A field line longer than any server sends is skipped, not cut short and read.
    let long = format!(
        "HTTP/1.1 503\nRetry-After: 3{}\n\n",
        "0".repeat(MAX_HEADER_LINE)
    );
    assert_eq!(wait(&long), None);
    let fits = format!(
        "HTTP/1.1 503\nRetry-After: {:>width$}\n",
        "3",
        width = MAX_HEADER_LINE - 13
    );
    assert_eq!(wait(&fits), Some((3.0, RA)));
    let mut binary = b"HTTP/1.1 503\r\nRetry-After: \xff\xfe\r\nX: \0\r\n\r\n".to_vec();
    binary.extend((0..=255u8).cycle().take(100_000));
    assert_eq!(in_pieces(&binary, 4096), None);
}

#[test]
fn pieces_of_any_size_read_the_same() {
    let mut text = Vec::new();
    for (i, block) in [
        "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.1 301 Moved\r\nContent-Length: 10\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 24\r\n\r\nretry-after: 99\nHTTP/1.1",
        "HTTP/2 200\r\ntransfer-encoding: chunked\r\n\r\nretry-after: 98\n",
        "< HTTP/1.1 503\r\n< Retry-After: 3\r\n< \r\n",
        "HTTP/1.1 429 Slow\r\nx-amz-retry-after: 4500\r\nContent-Length: 3\r\n\r\nabc",
        "Retry-After: 97\r\n",
    ]
    .iter()
    .enumerate()
    {
        text.extend_from_slice(block.as_bytes());
        let whole = in_pieces(&text, text.len());
        for size in 1..=17 {
            assert_eq!(in_pieces(&text, size), whole, "{i}: pieces of {size}");
        }
    }
    let hint = in_pieces(&text, 1).unwrap();
    assert_eq!(hint.source, HintSource::AmzRetryAfter);
    assert_eq!(hint.wait_from(now()), Duration::from_millis(4500));
}

/// Pieces of curl's output to build streams from.
const TOKENS: [&str; 21] = [
    "HTTP/1.1 503 Busy\r\n",
    "HTTP/2 429\n",
    "< HTTP/1.1 302\r\n",
    "HTTP/1.1 100 Continue\r\n",
    "Retry-After: 7\r\n",
    "< retry-after: 9\r\n",
    "x-amz-retry-after: 3000\n",
    "Content-Length: 3\r\n",
    "Content-Length: 12\r\n",
    "Transfer-Encoding: chunked\r\n",
    "\r\n",
    "< \r\n",
    "\n",
    "abc",
    "HTTP/",
    "\r",
    // 12 bytes: the whole body a `Content-Length: 12` announces.
    "HTTP/2 404\n\n",
    // curl -f's line for a block it cut, and the same note of -v.
    "curl: (22) The requested URL returned error: 404\n",
    "* The requested URL returned error: 429\n",
    // wget -S's blocks.
    "  HTTP/1.1 503 Busy\n",
    "  Retry-After: 5\n",
];

proptest::proptest! {
    #[test]
    fn any_stream_in_any_pieces_reads_as_in_one(
        tokens in proptest::collection::vec(0..TOKENS.len(), 0..40),
        size in 1usize..20,
    ) {
        let text: Vec<u8> = tokens.iter().flat_map(|&t| TOKENS[t].bytes()).collect();
        proptest::prop_assert_eq!(in_pieces(&text, size), in_pieces(&text, text.len().max(1)));
        proptest::prop_assert_eq!(status(&text, size), status(&text, text.len().max(1)));
    }
}

#[test]
fn many_responses_keep_no_more_than_a_line() {
    let mut h = HeaderHints::new();
    for i in 0..100_000u64 {
        let block = format!(
            "HTTP/1.1 503\r\nRetry-After: {}\r\nContent-Length: 2\r\n\r\nok",
            i % 10
        );
        h.feed(block.as_bytes(), now());
    }
    assert!(
        h.line.capacity() <= LINE_KEPT.max(64),
        "{}",
        h.line.capacity()
    );
    assert_eq!(h.hint().map(|h| h.wait_from(now()).as_secs()), Some(9));
}

/// The status of the last response whose block ended, in `text` fed in pieces of `size`.
fn status(text: &[u8], size: usize) -> Option<u16> {
    let mut h = HeaderHints::new();
    for piece in text.chunks(size) {
        h.feed(piece, now());
    }
    h.end(now());
    h.status().map(|s| s.0)
}

#[test]
fn the_status_is_the_last_ended_block_s_after_redirects() {
    let redirect = b"HTTP/1.1 301 Moved\r\nLocation: /b\r\nContent-Length: 5\r\n\r\n\
                     HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    let through = b"HTTP/1.1 301 Moved\r\nLocation: /b\r\n\r\nHTTP/1.1 503 Busy\r\n\r\n\
                    HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    // `curl -v` on stderr, HTTP/2: lower-case fields, `<` ending the block.
    let verbose = b"* Connected\n> GET / HTTP/2\n> \n< HTTP/2 429 \n< retry-after: 1\n<\n\
                    * Connection left intact\n";
    for size in [1, 2, 7, 4096] {
        assert_eq!(status(redirect, size), Some(404), "{size}");
        assert_eq!(status(through, size), Some(200), "{size}");
        assert_eq!(status(verbose, size), Some(429), "{size}");
    }
}

#[test]
fn a_status_line_without_its_block_s_end_or_inside_a_body_does_not_count() {
    assert_eq!(
        status(b"HTTP/1.1 404 Not Found\r\nServer: x\r\n", 4096),
        None
    );
    assert_eq!(status(b"HTTP/1.1 404 Not Found", 4096), None);
    assert_eq!(status(b"<p>HTTP/1.1 404</p>\n\n", 4096), None);
    // A body of known length holding a whole response: skipped whole.
    let body = b"HTTP/1.1 200 OK\r\n\r\n";
    let mut text = format!(
        "HTTP/1.1 503 Busy\r\nContent-Length: {}\r\n\r\nx",
        body.len() + 1
    )
    .into_bytes();
    text.extend_from_slice(body);
    for size in [1, 3, 4096] {
        assert_eq!(status(&text, size), Some(503), "{size}");
    }
}

#[test]
fn huge_and_malformed_status_codes_are_no_status_lines() {
    for line in [
        "HTTP/1.1 4040 Not Found",
        "HTTP/1.1 40 Short",
        "HTTP/1.1 -404 Negative",
        "HTTP/1.1 99999999999999999999 Huge",
        "HTTP/11.1 404 Version",
        "HTTP/1.1 4x4 Letters",
        "HTTP/1.1 404\u{7}Bell",
    ] {
        let text = format!("{line}\r\n\r\n");
        assert_eq!(status(text.as_bytes(), 4096), None, "{line}");
    }
    // Three digits outside the classes 1xx to 5xx say nothing: the previous status stands.
    assert_eq!(status(b"HTTP/1.1 999 Odd\r\n\r\n", 4096), None);
    assert_eq!(status(b"HTTP/1.1 000 Zero\r\n\r\n", 4096), None);
    assert_eq!(
        status(b"HTTP/1.1 503 Busy\r\n\r\nHTTP/1.1 600 Odd\r\n\r\n", 4096),
        Some(503)
    );
}

#[test]
fn a_body_of_known_length_that_starts_with_a_response_it_quotes_is_a_body() {
    // `curl -i` of a 503 whose body quotes a response, printed whole: the stream ends, or the
    // next response starts (on a line of its own, or right after a body with no line end),
    // exactly where the announced body ends. The hint is a real block's, never the quoted
    // 3000 s.
    let quoted = "HTTP/1.1 404 Not Found\r\nRetry-After: 3000\r\n\r\nbusy";
    for (body, after, want) in [
        (format!("{quoted}\n"), "", (Some(503), Some(4.0))),
        (
            format!("{quoted}\n"),
            "HTTP/1.1 200 OK\r\n\r\n",
            (Some(200), Some(4.0)),
        ),
        (
            quoted.to_string(),
            "HTTP/1.1 200 OK\r\n\r\n",
            (Some(200), Some(4.0)),
        ),
        (
            "HTTP/2 404\n\n".to_string(),
            "HTTP/2 429\nretry-after: 5\n\n",
            (Some(429), Some(5.0)),
        ),
    ] {
        let text = format!(
            "HTTP/1.1 503 Busy\r\nRetry-After: 4\r\nContent-Length: {}\r\n\r\n{body}{after}",
            body.len()
        );
        for size in [1, 2, 5, 13, 4096] {
            let got = (
                status(text.as_bytes(), size),
                in_pieces(text.as_bytes(), size).map(|h| h.wait_from(now()).as_secs_f64()),
            );
            assert_eq!(got, want, "{text:?} in pieces of {size}");
        }
    }
}

#[test]
fn a_quoted_response_is_read_when_the_body_does_not_end_where_announced() {
    // Cut short (curl 18), or followed by something else (an `echo` after curl): nothing says
    // which reading is right, and the status line is taken for the next response, as when
    // curl prints no body (`-D - -o FILE`, `-I`, a redirect it follows).
    let quoted = "HTTP/1.1 404 Not Found\r\n\r\n";
    for (length, after) in [(1000, ""), (quoted.len(), "done\n")] {
        let text = format!("HTTP/1.1 503 Busy\r\nContent-Length: {length}\r\n\r\n{quoted}{after}");
        for size in [1, 3, 4096] {
            assert_eq!(status(text.as_bytes(), size), Some(404), "{text:?}, {size}");
        }
    }
}
