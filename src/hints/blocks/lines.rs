//! The lines [`super::HeaderHints`] looks for in a client's output: a status line in the three
//! forms clients print it (as received, `curl -v`'s, `wget -S`'s) and curl's own words for a
//! transfer its `-f` stopped at an error status.

/// How a client printed a response's header block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Form {
    /// As received (`curl -i`, `-D FILE`, `-I`): the block ends at its empty line, and its body
    /// may follow in the same stream.
    #[default]
    Plain,
    /// `curl -v`: each line after `< `, on stderr; the block ends at `<`, and a line without
    /// the prefix within it (`* ` notes) is none of its fields.
    CurlVerbose,
    /// `wget -S` (`--server-response`): each line after two spaces, on stderr, and no empty
    /// line after the block: it ends at the first line without the two spaces, or with the
    /// stream (`wget -q -S`). wget prints a block only once it has received all of it.
    WgetIndented,
}

impl Form {
    /// What the client prints before each line of the block.
    pub(super) fn prefix(self) -> &'static [u8] {
        match self {
            Form::Plain => b"",
            Form::CurlVerbose => b"< ",
            Form::WgetIndented => b"  ",
        }
    }

    /// Printed in the client's log: the body is not in this stream.
    pub(super) fn logged(self) -> bool {
        self != Form::Plain
    }
}

/// How a status line starts, in each [`Form`].
const STATUS_STARTS: [(&[u8], Form); 3] = [
    (b"HTTP/", Form::Plain),
    (b"< HTTP/", Form::CurlVerbose),
    (b"  HTTP/", Form::WgetIndented),
];
/// The longest of [`STATUS_STARTS`].
pub(super) const STATUS_START_MAX: usize = 7;

/// How curl's tool ends a transfer `-f` stopped: `curl: (22) ` (the exit status, on stderr,
/// unless `-s` without `-S`), then [`RETURNED_ERROR`].
const CURL_EXIT: &[u8] = b"curl: (22) ";
/// The same words as a `curl -v` note.
const CURL_NOTE: &[u8] = b"* ";
/// The message of curl's `http_should_fail` check, then the status code: three digits, alone
/// (curl 7.76 and later) or followed by the rest of the status line (`404 Not Found`, older
/// curl). <https://github.com/curl/curl/blob/master/lib/http.c>
const RETURNED_ERROR: &[u8] = b"The requested URL returned error: ";
/// How curl's line for an error status starts: kept outside a header block while the line may
/// still be it.
const CURL_EXIT_LINE: &[u8] = b"curl: (22) The requested URL returned error: ";

/// Which of curl's lines said that `-f` stopped the transfer at an error status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CurlSays {
    /// `curl: (22) The requested URL returned error: 404`: the tool's last word on the
    /// transfer.
    Exit,
    /// `* The requested URL returned error: 404`: the same as a `curl -v` note, printed even
    /// with `-s` alone.
    Note,
}

/// Whether `line` (its first bytes so far) may still start `start`.
fn may_start(line: &[u8], start: &[u8]) -> bool {
    let n = line.len().min(start.len());
    line[..n] == start[..n]
}

/// Whether `line` (its first bytes so far) may still start a status line.
pub(super) fn may_start_status(line: &[u8]) -> bool {
    STATUS_STARTS
        .iter()
        .any(|(start, _)| may_start(line, start))
}

/// Whether `line` (its first bytes so far) may still start a line read outside a header block:
/// a status line, or curl's `curl: (22)` line.
pub(super) fn may_start_wanted(line: &[u8]) -> bool {
    may_start_status(line) || may_start(line, CURL_EXIT_LINE)
}

/// The status code of a status line (`HTTP/1.1 503 Service Unavailable`, `HTTP/2 429`, with a
/// reason phrase or none), and the [`Form`] it was printed in; `None` for any other line: the
/// version is one digit or two with a dot, the code three digits, the reason phrase free of
/// control characters but tabs (RFC 9112, section 4).
pub(super) fn status_line(line: &[u8]) -> Option<(u16, Form)> {
    let (rest, form) = STATUS_STARTS
        .iter()
        .find_map(|&(start, form)| Some((line.strip_prefix(start)?, form)))?;
    let space = memchr::memchr(b' ', rest)?;
    let (version, rest) = (&rest[..space], &rest[space + 1..]);
    let version_ok = match version {
        [major] => major.is_ascii_digit(),
        [major, b'.', minor] => major.is_ascii_digit() && minor.is_ascii_digit(),
        _ => false,
    };
    if !version_ok {
        return None;
    }
    let (code, reason) = three_digits(rest)?;
    let reason_ok = match reason {
        [] => true,
        [b' ', reason @ ..] => reason
            .iter()
            .all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)),
        _ => false,
    };
    reason_ok.then_some((code, form))
}

/// The status code of curl's line saying `-f` stopped a transfer at an error status, and which
/// line it is; `None` for any other line, and for a code curl's `-f` does not stop at (below
/// 400) or that no status class holds (600 and above: RFC 9110, section 15).
pub(super) fn curl_error(line: &[u8]) -> Option<(u16, CurlSays)> {
    let (rest, says) = match line.strip_prefix(CURL_EXIT) {
        Some(rest) => (rest, CurlSays::Exit),
        None => (line.strip_prefix(CURL_NOTE)?, CurlSays::Note),
    };
    let (code, after) = three_digits(rest.strip_prefix(RETURNED_ERROR)?)?;
    let alone = matches!(after, [] | [b' ', ..]);
    (alone && (400..=599).contains(&code)).then_some((code, says))
}

/// Three ASCII digits at the start of `text` as a number, and the rest.
fn three_digits(text: &[u8]) -> Option<(u16, &[u8])> {
    let digits = text.get(..3)?;
    digits.iter().all(u8::is_ascii_digit).then(|| {
        let code = digits
            .iter()
            .fold(0u16, |code, d| code * 10 + u16::from(d - b'0'));
        (code, &text[3..])
    })
}
