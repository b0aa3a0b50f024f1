//! The DURATION grammar's one parser: a scan of the text into terms, each term's exact value in
//! nanoseconds by integer arithmetic (no floating point), rounded up and saturated.

/// Nanoseconds in a second.
const NANOS: u64 = 1_000_000_000;

/// The largest value kept, in nanoseconds: `i64::MAX` seconds and 999 999 999 nanoseconds, the
/// largest `struct timespec` (coreutils `timeout` bounds its durations to the largest
/// `time_t` the same way). Anything larger is "no limit".
pub(super) const LIMIT_NANOS: u128 = i64::MAX as u128 * NANOS as u128 + (NANOS as u128 - 1);

/// What a DURATION text came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Value {
    /// This many nanoseconds, at most [`LIMIT_NANOS`].
    Nanos(u128),
    /// `inf`, `infinity`, or a value past [`LIMIT_NANOS`].
    Unlimited,
}

/// Nanoseconds in the unit `word`: retry's own short units (`ns`, `us`, `ms`), coreutils'
/// (`s`, `m`, `h`, `d`) and humantime's words (`sec`, `minutes`, `hr`, `weeks`, `M` for a month
/// of 30.44 days, `y` for a year of 365.25 days). Case matters: `m` is a minute, `M` a month.
pub(super) fn unit_nanos(word: &str) -> Option<u64> {
    Some(match word {
        "ns" | "nsec" | "nanos" => 1,
        "us" | "µs" | "usec" => 1_000,
        "ms" | "msec" | "millis" => 1_000_000,
        "s" | "sec" | "secs" | "second" | "seconds" => NANOS,
        "m" | "min" | "mins" | "minute" | "minutes" => 60 * NANOS,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600 * NANOS,
        "d" | "day" | "days" => 86_400 * NANOS,
        "w" | "wk" | "wks" | "week" | "weeks" => 604_800 * NANOS,
        "M" | "month" | "months" => 2_630_016 * NANOS,
        "y" | "yr" | "yrs" | "year" | "years" => 31_557_600 * NANOS,
        _ => return None,
    })
}

/// An exponent beyond this either way makes any term saturate or round up to 1 ns: the scan
/// clamps to it, so that no arithmetic on exponents can overflow.
const EXPONENT_CLAMP: i64 = 1 << 40;

/// One number of the text: its digits before and after the decimal point, and the power of ten
/// that scales them all (`12.5e3` is `12`, `5` and `2`).
struct Number<'a> {
    whole: &'a [u8],
    fraction: &'a [u8],
    exponent: i64,
}

/// Parses `text` (already trimmed, sign removed) into its value; an error names what is wrong.
pub(super) fn value(text: &str) -> Result<Value, String> {
    let bytes = text.as_bytes();
    if let Some(rest) = strip_infinity(bytes) {
        let rest = skip_space(rest);
        let (word, after) = unit_word(rest);
        if !word.is_empty() && unit_nanos(word).is_none() {
            return Err(format!("unknown unit '{word}'"));
        }
        if !after.is_empty() {
            return Err(unexpected(after));
        }
        return Ok(Value::Unlimited);
    }
    if bytes.len() >= 3 && bytes[..3].eq_ignore_ascii_case(b"nan") {
        return Err("NaN is not a duration".into());
    }
    if bytes.len() >= 2 && bytes[..2].eq_ignore_ascii_case(b"0x") {
        return Err("hexadecimal numbers are not taken".into());
    }
    let mut rest = bytes;
    let mut total: u128 = 0;
    let mut first = true;
    loop {
        let (number, after) = number(rest)?;
        let after = skip_space(after);
        let (word, after) = unit_word(after);
        let unit = if word.is_empty() {
            // Something that is neither a unit nor another number (`1_000`, `1μs`).
            if !after.is_empty() && !matches!(after[0], b'0'..=b'9' | b'.') {
                return Err(unexpected(after));
            }
            if !(first && after.is_empty()) {
                return Err(format!(
                    "a unit is missing after '{}' (write 1m30s, not 1m30)",
                    String::from_utf8_lossy(&rest[..rest.len() - after.len()]).trim()
                ));
            }
            NANOS
        } else {
            unit_nanos(word).ok_or_else(|| format!("unknown unit '{word}'"))?
        };
        // Past the limit, the rest is still read: it must be a DURATION too.
        total = match term_nanos(&number, unit) {
            Value::Nanos(n) => total.saturating_add(n),
            Value::Unlimited => u128::MAX,
        };
        rest = skip_space(after);
        if rest.is_empty() {
            return Ok(if total > LIMIT_NANOS {
                Value::Unlimited
            } else {
                Value::Nanos(total)
            });
        }
        first = false;
    }
}

/// Whether `text` (trimmed, sign removed) is `inf` or `infinity`, with an optional unit.
pub(super) fn names_infinity(text: &str) -> bool {
    strip_infinity(text.as_bytes()).is_some()
}

/// `bytes` after a leading `infinity` or `inf` (any case), or `None`.
fn strip_infinity(bytes: &[u8]) -> Option<&[u8]> {
    for word in [&b"infinity"[..], b"inf"] {
        if bytes.len() >= word.len() && bytes[..word.len()].eq_ignore_ascii_case(word) {
            return Some(&bytes[word.len()..]);
        }
    }
    None
}

fn skip_space(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[n..]
}

/// The unit word at the start of `bytes` (ASCII letters and `µ`), and what follows it.
fn unit_word(bytes: &[u8]) -> (&str, &[u8]) {
    let mut n = 0;
    while n < bytes.len() {
        if bytes[n].is_ascii_alphabetic() {
            n += 1;
        } else if bytes[n..].starts_with("µ".as_bytes()) {
            n += "µ".len();
        } else {
            break;
        }
    }
    // Only ASCII letters and whole `µ`s were taken: valid UTF-8.
    (std::str::from_utf8(&bytes[..n]).unwrap_or(""), &bytes[n..])
}

/// The error for text that no rule of the grammar takes.
fn unexpected(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.chars().next() {
        Some(c) => format!("unexpected '{c}'"),
        None => "a number is missing".into(),
    }
}

/// The number at the start of `bytes`: `DIGITS [. DIGITS]` or `. DIGITS`, then an optional
/// exponent `e [+|-] DIGITS` (an `e` not followed by digits is left for the unit, where no
/// unit takes it).
fn number(bytes: &[u8]) -> Result<(Number<'_>, &[u8]), String> {
    let digits = |b: &[u8]| b.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(bytes);
    let mut at = int;
    let mut frac = 0;
    if bytes.get(at) == Some(&b'.') {
        frac = digits(&bytes[at + 1..]);
        at += 1 + frac;
    }
    if int == 0 && frac == 0 {
        return Err(unexpected(bytes));
    }
    let fraction = if at > int {
        &bytes[int + 1..at]
    } else {
        &bytes[..0]
    };
    let mut exponent: i64 = 0;
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        let sign_len = usize::from(matches!(bytes.get(at + 1), Some(b'+' | b'-')));
        let n = digits(&bytes[at + 1 + sign_len..]);
        if n > 0 {
            let negative = bytes[at + 1] == b'-';
            for &d in &bytes[at + 1 + sign_len..at + 1 + sign_len + n] {
                exponent = (exponent * 10 + i64::from(d - b'0')).min(EXPONENT_CLAMP);
            }
            if negative {
                exponent = -exponent;
            }
            at += 1 + sign_len + n;
        }
    }
    let fraction_len = i64::try_from(frac).unwrap_or(EXPONENT_CLAMP);
    Ok((
        Number {
            whole: &bytes[..int],
            fraction,
            exponent: exponent.saturating_sub(fraction_len),
        },
        &bytes[at..],
    ))
}

/// The value of `number` `unit`s in nanoseconds, rounded up to a whole nanosecond, or
/// [`Value::Unlimited`] past [`LIMIT_NANOS`]. Exact: integer arithmetic on the digits.
fn term_nanos(number: &Number<'_>, unit: u64) -> Value {
    // The significant digits: leading zeros dropped, trailing zeros moved into the exponent.
    let all: Vec<u8> = [number.whole, number.fraction].concat();
    let start = all.iter().take_while(|&&d| d == b'0').count();
    let end = all.len()
        - all[start..]
            .iter()
            .rev()
            .take_while(|&&d| d == b'0')
            .count();
    if start >= end {
        return Value::Nanos(0);
    }
    let digits = &all[start..end];
    let len = i64::try_from(digits.len()).unwrap_or(EXPONENT_CLAMP);
    let exponent = number
        .exponent
        .saturating_add(i64::try_from(all.len() - end).unwrap_or(0));
    let unit = u128::from(unit);
    // At least 10^(len + exponent - 1) nanoseconds, and the limit is below 10^28.
    if len.saturating_add(exponent) > 29 {
        return Value::Unlimited;
    }
    // Split at the decimal point: `whole` digits before it, `fraction` after it (with
    // `zeros` implied zeros between the point and the first of them).
    let point = len.saturating_add(exponent);
    let (whole, fraction, zeros) = if exponent >= 0 {
        (digits, &digits[..0], 0)
    } else if point > 0 {
        let p = usize::try_from(point).unwrap_or(0);
        (&digits[..p], &digits[p..], 0)
    } else {
        (&digits[..0], digits, point.unsigned_abs())
    };
    let mut nanos: u128 = 0;
    for &d in whole {
        nanos = nanos * 10 + u128::from(d - b'0');
    }
    // Trailing zeros of a positive exponent (at most 29 digits in all, so no overflow).
    for _ in 0..exponent.max(0) {
        nanos *= 10;
    }
    let Some(mut nanos) = nanos.checked_mul(unit) else {
        return Value::Unlimited;
    };
    // floor(unit * 0.[zeros]fraction) and whether anything is left, from the last digit up:
    // c = (c + digit * unit) / 10 at each place keeps c below 2 * unit.
    let mut carry: u128 = 0;
    let mut inexact = false;
    for &d in fraction.iter().rev() {
        let t = carry + u128::from(d - b'0') * unit;
        inexact |= !t.is_multiple_of(10);
        carry = t / 10;
    }
    let mut left = zeros;
    while left > 0 && carry > 0 {
        inexact |= !carry.is_multiple_of(10);
        carry /= 10;
        left -= 1;
    }
    nanos += carry + u128::from(inexact);
    if nanos > LIMIT_NANOS {
        Value::Unlimited
    } else {
        Value::Nanos(nanos)
    }
}
