//! Output pumps: copy an attempt's stdout or stderr to its destination (live, or into a hold),
//! matching each line against the output conditions on the way.
//!
//! When the destination fails, the attempt keeps its own ending: a reader that went away
//! (`EPIPE`) stops the pump, so the attempt meets a broken pipe as it would writing there
//! itself; any other write error (a full disk) is recorded and the rest is read and matched but
//! dropped; a hold that cannot grow (TMPDIR missing or full) is sent to stderr, with the rest
//! after it, so nothing is lost.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::PollFlags;
use regex::bytes::Regex;

use super::cancel::Cancel;
use crate::spool::Spool;

/// Read size for output.
const CHUNK: usize = 1 << 20;
/// Bytes of one line kept for matching; the rest of a longer line still passes through.
pub const MATCH_LINE_LIMIT: usize = 1 << 20;
/// After the attempt ended, at most this much more is read from a pipe that a leftover process
/// keeps open and busy.
const DRAIN_LIMIT: usize = 4 << 20;

/// The output conditions.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// `--retry-if-output`.
    pub retry_if: Vec<Regex>,
    /// `--stop-if-output`.
    pub stop_if: Vec<Regex>,
    /// `--delay-from-output` (capture group 1: seconds).
    pub delay_from: Vec<Regex>,
}

/// What the output of an attempt said.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Findings {
    /// A line matched `--retry-if-output`.
    pub retry_match: bool,
    /// A line matched `--stop-if-output`.
    pub stop_match: bool,
    /// The largest server hint from `--delay-from-output`, in seconds.
    pub delay_hint: Option<f64>,
}

impl Findings {
    /// Combines the findings of two streams.
    pub fn merge(self, other: Findings) -> Findings {
        Findings {
            retry_match: self.retry_match || other.retry_match,
            stop_match: self.stop_match || other.stop_match,
            delay_hint: match (self.delay_hint, other.delay_hint) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// Splits a stream into lines and matches each against the rules.
#[derive(Debug)]
pub struct LineMatcher {
    rules: Arc<Rules>,
    line: Vec<u8>,
    findings: Findings,
    bad_hint: Option<String>,
}

/// Bytes of a refused hint quoted in a message.
const HINT_QUOTE_LIMIT: usize = 80;

impl LineMatcher {
    /// A matcher for `rules`.
    pub fn new(rules: Arc<Rules>) -> LineMatcher {
        LineMatcher {
            rules,
            line: Vec::new(),
            findings: Findings::default(),
            bad_hint: None,
        }
    }

    /// Feeds the next bytes of the stream.
    pub fn feed(&mut self, mut data: &[u8]) {
        while let Some(end) = data.iter().position(|&b| b == b'\n') {
            self.keep(&data[..end]);
            self.check();
            data = &data[end + 1..];
        }
        self.keep(data);
    }

    /// The end of the stream: matches a last line without a newline; returns the findings.
    pub fn finish(self) -> Findings {
        self.finish_with_notes().0
    }

    /// [`LineMatcher::finish`], with the first `--delay-from-output` capture that was not a
    /// number of seconds (escaped, shortened), if any: a hint that could not be used.
    pub fn finish_with_notes(mut self) -> (Findings, Option<String>) {
        if !self.line.is_empty() {
            self.check();
        }
        (self.findings, self.bad_hint)
    }

    fn keep(&mut self, part: &[u8]) {
        let room = MATCH_LINE_LIMIT.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..part.len().min(room)]);
    }

    fn check(&mut self) {
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        let f = &mut self.findings;
        f.retry_match |= self.rules.retry_if.iter().any(|re| re.is_match(line));
        f.stop_match |= self.rules.stop_if.iter().any(|re| re.is_match(line));
        for re in &self.rules.delay_from {
            let Some(captures) = re.captures(line) else {
                continue;
            };
            let text = captures.get(1).map_or(&b""[..], |m| m.as_bytes());
            let hint = std::str::from_utf8(text)
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0);
            match hint {
                Some(h) => f.delay_hint = Some(f.delay_hint.map_or(h, |old| old.max(h))),
                None if self.bad_hint.is_none() => {
                    let shown = &text[..text.len().min(HINT_QUOTE_LIMIT)];
                    let more = if text.len() > HINT_QUOTE_LIMIT {
                        "..."
                    } else {
                        ""
                    };
                    self.bad_hint = Some(format!(
                        "{}{more}",
                        crate::report::escape(&String::from_utf8_lossy(shown))
                    ));
                }
                None => {}
            }
        }
        self.line.clear();
    }
}

/// Where a stream goes.
#[derive(Debug, Clone)]
pub enum Sink {
    /// Straight on, live (a duplicate of retry's stdout or stderr).
    Forward(Arc<File>),
    /// Into a hold, for `--stdout-on-success`; if the hold cannot grow, what it holds and the
    /// rest go to `fallback` (retry's stderr), live.
    Hold {
        /// The hold.
        spool: Arc<Spool>,
        /// Where everything goes if the hold fails.
        fallback: Arc<File>,
    },
    /// Nowhere: writing failed before, the rest is dropped.
    Drop,
}

/// How a pump ended.
#[derive(Debug, Default)]
pub struct PumpEnd {
    /// What the lines said.
    pub findings: Findings,
    /// The first `--delay-from-output` capture that was not a number of seconds, escaped.
    pub bad_hint: Option<String>,
    /// The destination's reader went away (`EPIPE`): the pump stopped reading, so the attempt
    /// meets a broken pipe as it would writing there directly.
    pub sink_closed: bool,
    /// Writing to the destination failed otherwise (a full disk): the error; the rest of the
    /// stream was read and matched, and dropped.
    pub write_error: Option<String>,
    /// The hold could not grow: the error; what it held and the rest went to the fallback.
    pub hold_error: Option<String>,
}

/// Copies `source` to `sink` until end of file, or, once `cancel` fires, until what is
/// buffered has been read (so a leftover process holding the pipe cannot keep retry waiting).
pub fn pump(
    source: OwnedFd,
    mut sink: Sink,
    rules: Option<Arc<Rules>>,
    cancel: &Cancel,
) -> PumpEnd {
    let mut source = File::from(source);
    let mut matcher = rules.map(LineMatcher::new);
    let mut end = PumpEnd::default();
    let mut buf = vec![0u8; CHUNK];
    let mut drained: Option<usize> = None;
    loop {
        if drained.is_none() && !cancel.wait_ready(source.as_fd(), PollFlags::POLLIN) {
            if let Ok(flags) = fcntl(&source, FcntlArg::F_GETFL) {
                let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
                let _ = fcntl(&source, FcntlArg::F_SETFL(flags));
            }
            drained = Some(0);
        }
        let n = match source.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if let Some(m) = matcher.as_mut() {
            m.feed(&buf[..n]);
        }
        if !write(&mut sink, &buf[..n], &mut end) {
            break;
        }
        if let Some(d) = drained.as_mut() {
            *d += n;
            if *d >= DRAIN_LIMIT {
                break;
            }
        }
    }
    if let Some(m) = matcher {
        (end.findings, end.bad_hint) = m.finish_with_notes();
    }
    end
}

/// Writes `data` to `sink`, moving on to the next sink when this one fails (see the module
/// doc) and noting why in `end`; returns `false` when the pump must stop reading.
fn write(sink: &mut Sink, data: &[u8], end: &mut PumpEnd) -> bool {
    let written = match sink {
        Sink::Drop => return true,
        Sink::Forward(out) => (&**out).write_all(data),
        Sink::Hold { spool, fallback } => {
            let before = spool.len();
            let Err(e) = spool.append(data) else {
                return true;
            };
            // The hold failed: what it holds, then the part of `data` it did not take, go to
            // the fallback, and so does the rest of the stream.
            end.hold_error = Some(e.to_string());
            let taken = usize::try_from(spool.len() - before).unwrap_or(data.len());
            let fallback = fallback.clone();
            let moved = spool
                .copy_to(&fallback)
                .and_then(|()| (&*fallback).write_all(&data[taken..]));
            *sink = Sink::Forward(fallback);
            moved
        }
    };
    match written {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            end.sink_closed = true;
            false
        }
        Err(e) => {
            end.write_error = Some(e.to_string());
            *sink = Sink::Drop;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Arc<Rules> {
        Arc::new(Rules {
            retry_if: vec![Regex::new("^HTTP 5..$").unwrap()],
            stop_if: vec![Regex::new("fatal").unwrap()],
            delay_from: vec![Regex::new(r"(?i)^retry-after: *([0-9.]+)$").unwrap()],
        })
    }

    #[test]
    fn matches_lines_split_across_chunks() {
        let mut m = LineMatcher::new(rules());
        m.feed(b"ok\nHTTP 5");
        m.feed(b"03\r\nRetry-After: 2");
        m.feed(b".5\r\n");
        let f = m.finish();
        assert!(f.retry_match && !f.stop_match);
        assert_eq!(f.delay_hint, Some(2.5));
    }

    #[test]
    fn a_last_line_without_newline_counts() {
        let mut m = LineMatcher::new(rules());
        m.feed(b"a\nfatal error");
        assert!(m.finish().stop_match);
    }

    #[test]
    fn anchors_do_not_match_across_lines() {
        let mut m = LineMatcher::new(rules());
        m.feed(b"xHTTP 503\nHTTP 50\n3\n");
        assert!(!m.finish().retry_match);
    }

    #[test]
    fn a_hint_that_is_not_seconds_is_noted_not_used() {
        let mut m = LineMatcher::new(rules());
        m.feed(b"Retry-After: 2\nretry-after: Wed, 21 Oct 2015 07:28:00 GMT\n");
        m.feed(b"Retry-After: soon\n");
        let (f, bad) = m.finish_with_notes();
        assert_eq!(f.delay_hint, Some(2.0));
        assert_eq!(bad, None, "the test regex only captures digits");
        let rules = Arc::new(Rules {
            delay_from: vec![Regex::new(r"(?i)^retry-after: *(.*)$").unwrap()],
            ..Rules::default()
        });
        let mut m = LineMatcher::new(rules);
        m.feed(b"retry-after: Wed, 21 Oct 2015\x1b[2J\nRetry-After: -1\n");
        let (f, bad) = m.finish_with_notes();
        assert_eq!(f.delay_hint, None);
        assert_eq!(bad.as_deref(), Some(r"Wed, 21 Oct 2015\u{1b}[2J"));
    }

    #[test]
    fn a_failed_hold_moves_everything_to_the_fallback_in_order() {
        let spool = Arc::new(Spool::with_limits(4, Some(6)));
        let fallback = Arc::new(tempfile::tempfile().unwrap());
        let mut sink = Sink::Hold {
            spool,
            fallback: fallback.clone(),
        };
        let mut end = PumpEnd::default();
        assert!(write(&mut sink, b"abc", &mut end));
        assert!(write(&mut sink, b"defgh", &mut end));
        assert!(write(&mut sink, b"ij", &mut end));
        assert!(end.hold_error.is_some() && end.write_error.is_none());
        let mut got = String::new();
        use std::io::{Read, Seek};
        (&*fallback).rewind().unwrap();
        (&*fallback).read_to_string(&mut got).unwrap();
        assert_eq!(got, "abcdefghij");
    }

    #[test]
    fn a_full_disk_drops_the_rest_and_says_why() {
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let mut sink = Sink::Forward(Arc::new(full));
        let mut end = PumpEnd::default();
        assert!(write(&mut sink, b"x", &mut end), "keeps reading");
        assert!(matches!(sink, Sink::Drop));
        assert!(!end.sink_closed);
        assert!(end.write_error.is_some_and(|e| e.contains("No space")));
    }

    #[test]
    fn merge_takes_the_larger_hint() {
        let a = Findings {
            delay_hint: Some(1.0),
            ..Findings::default()
        };
        let b = Findings {
            retry_match: true,
            delay_hint: Some(3.0),
            ..Findings::default()
        };
        let m = a.merge(b);
        assert!(m.retry_match);
        assert_eq!(m.delay_hint, Some(3.0));
    }
}
