//! `--http-retry-on`: the set of HTTP status codes whose failed request is worth retrying.
//!
//! The default is the statuses a later request may get past: 408 Request Timeout, 425 Too
//! Early, 429 Too Many Requests and every 5xx (RFC 9110, section 15,
//! <https://www.rfc-editor.org/rfc/rfc9110#section-15>; RFC 8470 for 425; RFC 6585 for 429;
//! Google Cloud's guidance "retry 408, 429 and 5xx", <https://cloud.google.com/storage/docs/retry-strategy>).
//! A 4xx other than those says the request itself is wrong (404, 401, 403, 400, 422): sending it
//! again gets the same answer.

use std::fmt;
use std::str::FromStr;

/// The lowest status code RFC 9110 defines a class for (1xx).
pub const LOWEST: u16 = 100;
/// The highest (5xx); a three-digit code past it has no class.
pub const HIGHEST: u16 = 599;
/// The text of the default set.
pub const DEFAULT: &str = "408,425,429,500-599";

/// A set of HTTP status codes, 100 to 599.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HttpStatuses([u64; 8]);

impl HttpStatuses {
    /// The empty set.
    pub const fn empty() -> HttpStatuses {
        HttpStatuses([0; 8])
    }

    /// Every status, 100 to 599 (`any`).
    pub fn any() -> HttpStatuses {
        let mut set = HttpStatuses::empty();
        set.insert_range(LOWEST, HIGHEST);
        set
    }

    /// Whether `code` is in the set; a code outside 100 to 599 never is.
    pub fn contains(&self, code: u16) -> bool {
        match code.checked_sub(LOWEST) {
            Some(i) if code <= HIGHEST => self.0[usize::from(i / 64)] & (1 << (i % 64)) != 0,
            _ => false,
        }
    }

    /// Adds `lo..=hi`, both within 100 to 599.
    fn insert_range(&mut self, lo: u16, hi: u16) {
        for code in lo..=hi {
            let i = code - LOWEST;
            self.0[usize::from(i / 64)] |= 1 << (i % 64);
        }
    }
}

impl Default for HttpStatuses {
    /// 408, 425, 429 and 500 to 599 ([`DEFAULT`]), built without parsing: every run makes it.
    fn default() -> HttpStatuses {
        let mut set = HttpStatuses::empty();
        for code in [408, 425, 429] {
            set.insert_range(code, code);
        }
        set.insert_range(500, HIGHEST);
        set
    }
}

impl fmt::Debug for HttpStatuses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HttpStatuses({self})")
    }
}

impl fmt::Display for HttpStatuses {
    /// As `--http-retry-on` takes it: `any`, or codes and ranges (`408,425,429,500-599`),
    /// `none` for the empty set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == HttpStatuses::any() {
            return f.write_str("any");
        }
        let mut parts = Vec::new();
        let mut code = LOWEST;
        while code <= HIGHEST {
            if !self.contains(code) {
                code += 1;
                continue;
            }
            let first = code;
            while code <= HIGHEST && self.contains(code) {
                code += 1;
            }
            parts.push(match code - 1 {
                last if last == first => first.to_string(),
                last => format!("{first}-{last}"),
            });
        }
        if parts.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&parts.join(","))
    }
}

impl FromStr for HttpStatuses {
    type Err = String;

    /// Parses `any` (any case, alone), or a comma-separated list of codes (`404`), inclusive ranges
    /// (`500-504`) and classes (`5xx`, `4XX`: 500 to 599, 400 to 499), each within 100 to 599.
    ///
    /// # Errors
    /// The one-line reason (an empty list or item, a code outside 100 to 599, a range that runs
    /// backwards, anything else), for clap to show with the flag and the value.
    fn from_str(text: &str) -> Result<HttpStatuses, String> {
        if text.trim().eq_ignore_ascii_case("any") {
            return Ok(HttpStatuses::any());
        }
        if text.trim().is_empty() {
            return Err("empty list of HTTP statuses".into());
        }
        let mut set = HttpStatuses::empty();
        for item in text.split(',') {
            let item = item.trim();
            if item.eq_ignore_ascii_case("any") {
                return Err("'any' stands alone: it is every status already".into());
            }
            let (lo, hi) = match item.split_once('-') {
                // `-1`, `500-`: a negative number or half a range, not an empty item.
                Some((a, b)) if a.trim().is_empty() || b.trim().is_empty() => {
                    return Err(format!(
                        "'{item}' is not an HTTP status (100-599), nor a range such as 500-504"
                    ));
                }
                Some((a, b)) => (code(a)?, code(b)?),
                None => match class(item) {
                    Some(first) => (first, first + 99),
                    None => {
                        let c = code(item)?;
                        (c, c)
                    }
                },
            };
            if lo > hi {
                return Err(format!("range '{item}' runs backwards"));
            }
            set.insert_range(lo, hi);
        }
        Ok(set)
    }
}

/// The first code of a class written `1xx` to `5xx` (any case).
fn class(item: &str) -> Option<u16> {
    match item.as_bytes() {
        [d @ b'1'..=b'5', x, y]
            if x.eq_ignore_ascii_case(&b'x') && y.eq_ignore_ascii_case(&b'x') =>
        {
            Some(u16::from(d - b'0') * 100)
        }
        _ => None,
    }
}

/// One code, 100 to 599.
fn code(text: &str) -> Result<u16, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty item in list of HTTP statuses".into());
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{text}' is neither an HTTP status (100-599), a class such as 5xx, nor 'any'"
        ));
    }
    match text.parse::<u16>() {
        Ok(c) if (LOWEST..=HIGHEST).contains(&c) => Ok(c),
        _ => Err(format!("'{text}' is not an HTTP status (100-599)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> HttpStatuses {
        text.parse().unwrap()
    }

    #[test]
    fn the_default_retries_what_may_succeed_later() {
        let d = HttpStatuses::default();
        for code in [408, 425, 429, 500, 502, 503, 504, 599] {
            assert!(d.contains(code), "{code}");
        }
        for code in [
            200,
            301,
            400,
            401,
            403,
            404,
            409,
            422,
            499,
            600,
            0,
            99,
            u16::MAX,
        ] {
            assert!(!d.contains(code), "{code}");
        }
        assert_eq!(d.to_string(), DEFAULT);
    }

    #[test]
    fn lists_ranges_classes_and_any() {
        assert_eq!(set("5xx").to_string(), "500-599");
        assert_eq!(set("4XX, 503").to_string(), "400-499,503");
        assert_eq!(set("404,500-502").to_string(), "404,500-502");
        assert_eq!(set("ANY"), HttpStatuses::any());
        assert_eq!(set("100-599").to_string(), "any");
        assert!(set("any").contains(404) && !set("any").contains(600));
    }

    #[test]
    fn bad_lists_say_why() {
        let err = |t: &str| t.parse::<HttpStatuses>().unwrap_err();
        assert_eq!(err(""), "empty list of HTTP statuses");
        assert_eq!(err("404,"), "empty item in list of HTTP statuses");
        assert_eq!(err("600"), "'600' is not an HTTP status (100-599)");
        assert_eq!(err("99"), "'99' is not an HTTP status (100-599)");
        assert_eq!(
            err("99999999999999999999999"),
            "'99999999999999999999999' is not an HTTP status (100-599)"
        );
        assert_eq!(err("503-500"), "range '503-500' runs backwards");
        assert_eq!(
            err("6xx"),
            "'6xx' is neither an HTTP status (100-599), a class such as 5xx, nor 'any'"
        );
        for half in ["-1", "-500", "500-", " - ", "404,-1"] {
            let item = half.rsplit(',').next().unwrap().trim();
            assert_eq!(
                err(half),
                format!("'{item}' is not an HTTP status (100-599), nor a range such as 500-504")
            );
        }
        for list in ["any,404", "404, ANY", "any,any"] {
            assert_eq!(err(list), "'any' stands alone: it is every status already");
        }
    }
}
