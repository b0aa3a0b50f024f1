//! What the header fields of one HTTP response say, for [`super::HeaderHints`]: the waits they
//! ask for (`Retry-After`, `RateLimit`, `X-RateLimit-Reset`, `x-amz-retry-after`) and whether
//! the length of the body that follows is known (`Content-Length`).

use std::time::SystemTime;

use super::hint::{Hint, HintSource, add_secs, parse_delay_value, parse_seconds};

/// One response's header fields, as far as retry reads them.
#[derive(Clone, Debug, Default)]
pub(super) struct Response {
    /// The status code of its status line.
    code: u16,
    /// Printed in a client's log, each line after a prefix (`curl -v`'s `< `, `wget -S`'s two
    /// spaces): its body is not in this stream.
    pub(super) logged: bool,
    /// A status whose response has no content: 1xx, 204 and 304 (RFC 9110, section 6.4.1,
    /// <https://www.rfc-editor.org/rfc/rfc9110#section-6.4.1>).
    no_content: bool,
    /// `Content-Length`, while every one seen agrees.
    length: Option<u64>,
    /// The length of the body as printed cannot be known: a `Transfer-Encoding` (curl prints
    /// the decoded body), a `Content-Encoding` (curl may decode it: `--compressed`), or a
    /// `Content-Length` that is not one number.
    length_unknown: bool,
    /// `X-RateLimit-Remaining`: `Some(true)` when it is 0.
    x_exhausted: Option<bool>,
    /// `X-RateLimit-Reset`, epoch seconds.
    x_reset: Option<f64>,
    /// `RateLimit-Remaining` (older drafts): `Some(true)` when 0.
    rl_exhausted: Option<bool>,
    /// `RateLimit-Reset` (older drafts), as a time.
    rl_reset: Option<SystemTime>,
}

impl Response {
    /// A response with status code `status`; `logged` as `curl -v` or `wget -S` prints it.
    pub(super) fn new(status: u16, logged: bool) -> Response {
        Response {
            code: status,
            logged,
            no_content: (100..200).contains(&status) || status == 204 || status == 304,
            ..Response::default()
        }
    }

    /// The status code of its status line (three digits: 000 to 999 as sent).
    pub(super) fn code(&self) -> u16 {
        self.code
    }

    /// Bytes of body that follow the header block in the same stream, as far as the fields
    /// tell: 0 when none do, or when the length is unknown.
    pub(super) fn body_length(&self) -> u64 {
        if self.logged || self.no_content || self.length_unknown {
            0
        } else {
            self.length.unwrap_or(0)
        }
    }

    /// Reads one field line (`name: value`, without its line end and `curl -v`'s `< `),
    /// received at `now`; a hint it gives is offered to `best`. No allocation, and the value
    /// is looked at only once the name matched.
    pub(super) fn field(&mut self, line: &[u8], now: SystemTime, best: &mut Option<Hint>) {
        let Some(colon) = memchr::memchr(b':', line) else {
            return;
        };
        let Some(field) = Field::named(&line[..colon]) else {
            return;
        };
        let value = &line[colon + 1..];
        if let Field::ContentLength = field {
            self.content_length(value);
            return;
        }
        let Ok(value) = std::str::from_utf8(value) else {
            return;
        };
        let value = value.trim();
        let mut offer = |not_before: SystemTime, source: HintSource| {
            *best = Hint::later(*best, Some(Hint { not_before, source }));
        };
        match field {
            Field::ContentLength => {}
            Field::Encoded => self.length_unknown = true,
            Field::RetryAfter => {
                if let Ok(t) = parse_delay_value(value, now) {
                    offer(t, HintSource::RetryAfter);
                }
            }
            Field::AmzRetryAfter => {
                if let Some(ms) = parse_seconds(value).filter(|_| !value.contains('.')) {
                    offer(add_secs(now, ms / 1000.0), HintSource::AmzRetryAfter);
                }
            }
            Field::RateLimit => {
                if let Some(secs) = ratelimit_wait(value) {
                    offer(add_secs(now, secs), HintSource::RateLimit);
                }
            }
            Field::RateLimitRemaining | Field::RateLimitReset => {
                if let Field::RateLimitRemaining = field {
                    self.rl_exhausted = parse_seconds(value).map(|r| r == 0.0);
                } else {
                    self.rl_reset = parse_seconds(value).map(|s| add_secs(now, s));
                }
                if let (Some(true), Some(t)) = (self.rl_exhausted, self.rl_reset) {
                    offer(t, HintSource::RateLimit);
                }
            }
            Field::XRateLimitRemaining | Field::XRateLimitReset => {
                if let Field::XRateLimitRemaining = field {
                    self.x_exhausted = parse_seconds(value).map(|r| r == 0.0);
                } else {
                    self.x_reset = parse_seconds(value);
                }
                if let (Some(true), Some(epoch)) = (self.x_exhausted, self.x_reset) {
                    let at = add_secs(SystemTime::UNIX_EPOCH, epoch);
                    offer(at, HintSource::XRateLimitReset);
                }
            }
        }
    }

    /// A `Content-Length` value: one number, or a list of the same number (RFC 9110,
    /// section 8.6, <https://www.rfc-editor.org/rfc/rfc9110#section-8.6>), agreeing with any
    /// earlier one; anything else makes the length unknown.
    fn content_length(&mut self, value: &[u8]) {
        let mut length = self.length;
        for item in value.split(|&b| b == b',') {
            let item = item.trim_ascii();
            let n = std::str::from_utf8(item)
                .ok()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse::<u64>().ok());
            match (n, length) {
                (Some(n), None) => length = Some(n),
                (Some(n), Some(l)) if n == l => {}
                _ => {
                    self.length_unknown = true;
                    return;
                }
            }
        }
        self.length = length;
    }
}

/// The header fields read.
#[derive(Clone, Copy)]
enum Field {
    RetryAfter,
    AmzRetryAfter,
    RateLimit,
    RateLimitRemaining,
    RateLimitReset,
    XRateLimitRemaining,
    XRateLimitReset,
    ContentLength,
    /// `Transfer-Encoding` or `Content-Encoding`.
    Encoded,
}

impl Field {
    /// The field called `name`, in any case (RFC 9110, section 5.1); `None` for any other
    /// (also for a name with white space before the colon, which RFC 9112, section 5.1 rejects).
    fn named(name: &[u8]) -> Option<Field> {
        const NAMES: [(&[u8], Field); 10] = [
            (b"retry-after", Field::RetryAfter),
            (b"x-amz-retry-after", Field::AmzRetryAfter),
            (b"ratelimit", Field::RateLimit),
            (b"ratelimit-remaining", Field::RateLimitRemaining),
            (b"ratelimit-reset", Field::RateLimitReset),
            (b"x-ratelimit-remaining", Field::XRateLimitRemaining),
            (b"x-ratelimit-reset", Field::XRateLimitReset),
            (b"content-length", Field::ContentLength),
            (b"transfer-encoding", Field::Encoded),
            (b"content-encoding", Field::Encoded),
        ];
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, field)| field)
    }
}

/// The wait of a `RateLimit` field value: the largest `t` of the items whose `r` is 0.
/// Items are separated by `,`, parameters by `;` (`"default";r=0;t=30`); the older drafts'
/// `limit=10, remaining=0, reset=30` is read too.
fn ratelimit_wait(value: &str) -> Option<f64> {
    let mut best: Option<f64> = None;
    let mut take = |r: Option<f64>, t: Option<f64>| {
        if let (Some(r), Some(t)) = (r, t)
            && r == 0.0
        {
            best = Some(best.map_or(t, |b: f64| b.max(t)));
        }
    };
    let (mut old_r, mut old_t) = (None, None);
    for item in value.split(',') {
        let (mut r, mut t) = (None, None);
        for param in item.split(';') {
            let Some((key, val)) = param.split_once('=') else {
                continue;
            };
            let val = parse_seconds(val.trim().trim_matches('"'));
            match key.trim().to_ascii_lowercase().as_str() {
                "r" => r = val,
                "t" => t = val,
                "remaining" => old_r = val,
                "reset" => old_t = val,
                _ => {}
            }
        }
        take(r, t);
    }
    take(old_r, old_t);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(lines: &[&str]) -> Response {
        let mut r = Response::new(200, false);
        let mut best = None;
        for line in lines {
            r.field(line.as_bytes(), SystemTime::UNIX_EPOCH, &mut best);
        }
        r
    }

    #[test]
    fn the_body_length_is_known_only_from_one_plain_content_length() {
        assert_eq!(fields(&["Content-Length: 42"]).body_length(), 42);
        assert_eq!(fields(&["content-length:7, 7"]).body_length(), 7);
        assert_eq!(
            fields(&["Content-Length: 7", "Content-Length: 7"]).body_length(),
            7
        );
        for unknown in [
            &["Content-Length: 7", "Content-Length: 8"][..],
            &["Content-Length: 7, 8"],
            &["Content-Length: -7"],
            &["Content-Length: 7x"],
            &["Content-Length:"],
            &["Content-Length: 99999999999999999999999"],
            &["Content-Length: 7", "Transfer-Encoding: chunked"],
            &["Content-Encoding: gzip", "Content-Length: 7"],
            &[],
        ] {
            assert_eq!(fields(unknown).body_length(), 0, "{unknown:?}");
        }
        // No body whatever the length says: curl -v or wget -S (not in this stream), 1xx, 204,
        // 304.
        for (status, logged) in [(200, true), (100, false), (204, false), (304, false)] {
            let mut r = Response::new(status, logged);
            r.field(b"Content-Length: 9", SystemTime::UNIX_EPOCH, &mut None);
            assert_eq!(r.body_length(), 0, "{status}");
        }
    }

    #[test]
    fn a_name_with_space_before_the_colon_is_no_field() {
        let mut best = None;
        let mut r = Response::new(503, false);
        r.field(b"Retry-After : 5", SystemTime::UNIX_EPOCH, &mut best);
        r.field(b" Retry-After: 5", SystemTime::UNIX_EPOCH, &mut best);
        assert_eq!(best, None);
        r.field(b"Retry-After:5", SystemTime::UNIX_EPOCH, &mut best);
        assert!(best.is_some());
    }
}
