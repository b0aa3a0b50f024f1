//! The bytes of retry's own words, before the writer (`writer.rs`) writes them: a text
//! line of spans (one line whatever it quotes, escaped, coloured when the writer says so) and
//! a JSON event's line; and the system's words without Rust's ` (os error N)`.

use std::time::Duration;

use anstyle::Style;
use serde_json::Value;

use crate::escape::escape;

/// One of retry's own text lines, as spans each in its own style (the colours apply only when
/// `colour`: the writer's choice, `colour.rs`). Line breaks become spaces and every
/// other character that must not reach a terminal raw (control characters: ESC, BEL, an OSC
/// sequence's start; bidirectional controls) is escaped ([`escape`]), whatever part of the
/// message it came from: a server's reply, a stored value, a file name.
pub(super) fn line_bytes(spans: &[(Style, &str)], colour: bool) -> Vec<u8> {
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

/// One JSON event line: the event's name, `elapsed` (seconds, rounded to the millisecond), the
/// run's id when there is one, then `fields`, newline included. serde_json escapes every
/// control character; JSON is never coloured.
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
        let bytes = line_bytes(
            &[(Style::new(), "retry: a\nb "), (Style::new(), "\u{1b}[2J")],
            false,
        );
        assert_eq!(bytes, b"retry: a b \\u{1b}[2J\n");
    }
}
