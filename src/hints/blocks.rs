//! Which bytes of an attempt's output are HTTP response header fields, for `--http-hints`.
//!
//! A header block starts at a status line (`HTTP/1.1 503 Service Unavailable`, `HTTP/2 429`,
//! after `< ` as `curl -v` prints what it received) and ends at the empty line after its fields
//! (RFC 9112, section 2.1, <https://www.rfc-editor.org/rfc/rfc9112#section-2.1>; the status
//! line, section 4). Only the fields of a header block are read: not lines before any status
//! line, not a request curl sent (`> `), not a body.
//!
//! A body printed after its block in the same stream (`curl -i`, or `-D -` without `-o`) is
//! skipped whole when its length is known: a `Content-Length` without a `Transfer-Encoding` or
//! `Content-Encoding` (curl decodes those, which changes the length). A status line right
//! after a block is the next response, not that body: curl prints no body with `-D - -o FILE`
//! or `-I`, nor for a redirect it follows. A body of unknown length (chunked, compressed, or
//! read to the end of the connection) is passed over line by line, and a status line in it
//! starts a new response: such a body holding a status line and header lines can pass for a
//! response (`-o FILE` keeps bodies out of the output).
//!
//! The stream is read in chunks as they arrive, whatever their boundaries; at most
//! [`MAX_HEADER_LINE`] bytes of a line are kept, and outside a header block a line is kept only
//! while it may still be a status line.

use std::time::SystemTime;

use super::fields::Response;
use super::{Hint, MAX_HEADER_LINE};

/// What `curl -v` prints before each line of a response it received.
const VERBOSE: &[u8] = b"< ";
/// How a status line starts: plainly, or after `curl -v`'s `< `.
const STATUS_STARTS: [&[u8]; 2] = [b"HTTP/", b"< HTTP/"];
/// The longest of [`STATUS_STARTS`].
const STATUS_START_MAX: usize = 7;
/// Bytes of a line kept: a field of [`MAX_HEADER_LINE`] bytes with `< ` and `\r`, and one
/// more, so that a longer line shows as cut.
const LINE_KEPT: usize = MAX_HEADER_LINE + VERBOSE.len() + 2;

/// Where in a response the stream is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// Not in a header block: only a status line matters (before any response, after a body
    /// of unknown length, after a response without one).
    #[default]
    Outside,
    /// In a header block: field lines, up to the empty line.
    Headers,
    /// In a body of known length, `left` bytes still to come; `first` while none of it has
    /// been seen (a status line there means the body is not in this stream).
    Body { left: u64, first: bool },
}

/// Reads one stream of an attempt's output for the header blocks of HTTP responses and keeps
/// the latest hint (see the module doc).
#[derive(Debug, Default)]
pub struct HeaderHints {
    state: State,
    /// The current line's first bytes (at most [`LINE_KEPT`]).
    line: Vec<u8>,
    /// Bytes of the current line seen so far, without its `\n`.
    line_len: usize,
    /// The current line cannot be a status line and is outside a header block: not kept.
    skip_line: bool,
    /// The fields of the current response.
    response: Response,
    best: Option<Hint>,
}

impl HeaderHints {
    /// A reader that has seen nothing.
    pub fn new() -> HeaderHints {
        HeaderHints::default()
    }

    /// Reads the next bytes of the stream, received at `now` (the origin of a hint given as a
    /// delay).
    pub fn feed(&mut self, mut data: &[u8], now: SystemTime) {
        while !data.is_empty() {
            let used = match self.state {
                State::Body { left, first: false } => self.skip_body(left, data.len()),
                State::Body { left, first: true } => self.probe_body(left, data, now),
                State::Outside | State::Headers => self.take_line(data, now),
            };
            data = &data[used..];
        }
    }

    /// The end of the stream: a last field line without a line end still counts.
    pub fn end(&mut self, now: SystemTime) {
        if self.state == State::Headers && self.line_len > 0 {
            self.end_line(now);
        }
    }

    /// The latest hint seen so far.
    pub fn hint(&self) -> Option<Hint> {
        self.best
    }

    /// Passes over up to `available` bytes of a body with `left` bytes to come; returns how
    /// many.
    fn skip_body(&mut self, left: u64, available: usize) -> usize {
        let n = usize::try_from(left).map_or(available, |left| left.min(available));
        self.state = after_body_bytes(left, n);
        n
    }

    /// Reads the first bytes after a header block announcing `left` bytes of body: a status
    /// line there is the next response (the body is not in this stream); anything else is the
    /// body. Returns how many bytes of `data` it used.
    fn probe_body(&mut self, left: u64, data: &[u8], now: SystemTime) -> usize {
        let end = memchr::memchr(b'\n', data);
        let part = &data[..end.unwrap_or(data.len())];
        let mut used = 0;
        // One byte at a time while they may still start a status line.
        while self.line.len() < STATUS_START_MAX && used < part.len() {
            self.line.push(part[used]);
            self.line_len += 1;
            used += 1;
            if !may_start_status(&self.line) {
                self.body_seen(left, false, now);
                return used;
            }
        }
        // The line starts like a status line: read it whole to tell.
        self.keep(&part[used..]);
        let Some(newline) = end else {
            return data.len();
        };
        match self.whole_line().and_then(status_line) {
            Some((code, verbose)) => {
                self.clear_line();
                self.start_response(code, verbose);
            }
            None => self.body_seen(left, true, now),
        }
        newline + 1
    }

    /// The line probed so far (and its `\n` when `newline`) began a body of `left` bytes.
    /// Where the body ends within it (a body shorter than its first line, the next response
    /// right after it), the rest is read again as what follows the body.
    fn body_seen(&mut self, left: u64, newline: bool, now: SystemTime) {
        let seen = self.line_len + usize::from(newline);
        let after = usize::try_from(left)
            .ok()
            .filter(|&body| body < seen && self.line_len == self.line.len())
            .map(|body| {
                let mut rest = self.line.get(body..).unwrap_or_default().to_vec();
                if newline {
                    rest.push(b'\n');
                }
                rest
            });
        self.clear_line();
        self.state = after_body_bytes(left, seen);
        if let Some(rest) = after {
            self.feed(&rest, now);
        }
    }

    /// Reads bytes of a line outside a body, up to and with its `\n`; returns how many.
    fn take_line(&mut self, data: &[u8], now: SystemTime) -> usize {
        let end = memchr::memchr(b'\n', data);
        let part = &data[..end.unwrap_or(data.len())];
        if !self.skip_line {
            self.keep(part);
            // Outside a header block only a status line matters: the rest of any other line
            // is not kept.
            if self.state == State::Outside && !may_start_status(&self.line) {
                self.skip_line = true;
            }
        } else {
            self.line_len = self.line_len.saturating_add(part.len());
        }
        match end {
            Some(newline) => {
                self.end_line(now);
                newline + 1
            }
            None => data.len(),
        }
    }

    fn keep(&mut self, part: &[u8]) {
        let room = LINE_KEPT.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..part.len().min(room)]);
        self.line_len = self.line_len.saturating_add(part.len());
    }

    /// The current line without a trailing `\r`, if it was kept whole.
    fn whole_line(&self) -> Option<&[u8]> {
        (self.line_len == self.line.len())
            .then(|| self.line.strip_suffix(b"\r").unwrap_or(&self.line))
    }

    fn clear_line(&mut self) {
        self.line.clear();
        self.line_len = 0;
        self.skip_line = false;
    }

    /// A line outside a body ended.
    fn end_line(&mut self, now: SystemTime) {
        if !self.skip_line && self.line_len == self.line.len() {
            // Taken out and put back: read without copying.
            let line = std::mem::take(&mut self.line);
            let trimmed = line.strip_suffix(b"\r").unwrap_or(&line);
            if let Some((code, verbose)) = status_line(trimmed) {
                self.start_response(code, verbose);
            } else if self.state == State::Headers {
                self.header_line(trimmed, now);
            }
            self.line = line;
        }
        self.clear_line();
    }

    fn start_response(&mut self, code: u16, verbose: bool) {
        self.response = Response::new(code, verbose);
        self.state = State::Headers;
    }

    /// A line of a header block that is not a status line: a field, or the empty line that
    /// ends the block.
    fn header_line(&mut self, line: &[u8], now: SystemTime) {
        let field = if self.response.verbose {
            match line.strip_prefix(VERBOSE) {
                Some(field) => field,
                None if line == b"<" => b"",
                // Something else `curl -v` printed within the block (`* ` notes).
                None => return,
            }
        } else {
            line
        };
        if field.is_empty() {
            let body = self.response.body_length();
            self.state = if body > 0 {
                State::Body {
                    left: body,
                    first: true,
                }
            } else {
                State::Outside
            };
        } else if field.len() <= MAX_HEADER_LINE {
            self.response.field(field, now, &mut self.best);
        }
    }
}

/// The state once `n` more bytes of a body with `left` bytes to come have passed.
fn after_body_bytes(left: u64, n: usize) -> State {
    match left.saturating_sub(n as u64) {
        0 => State::Outside,
        left => State::Body { left, first: false },
    }
}

/// Whether `line` (its first bytes so far) may still start a status line.
fn may_start_status(line: &[u8]) -> bool {
    STATUS_STARTS.iter().any(|start| {
        let n = line.len().min(start.len());
        line[..n] == start[..n]
    })
}

/// The status code of a status line (`HTTP/1.1 503 Service Unavailable`, `HTTP/2 429`, with a
/// reason phrase or none), and whether `curl -v` printed it (after `< `); `None` for any other
/// line: the version is one digit or two with a dot, the code three digits, the reason phrase
/// free of control characters but tabs (RFC 9112, section 4).
fn status_line(line: &[u8]) -> Option<(u16, bool)> {
    let (line, verbose) = match line.strip_prefix(VERBOSE) {
        Some(rest) => (rest, true),
        None => (line, false),
    };
    let rest = line.strip_prefix(b"HTTP/")?;
    let space = memchr::memchr(b' ', rest)?;
    let (version, rest) = (&rest[..space], &rest[space + 1..]);
    let version_ok = match version {
        [major] => major.is_ascii_digit(),
        [major, b'.', minor] => major.is_ascii_digit() && minor.is_ascii_digit(),
        _ => false,
    };
    if !version_ok || rest.len() < 3 || !rest[..3].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let reason_ok = match &rest[3..] {
        [] => true,
        [b' ', reason @ ..] => reason
            .iter()
            .all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)),
        _ => false,
    };
    let code = rest[..3]
        .iter()
        .fold(0u16, |code, d| code * 10 + u16::from(d - b'0'));
    reason_ok.then_some((code, verbose))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::HintSource;
    use std::time::Duration;

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
            let text = format!(
                "HTTP/1.1 200 OK\r\n{fields}\r\n\r\nretry-after: 3000\nx-amz-retry-after: 9\n"
            );
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
    const TOKENS: [&str; 16] = [
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
    ];

    proptest::proptest! {
        #[test]
        fn any_stream_in_any_pieces_reads_as_in_one(
            tokens in proptest::collection::vec(0..TOKENS.len(), 0..40),
            size in 1usize..20,
        ) {
            let text: Vec<u8> = tokens.iter().flat_map(|&t| TOKENS[t].bytes()).collect();
            proptest::prop_assert_eq!(in_pieces(&text, size), in_pieces(&text, text.len().max(1)));
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
}
