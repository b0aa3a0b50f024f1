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
//! or `-I`, nor for a redirect it follows. Unless the body itself starts with a response it
//! quotes (`curl -i` of a 503 whose body is `HTTP/1.1 404 Not Found` and an empty line): both
//! readings go on side by side, and the one that takes the bytes for the body is kept when the
//! stream ends, or a status line starts, exactly where that body ends (cut short, or followed
//! by anything else, the quoted response counts). A body of unknown length (chunked,
//! compressed, or read to the end of the connection) is passed over line by line, and a
//! status line in it starts a new response: such a body holding a status line and header
//! lines can pass for a response (`-o FILE` keeps bodies out of the output). The other way
//! round, when a block announces a body that is not printed and something else follows it in
//! the stream (a `-w` write-out, an `echo` between two curls), those bytes count as the body,
//! and a response starting within the announced length is missed: a hint lost, never one
//! made up.
//!
//! The status code of the last block that ended is kept too (`--http-retry-on`): after
//! redirects, the final response's.
//!
//! The stream is read in chunks as they arrive, whatever their boundaries; at most
//! [`MAX_HEADER_LINE`] bytes of a line are kept, and outside a header block a line is kept only
//! while it may still be a status line.

use std::time::SystemTime;

use super::fields::Response;
use super::hint::Hint;

/// The longest header line read, in bytes (without its line end): longer lines are not headers
/// a server sends (servers commonly refuse fields past 8 KiB) and are skipped.
pub const MAX_HEADER_LINE: usize = 8 * 1024;

/// What `curl -v` prints before each line of a response it received.
const VERBOSE: &[u8] = b"< ";
/// How a status line starts: plainly, or after `curl -v`'s `< `.
const STATUS_STARTS: [&[u8]; 2] = [b"HTTP/", b"< HTTP/"];
/// The longest of [`STATUS_STARTS`].
const STATUS_START_MAX: usize = 7;
/// Bytes of a line kept: a field of [`MAX_HEADER_LINE`] bytes with `< ` and `\r`, and one
/// more, so that a longer line shows as cut.
const LINE_KEPT: usize = MAX_HEADER_LINE + VERBOSE.len() + 2;

/// How far the check of a reading that took a status line for the start of a body has got
/// (see [`HeaderHints::probe_body`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Check {
    /// This reading is no such one.
    #[default]
    None,
    /// Within that body.
    InBody,
    /// The body ended: the line after it decides.
    NextLine,
    /// The stream ended, or a status line started, right where the body ended: this reading
    /// is the one kept.
    Confirmed,
    /// Anything else: this reading is dropped.
    Failed,
}

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
#[derive(Clone, Debug, Default)]
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
    /// The status code of the last header block that ended (its empty line seen), and when.
    status: Option<(u16, SystemTime)>,
    /// While a body of known length starts with a status line, read here as the next
    /// response: the other reading, which takes it for the body, fed the same bytes.
    other: Option<Box<HeaderHints>>,
    /// In that other reading, its check.
    check: Check,
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
            // With two readings, a line at a time: one is chosen at the end of a line.
            let used = if let Some(other) = self.other.as_mut() {
                let end = memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1);
                other.read(&data[..end], now);
                self.read(&data[..end], now);
                end
            } else {
                self.read(data, now)
            };
            self.settle();
            data = &data[used..];
        }
    }

    /// The end of the stream: a last field line without a line end still counts; of two
    /// readings, the other one is kept if its body ended with the stream.
    pub fn end(&mut self, now: SystemTime) {
        if let Some(other) = self.other.as_mut() {
            other.end(now);
        }
        if self.state == State::Headers && self.line_len > 0 {
            self.end_line(now);
        }
        self.check = match self.check {
            Check::NextLine if self.line_len == 0 => Check::Confirmed,
            Check::InBody | Check::NextLine => Check::Failed,
            done => done,
        };
        self.settle();
    }

    /// Reads `data`: all of it, or up to the end of a line where a second reading starts;
    /// returns how many bytes it used.
    fn read(&mut self, mut data: &[u8], now: SystemTime) -> usize {
        let (len, alone) = (data.len(), self.other.is_none());
        while !data.is_empty() {
            let used = match self.state {
                State::Body { left, first: false } => self.skip_body(left, data.len()),
                State::Body { left, first: true } => self.probe_body(left, data, now),
                State::Outside | State::Headers => self.take_line(data, now),
            };
            data = &data[used..];
            self.body_over();
            if alone && self.other.is_some() {
                break;
            }
        }
        len - data.len()
    }

    /// In a reading that took a status line for the start of a body: notes that the body is
    /// over, so that the next line decides.
    fn body_over(&mut self) {
        if self.check == Check::InBody && !matches!(self.state, State::Body { .. }) {
            self.check = Check::NextLine;
        }
    }

    /// Of two readings, keeps the other one when its check confirmed it, this one when it
    /// failed.
    fn settle(&mut self) {
        match self.other.as_ref().map(|o| o.check) {
            Some(Check::Confirmed) => {
                if let Some(other) = self.other.take() {
                    *self = *other;
                    self.check = Check::None;
                }
            }
            Some(Check::Failed) => self.other = None,
            _ => {}
        }
    }

    /// The latest hint seen so far.
    pub fn hint(&self) -> Option<Hint> {
        self.best
    }

    /// The status code of the last response whose header block ended (at its empty line), and
    /// the time of the bytes that ended it: after redirects, the final response's. A block cut
    /// before its empty line does not count, nor does a status line with no block after it.
    pub fn status(&self) -> Option<(u16, SystemTime)> {
        self.status
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
                // Or the body starts with a response it quotes: that reading goes on beside
                // this one (not within another such reading, nor beside a second one).
                if self.other.is_none() && self.check == Check::None {
                    let mut other = Box::new(self.clone());
                    other.check = Check::InBody;
                    other.body_seen(left, true, now);
                    self.other = Some(other);
                }
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
        self.body_over();
        if let Some(rest) = after {
            self.read(&rest, now);
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
        if self.check == Check::NextLine {
            let status = !self.skip_line && self.whole_line().and_then(status_line).is_some();
            self.check = if status {
                Check::Confirmed
            } else {
                Check::Failed
            };
        }
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
            // A code outside the classes RFC 9110 defines (1xx to 5xx) says nothing.
            let code = self.response.code();
            if (100..=599).contains(&code) {
                self.status = Some((code, now));
            }
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
mod tests;
