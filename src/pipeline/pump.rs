//! Output pumps: copy an attempt's stdout or stderr to its destination (live, or into a hold),
//! matching each line against the output conditions on the way.

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
}

impl LineMatcher {
    /// A matcher for `rules`.
    pub fn new(rules: Arc<Rules>) -> LineMatcher {
        LineMatcher {
            rules,
            line: Vec::new(),
            findings: Findings::default(),
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
    pub fn finish(mut self) -> Findings {
        if !self.line.is_empty() {
            self.check();
        }
        self.findings
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
            let hint = re
                .captures(line)
                .and_then(|c| c.get(1))
                .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0);
            if let Some(h) = hint {
                f.delay_hint = Some(f.delay_hint.map_or(h, |old| old.max(h)));
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
    /// Into a hold, for `--stdout-on-success`.
    Hold(Arc<Spool>),
}

/// How a pump ended.
#[derive(Debug, Default)]
pub struct PumpEnd {
    /// What the lines said.
    pub findings: Findings,
    /// The destination refused bytes (retry's stdout closed): the pump stopped reading, so the
    /// attempt meets a broken pipe as it would writing there directly.
    pub sink_closed: bool,
}

/// Copies `source` to `sink` until end of file, or, once `cancel` fires, until what is
/// buffered has been read (so a leftover process holding the pipe cannot keep retry waiting).
pub fn pump(source: OwnedFd, sink: Sink, rules: Option<Arc<Rules>>, cancel: &Cancel) -> PumpEnd {
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
        let written = match &sink {
            Sink::Forward(out) => (&**out).write_all(&buf[..n]),
            Sink::Hold(spool) => spool.append(&buf[..n]),
        };
        if written.is_err() {
            end.sink_closed = true;
            break;
        }
        if let Some(d) = drained.as_mut() {
            *d += n;
            if *d >= DRAIN_LIMIT {
                break;
            }
        }
    }
    end.findings = matcher.map(LineMatcher::finish).unwrap_or_default();
    end
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
