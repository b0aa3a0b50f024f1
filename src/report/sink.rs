//! The one writer of retry's own text on stderr: progress lines (escaped, optionally coloured),
//! JSON events, and CI markers. Every byte retry itself writes to stderr goes through
//! [`put`], which first finalises a countdown that is showing ([`super::live`]), then either
//! holds the bytes for `--chronic` ([`hold_from_now`]) or writes them through
//! [`crate::outlet`] (never waiting for a reader past a stop signal or the deadline). A write
//! that fails is dropped: stderr is where its error would go.

use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use anstyle::Style;
use serde_json::Value;

use super::escape::escape;
use crate::held::{Held, Stream};

/// Where retry's own stderr text goes while `--chronic` holds the run's output.
static HOLD: OnceLock<Arc<Held>> = OnceLock::new();

/// From now on retry's own stderr text is appended to `held` (as stderr chunks, in order with
/// the attempts' output) instead of being written; until [`hold_ends`].
pub fn hold_from_now(held: Arc<Held>) {
    let _ = HOLD.set(held);
}

/// The closing words of a run that `--chronic` holds (the give-up or stopped line and its
/// JSON event): kept apart from the ring of held output, so that they come after all of it
/// and `--max-output` never drops or cuts them; written by [`release_closing`].
static CLOSING: Mutex<Vec<u8>> = Mutex::new(Vec::new());

thread_local! {
    /// Whether what is put now is a closing word ([`closing`]).
    static SAYING_CLOSING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `say` with what it puts kept as the run's closing words while `--chronic` holds
/// (written after the held output by [`release_closing`]); as [`put`] otherwise.
pub(super) fn closing<R>(say: impl FnOnce() -> R) -> R {
    SAYING_CLOSING.set(true);
    let out = say();
    SAYING_CLOSING.set(false);
    out
}

/// Writes the closing words kept while `--chronic` held (`write`), or drops them; call once
/// the held output is written out (or dropped) and the record sealed.
pub fn release_closing(write: bool) {
    let words = std::mem::take(&mut *CLOSING.lock().unwrap_or_else(PoisonError::into_inner));
    if write && !words.is_empty() {
        put(&words);
    }
}

/// Whether retry's own lines are being held (`--chronic`): a countdown is then not drawn.
pub(super) fn holding() -> bool {
    HOLD.get().is_some_and(|held| !held.sealed())
}

/// Writes `bytes` of retry's own on stderr: held while `--chronic` holds (and the hold is not
/// sealed), else through the outlet, after finalising a countdown that is showing.
pub(super) fn put(bytes: &[u8]) {
    if let Some(held) = HOLD.get() {
        if SAYING_CLOSING.get() && !held.sealed() {
            CLOSING
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(bytes);
            return;
        }
        if held.push(Stream::Stderr, bytes) {
            return;
        }
    }
    super::live::settle();
    let _ = crate::outlet::stderr(bytes);
}

/// Writes `bytes` as they are: for CI markers, which carry the escape sequences and carriage
/// returns their dialect needs (GitLab's sections). The caller vouches for them: nothing that
/// came from outside may be in them unescaped.
pub fn write_raw(bytes: &[u8]) {
    put(bytes);
}

/// One of retry's own text lines, as spans each in its own style (the colours apply only when
/// [`super::colour`] says so). Line breaks become spaces and every other character that must
/// not reach a terminal raw (control characters: ESC, BEL, an OSC sequence's start;
/// bidirectional controls) is escaped ([`escape`]), whatever part of the message it came
/// from: a server's reply, a stored value, a file name.
pub(super) fn line_bytes(spans: &[(Style, &str)]) -> Vec<u8> {
    let colour = spans.iter().any(|(style, _)| *style != Style::new()) && super::colour::enabled();
    let mut line = String::new();
    for (style, text) in spans {
        let text = escape(&without_os_error(&one_line(text)));
        if colour && *style != Style::new() {
            line.push_str(&format!("{}{text}{}", style.render(), style.render_reset()));
        } else {
            line.push_str(&text);
        }
    }
    line.push('\n');
    line.into_bytes()
}

/// Writes one plain text line (see [`line_bytes`]).
pub(crate) fn write_line(text: &str) {
    write_spans(&[(Style::new(), text)]);
}

/// Writes one text line of styled spans (see [`line_bytes`]).
pub(super) fn write_spans(spans: &[(Style, &str)]) {
    put(&line_bytes(spans));
}

/// Writes one JSON event line on stderr: the event's name, `elapsed` (seconds, rounded to the
/// millisecond), the run's id when there is one, then `fields`. serde_json escapes every
/// control character; JSON is never coloured.
pub(super) fn emit_json(event: &str, elapsed: Duration, run_id: Option<&str>, fields: Value) {
    put(&json_line(event, elapsed, run_id, fields));
}

/// The line [`emit_json`] writes, newline included.
pub(super) fn json_line(
    event: &str,
    elapsed: Duration,
    run_id: Option<&str>,
    mut fields: Value,
) -> Vec<u8> {
    let mut line = serde_json::Map::new();
    line.insert("event".into(), event.into());
    line.insert(
        "elapsed".into(),
        ((elapsed.as_secs_f64() * 1000.0).round() / 1000.0).into(),
    );
    if let Some(id) = run_id {
        line.insert("run_id".into(), id.into());
    }
    if let Value::Object(map) = fields.take() {
        line.extend(map);
    }
    let mut text = without_os_error(&Value::Object(line).to_string()).into_owned();
    text.push('\n');
    text.into_bytes()
}

/// `message` without the ` (os error N)` that Rust's I/O errors add to the system's own words
/// ("No such file or directory (os error 2)"): the words are for people, the number is not.
pub(crate) fn without_os_error(message: &str) -> std::borrow::Cow<'_, str> {
    const MARK: &str = " (os error ";
    if !message.contains(MARK) {
        return message.into();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out.into()
}

/// `message` with every line break replaced by a space: one line whatever it quotes.
pub(super) fn one_line(message: &str) -> std::borrow::Cow<'_, str> {
    if message.contains(['\n', '\r']) {
        message.replace(['\n', '\r'], " ").into()
    } else {
        message.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_numbers_are_dropped_and_nothing_else() {
        assert_eq!(
            without_os_error("cannot run 'x': No such file or directory (os error 2); next"),
            "cannot run 'x': No such file or directory; next"
        );
        assert_eq!(without_os_error("a (os error x) b"), "a (os error x) b");
        assert_eq!(
            without_os_error("one (os error 24) two (os error 11)"),
            "one two"
        );
    }

    #[test]
    fn spans_are_escaped_each_and_the_line_is_one() {
        let bytes = line_bytes(&[(Style::new(), "retry: a\nb "), (Style::new(), "\u{1b}[2J")]);
        assert_eq!(bytes, b"retry: a b \\u{1b}[2J\n");
    }
}
