//! Text that retry prints but did not write itself (program names, arguments, paths, output
//! lines), made safe to show: nothing in it can forge a `retry:` line, drive the terminal or
//! reorder what it shows. A leaf, below everything that shows such text: retry's own words
//! ([`crate::report`], which re-exports [`escape`]), the command line's errors, the step
//! summary, the spool's errors.

/// Whether `c` must not appear raw in a message: control characters (a newline would start a
/// forged `retry:` line, an escape sequence would drive the terminal), the line and paragraph
/// separators, and the bidirectional controls that reorder what a terminal shows (Unicode
/// Technical Standard #39 and CVE-2021-42574, "Trojan Source").
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'
                ..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with the characters that must not appear raw (control characters, line and
/// paragraph separators, bidirectional controls) escaped as Rust and C do (`\n`, `\t`,
/// `\u{1b}`), everything else as it is. For names and paths printed inside a message.
pub fn escape(text: &str) -> String {
    if !text.chars().any(hidden) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if hidden(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Quotes an argument for display when it holds characters a shell would treat specially:
/// `'...'`, or, when it holds characters of [`hidden`], `$'...'` with those escaped (the ANSI-C
/// quoting of bash, zsh and ksh), so the line can still be pasted into a shell.
pub(crate) fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        arg.to_string()
    } else if arg.chars().any(hidden) {
        let body: String = arg
            .chars()
            .map(|c| match c {
                '\'' => "\\'".to_string(),
                '\\' => "\\\\".to_string(),
                '\n' => "\\n".to_string(),
                '\t' => "\\t".to_string(),
                '\r' => "\\r".to_string(),
                c if hidden(c) && (c as u32) < 0x100 => format!("\\x{:02x}", c as u32),
                c if hidden(c) => format!("\\u{:04x}", c as u32),
                c => c.to_string(),
            })
            .collect();
        format!("$'{body}'")
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(
            quote("https://x.example/a?b=c"),
            "'https://x.example/a?b=c'"
        );
        assert_eq!(quote("-fsS"), "-fsS");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a\nb'c"), r"$'a\nb\'c'");
        assert_eq!(quote("\u{1b}[2J\u{202e}"), r"$'\x1b[2J\u202e'");
    }

    #[test]
    fn escapes_what_could_forge_a_line_or_hide_text() {
        assert_eq!(escape("curl"), "curl");
        assert_eq!(escape("a\nretry: fake"), r"a\nretry: fake");
        assert_eq!(escape("x\u{1b}[31m\t\u{2028}"), r"x\u{1b}[31m\t\u{2028}");
        assert_eq!(escape("é ü"), "é ü");
    }
}
