//! Which bytes of an attempt's output are HTTP response header fields, for `--http-hints`.
//!
//! A header block starts at a status line (`HTTP/1.1 503 Service Unavailable`, `HTTP/2 429`,
//! after `< ` as `curl -v` prints what it received, after two spaces as `wget -S` does) and
//! ends at the empty line after its fields (RFC 9112, section 2.1,
//! <https://www.rfc-editor.org/rfc/rfc9112#section-2.1>; the status line, section 4), or, as
//! wget prints it, at the first line without the two spaces ([`Form`]). Only the fields of a
//! header block are read: not lines before any status line, not a request curl sent (`> `),
//! not a body. In a stream where a block printed as received started (`curl -i`, `-D -`), an
//! indented status line is a body's, never a wget block.
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
//! redirects, the final response's. curl's `-f` stops a transfer at an error status before the
//! empty line (`curl -fv` prints no `<`): its `curl: (22) The requested URL returned error:
//! 404` (or the same `* ` note of `-v`) ends a block cut so with that status, when the codes
//! agree. Where a stream shows no block that ended at all (`curl -fsS URL`, or its headers on
//! the other stream), its last line, if it is that `curl: (22)` line, gives the status: curl
//! prints it when the transfer is over. Anywhere else (within a body, before other lines, after
//! a block that ended) the line says nothing.
//!
//! The stream is read in chunks as they arrive, whatever their boundaries; at most
//! [`MAX_HEADER_LINE`] bytes of a line are kept, and outside a header block a line is kept only
//! while it may still be a status line.

use std::time::SystemTime;

use super::fields::Response;
use super::hint::Hint;
use lines::{
    CurlSays, Form, STATUS_START_MAX, curl_error, may_start_status, may_start_wanted, status_line,
};

mod lines;

/// The longest header line read, in bytes (without its line end): longer lines are not headers
/// a server sends (servers commonly refuse fields past 8 KiB) and are skipped.
pub const MAX_HEADER_LINE: usize = 8 * 1024;

/// Bytes of a line kept: a field of [`MAX_HEADER_LINE`] bytes after a prefix of two bytes
/// (`< `, wget's two spaces) and with `\r`, and one more, so that a longer line shows as cut.
const LINE_KEPT: usize = MAX_HEADER_LINE + 2 + 2;

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
    /// How the current response's block is printed.
    form: Form,
    best: Option<Hint>,
    /// The status code of the last header block that ended (its empty line seen), and when.
    status: Option<(u16, SystemTime)>,
    /// A header block ended in this stream (whatever its status code).
    ended: bool,
    /// A block printed as received started in this stream.
    plain_seen: bool,
    /// The last line so far is curl's `curl: (22)` line, in a stream where no block ended: its
    /// status code and when. It gives the status if it stays the last line.
    curl_last: Option<(u16, SystemTime)>,
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
        // `wget -q -S` prints nothing after a block.
        if self.state == State::Headers && self.form == Form::WgetIndented {
            self.block_ended(now);
        }
        // curl's `curl: (22)` line, when it ended the stream (and a line end ended it).
        if self.line_len == 0
            && let Some(status) = self.curl_last.take()
        {
            self.status = Some(status);
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

    /// The status code of the last response whose header block ended (at its empty line, or
    /// as the module doc says for wget and for a block curl's `-f` cut), and the time of the
    /// bytes that ended it: after redirects, the final response's. A block cut otherwise does
    /// not count, nor does a status line with no block after it.
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
        match self.whole_line().and_then(|line| self.status_line(line)) {
            Some((code, form)) => {
                // Or the body starts with a response it quotes: that reading goes on beside
                // this one (not within another such reading, nor beside a second one).
                if self.other.is_none() && self.check == Check::None {
                    let mut other = Box::new(self.clone());
                    other.check = Check::InBody;
                    other.body_seen(left, true, now);
                    self.other = Some(other);
                }
                self.clear_line();
                self.start_response(code, form);
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
            // Outside a header block only a status line and curl's `curl: (22)` line matter:
            // the rest of any other line is not kept.
            if self.state == State::Outside && !may_start_wanted(&self.line) {
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
            let status = !self.skip_line
                && (self.whole_line()).is_some_and(|line| self.status_line(line).is_some());
            self.check = if status {
                Check::Confirmed
            } else {
                Check::Failed
            };
        }
        self.curl_last = None;
        // wget's block ends at the first line without its two spaces, however long.
        if self.state == State::Headers
            && self.form == Form::WgetIndented
            && !self.line.starts_with(Form::WgetIndented.prefix())
        {
            self.block_ended(now);
        }
        if !self.skip_line && self.line_len == self.line.len() {
            // Taken out and put back: read without copying.
            let line = std::mem::take(&mut self.line);
            let trimmed = line.strip_suffix(b"\r").unwrap_or(&line);
            if let Some((code, form)) = self.status_line(trimmed) {
                self.start_response(code, form);
            } else if let Some((code, says)) = curl_error(trimmed) {
                self.curl_error(code, says, now);
            } else if self.state == State::Headers {
                self.header_line(trimmed, now);
            }
            self.line = line;
        }
        self.clear_line();
    }

    /// The status code and form of a status line, in this stream: after a block printed as
    /// received (whose body may follow it here), an indented one is no `wget -S` block but a
    /// line of a body.
    fn status_line(&self, line: &[u8]) -> Option<(u16, Form)> {
        status_line(line).filter(|&(_, form)| form != Form::WgetIndented || !self.plain_seen)
    }

    fn start_response(&mut self, code: u16, form: Form) {
        self.response = Response::new(code, form.logged());
        self.plain_seen |= form == Form::Plain;
        self.form = form;
        self.state = State::Headers;
    }

    /// curl said `-f` stopped a transfer at error status `code`: the block it cut, if it has
    /// that status, ends here (curl prints no more of it, and no body); in a stream where no
    /// block ended, its `curl: (22)` line may be the last one.
    fn curl_error(&mut self, code: u16, says: CurlSays, now: SystemTime) {
        match self.state {
            State::Headers
                if self.response.code() == code
                    && (says == CurlSays::Exit || self.form == Form::CurlVerbose) =>
            {
                self.block_ended(now);
                self.state = State::Outside;
            }
            State::Outside if says == CurlSays::Exit && !self.ended => {
                self.curl_last = Some((code, now));
            }
            _ => {}
        }
    }

    /// The current response's header block ended, at `now`: its status is the last one, and
    /// what follows is its body if one of known length is due in this stream.
    fn block_ended(&mut self, now: SystemTime) {
        // A code outside the classes RFC 9110 defines (1xx to 5xx) says nothing.
        let code = self.response.code();
        if (100..=599).contains(&code) {
            self.status = Some((code, now));
        }
        self.ended = true;
        let body = self.response.body_length();
        self.state = if body > 0 {
            State::Body {
                left: body,
                first: true,
            }
        } else {
            State::Outside
        };
    }

    /// A line of a header block that is not a status line: a field, or the empty line that
    /// ends the block.
    fn header_line(&mut self, line: &[u8], now: SystemTime) {
        let field = match line.strip_prefix(self.form.prefix()) {
            Some(field) => field,
            None if line == b"<" => b"",
            // Something else `curl -v` printed within the block (`* ` notes); a line without
            // wget's two spaces ended its block before this.
            None => return,
        };
        if field.is_empty() {
            self.block_ended(now);
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

#[cfg(test)]
mod tests;
