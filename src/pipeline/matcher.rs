//! Output conditions line by line: each line of an attempt's stdout or stderr matched against
//! `--retry-if-output`, `--stop-if-output` and `--delay-from-output`, and the stream handed to
//! the HTTP header reader with `--http-hints`; what they found ([`Findings`]). When both come
//! on one pipe (retry's stdout and stderr one file: [`super::RunIo`]), one matcher reads that
//! one stream, its lines as the file shows them.

use std::sync::Arc;
use std::time::SystemTime;

use regex::bytes::Regex;

use crate::hints::{HeaderHints, Hint, HintSource, parse_delay_value};
use crate::transient::{Class, Classes, Classifier};

/// Bytes of one line kept for matching; the rest of a longer line still passes through.
pub const MATCH_LINE_LIMIT: usize = 1 << 20;

/// The output conditions.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// `--retry-if-output`.
    pub retry_if: Vec<Regex>,
    /// `--stop-if-output`.
    pub stop_if: Vec<Regex>,
    /// `--delay-from-output` (capture group 1: seconds or an HTTP-date).
    pub delay_from: Vec<Regex>,
    /// `--http-hints`: read HTTP response header lines for server hints ([`HeaderHints`]).
    pub http_hints: bool,
    /// `--transient`: the built-in table of transient messages.
    pub transient: Option<Arc<Classifier>>,
    /// `--transient-pattern`.
    pub transient_patterns: Vec<Regex>,
}

impl Rules {
    /// Whether any regex is to be matched against lines.
    fn has_regexes(&self) -> bool {
        !(self.retry_if.is_empty()
            && self.stop_if.is_empty()
            && self.delay_from.is_empty()
            && self.transient.is_none()
            && self.transient_patterns.is_empty())
    }
}

/// What the output of an attempt said.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Findings {
    /// A line matched `--retry-if-output`.
    pub retry_match: bool,
    /// A line matched `--stop-if-output`.
    pub stop_match: bool,
    /// The server's hint that asks for the latest time, from `--http-hints` header lines or a
    /// `--delay-from-output` capture.
    pub delay_hint: Option<Hint>,
    /// With `--http-hints`: the status code of the last HTTP response whose header block
    /// ended, and when its last bytes arrived (of two streams', the later one).
    pub http_status: Option<(u16, SystemTime)>,
    /// `--transient`: the classes of transient failure its lines named.
    pub transient: Classes,
}

impl Findings {
    /// Combines the findings of two streams.
    pub fn merge(self, other: Findings) -> Findings {
        Findings {
            retry_match: self.retry_match || other.retry_match,
            stop_match: self.stop_match || other.stop_match,
            delay_hint: Hint::later(self.delay_hint, other.delay_hint),
            http_status: match (self.http_status, other.http_status) {
                (Some(a), Some(b)) => Some(if b.1 > a.1 { b } else { a }),
                (a, b) => a.or(b),
            },
            transient: self.transient.union(other.transient),
        }
    }

    /// The status code of the last HTTP response read, if any.
    pub fn http_code(&self) -> Option<u16> {
        self.http_status.map(|s| s.0)
    }
}

/// Splits a stream into lines and matches each against the rules; hands the stream to the
/// header reader with `--http-hints`.
#[derive(Debug)]
pub struct LineMatcher {
    rules: Arc<Rules>,
    line: Vec<u8>,
    /// Lines are split and matched: there are regexes ([`Rules::has_regexes`]).
    split: bool,
    /// The header reader, with `--http-hints` (it finds its own lines).
    headers: Option<HeaderHints>,
    /// When the bytes being fed arrived: the origin of a hint given as a delay.
    now: SystemTime,
    findings: Findings,
    bad_hint: Option<String>,
}

/// Bytes of a refused hint quoted in a message.
const HINT_QUOTE_LIMIT: usize = 80;

impl LineMatcher {
    /// A matcher for `rules`.
    pub fn new(rules: Arc<Rules>) -> LineMatcher {
        LineMatcher {
            split: rules.has_regexes(),
            headers: rules.http_hints.then(HeaderHints::new),
            rules,
            line: Vec::new(),
            now: SystemTime::now(),
            findings: Findings::default(),
            bad_hint: None,
        }
    }

    /// Feeds the next bytes of the stream, received now.
    pub fn feed(&mut self, data: &[u8]) {
        self.feed_at(data, SystemTime::now());
    }

    /// Feeds the next bytes of the stream, received at `now` (wall clock).
    pub fn feed_at(&mut self, mut data: &[u8], now: SystemTime) {
        self.now = now;
        if let Some(headers) = self.headers.as_mut() {
            headers.feed(data, now);
        }
        if !self.split {
            return;
        }
        while let Some(end) = memchr::memchr(b'\n', data) {
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

    /// [`LineMatcher::finish`], with the first `--delay-from-output` capture that was neither a
    /// number of seconds nor an HTTP-date (escaped, shortened), if any: a hint that could not
    /// be used.
    pub fn finish_with_notes(mut self) -> (Findings, Option<String>) {
        if !self.line.is_empty() {
            self.check();
        }
        if let Some(headers) = self.headers.as_mut() {
            headers.end(self.now);
            self.findings.delay_hint = Hint::later(self.findings.delay_hint, headers.hint());
            self.findings.http_status = headers.status();
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
        if let Some(class) = self.rules.transient.as_ref().and_then(|t| t.class_of(line)) {
            f.transient = f.transient.with(class);
        }
        if self
            .rules
            .transient_patterns
            .iter()
            .any(|re| re.is_match(line))
        {
            f.transient = f.transient.with(Class::Pattern);
        }
        for re in &self.rules.delay_from {
            let Some(captures) = re.captures(line) else {
                continue;
            };
            let text = captures.get(1).map_or(&b""[..], |m| m.as_bytes());
            let hint = std::str::from_utf8(text)
                .ok()
                .and_then(|s| parse_delay_value(s, self.now).ok());
            match hint {
                Some(not_before) => {
                    let hint = Hint {
                        not_before,
                        source: HintSource::DelayFromOutput,
                    };
                    f.delay_hint = Hint::later(f.delay_hint, Some(hint));
                }
                None if self.bad_hint.is_none() => {
                    let shown = &text[..text.len().min(HINT_QUOTE_LIMIT)];
                    let more = if text.len() > HINT_QUOTE_LIMIT {
                        "..."
                    } else {
                        ""
                    };
                    self.bad_hint = Some(format!(
                        "{}{more}",
                        crate::escape::escape(&String::from_utf8_lossy(shown))
                    ));
                }
                None => {}
            }
        }
        self.line.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::MAX_HEADER_LINE;

    fn rules() -> Arc<Rules> {
        Arc::new(Rules {
            retry_if: vec![Regex::new("^HTTP 5..$").unwrap()],
            stop_if: vec![Regex::new("fatal").unwrap()],
            delay_from: vec![Regex::new(r"(?i)^retry-after: *([0-9.]+)$").unwrap()],
            ..Rules::default()
        })
    }

    #[test]
    fn lines_name_their_classes_of_transient_failure() {
        let rules = Arc::new(Rules {
            transient: Some(Arc::new(Classifier::built_in())),
            transient_patterns: vec![Regex::new("flaky runner").unwrap()],
            ..Rules::default()
        });
        let mut m = LineMatcher::new(rules);
        m.feed_at(
            b"Cloning into 'x'...\nerror: RPC failed; HTTP 503 curl 22 The req",
            now(),
        );
        m.feed_at(
            b"uested URL returned error: 503\r\nfatal: early EOF\n",
            now(),
        );
        m.feed_at(b"the flaky runner again", now());
        let f = m.finish();
        assert_eq!(f.transient.to_string(), "reset,http,pattern");
        let none = LineMatcher::new(Arc::new(Rules::default()));
        assert!(none.finish().transient.is_empty());
    }

    /// 2026-01-01T00:00:00Z: the clock the tests feed at.
    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600)
    }

    /// The wait a finding asks for at [`now`], in seconds, and its source.
    fn wait(f: &Findings) -> Option<(f64, HintSource)> {
        f.delay_hint
            .map(|h| (h.wait_from(now()).as_secs_f64(), h.source))
    }

    #[test]
    fn matches_lines_split_across_chunks() {
        let mut m = LineMatcher::new(rules());
        m.feed_at(b"ok\nHTTP 5", now());
        m.feed_at(b"03\r\nRetry-After: 2", now());
        m.feed_at(b".5\r\n", now());
        let f = m.finish();
        assert!(f.retry_match && !f.stop_match);
        assert_eq!(wait(&f), Some((2.5, HintSource::DelayFromOutput)));
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
    fn a_capture_that_is_neither_seconds_nor_a_date_is_noted_not_used() {
        let mut m = LineMatcher::new(rules());
        m.feed_at(
            b"Retry-After: 2\nretry-after: Wed, 21 Oct 2015 07:28:00 GMT\n",
            now(),
        );
        m.feed_at(b"Retry-After: soon\n", now());
        let (f, bad) = m.finish_with_notes();
        assert_eq!(wait(&f), Some((2.0, HintSource::DelayFromOutput)));
        assert_eq!(bad, None, "the test regex only captures digits");
        let rules = Arc::new(Rules {
            delay_from: vec![Regex::new(r"(?i)^retry-after: *(.*)$").unwrap()],
            ..Rules::default()
        });
        let mut m = LineMatcher::new(rules);
        m.feed_at(
            b"retry-after: Wed, 21 Oct 2015\x1b[2J\nRetry-After: -1\n",
            now(),
        );
        let (f, bad) = m.finish_with_notes();
        assert_eq!(f.delay_hint, None);
        assert_eq!(bad.as_deref(), Some(r"Wed, 21 Oct 2015\u{1b}[2J"));
    }

    #[test]
    fn a_capture_may_be_an_http_date() {
        let rules = Arc::new(Rules {
            delay_from: vec![Regex::new(r"(?i)^retry-after: *(.*)$").unwrap()],
            ..Rules::default()
        });
        let mut m = LineMatcher::new(rules);
        m.feed_at(b"Retry-After: Thu, 01 Jan 2026 00:00:40 GMT\r\n", now());
        let (f, bad) = m.finish_with_notes();
        assert_eq!(wait(&f), Some((40.0, HintSource::DelayFromOutput)));
        assert_eq!(bad, None);
    }

    #[test]
    fn http_hints_read_headers_and_the_latest_hint_wins() {
        let rules = Arc::new(Rules {
            http_hints: true,
            ..Rules::default()
        });
        let mut m = LineMatcher::new(rules.clone());
        m.feed_at(b"HTTP/2 429\r\nretry-after: 5\r\nx-amz-retry-", now());
        m.feed_at(b"after: 7500\r\n\r\n{\"error\": 1}", now());
        assert_eq!(wait(&m.finish()), Some((7.5, HintSource::AmzRetryAfter)));
        // Without --http-hints the same lines say nothing.
        let mut m = LineMatcher::new(Arc::new(Rules::default()));
        m.feed_at(b"retry-after: 5\n", now());
        assert_eq!(m.finish().delay_hint, None);
        // A header line longer than any server sends is skipped, not cut short and read.
        let mut m = LineMatcher::new(rules);
        let mut long = b"HTTP/1.1 503\r\nRetry-After: 3".to_vec();
        long.extend(std::iter::repeat_n(b'0', MAX_HEADER_LINE));
        long.push(b'\n');
        m.feed_at(&long, now());
        assert_eq!(m.finish().delay_hint, None);
    }

    #[test]
    fn merge_takes_the_later_hint() {
        let at = |secs: u64, source| Hint {
            not_before: now() + std::time::Duration::from_secs(secs),
            source,
        };
        let a = Findings {
            delay_hint: Some(at(3, HintSource::RetryAfter)),
            ..Findings::default()
        };
        let b = Findings {
            retry_match: true,
            delay_hint: Some(at(1, HintSource::DelayFromOutput)),
            ..Findings::default()
        };
        let m = a.merge(b);
        assert!(m.retry_match);
        assert_eq!(m.delay_hint, Some(at(3, HintSource::RetryAfter)));
        assert_eq!(b.merge(Findings::default()).delay_hint, b.delay_hint);
    }
}
