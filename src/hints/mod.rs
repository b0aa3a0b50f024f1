//! Server hints: how long an HTTP server asks a client to wait, read from the header blocks of
//! responses in an attempt's output (`--http-hints`; which lines those are: [`HeaderHints`]) or
//! from a `--delay-from-output` capture.
//!
//! Forms understood (header names in any case, values trimmed):
//! - `Retry-After`: delta-seconds or an HTTP-date in any of the three formats of
//!   [RFC 9110, section 10.2.3](https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3)
//!   (IMF-fixdate, obsolete RFC 850 and ANSI C `asctime`; section 5.6.7).
//! - `RateLimit` with `r=0` and `t=SECONDS` ([draft-ietf-httpapi-ratelimit-headers](
//!   https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/)), and the older
//!   drafts' `RateLimit-Reset: SECONDS` with `RateLimit-Remaining: 0`.
//! - `X-RateLimit-Reset: EPOCH-SECONDS` with `X-RateLimit-Remaining: 0` ([GitHub's REST API](
//!   https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api)): a
//!   point in time, not a delay.
//! - `x-amz-retry-after: MILLISECONDS` (AWS SDKs).
//!
//! A hint is kept as the wall-clock time before which the server wants no new request, so a
//! delta read early in a long attempt is not counted twice. If several hints are present, the
//! latest time wins. A number too large for a float is the furthest time a hint can name
//! ([`FAR`]), never dropped.

mod blocks;
mod fields;
mod hint;
#[cfg(test)]
mod tests;

pub use blocks::{HeaderHints, MAX_HEADER_LINE};
pub use hint::{BadHint, FAR, Hint, HintSource, parse_delay_value};

/// The wait before the next attempt: its length, and the server's hint that set it, when one
/// did (it was longer than the backoff delay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// How long.
    pub delay: std::time::Duration,
    /// The hint that set it, if one did.
    pub hint: Option<HintSource>,
}
