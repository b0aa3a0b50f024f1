//! Reading what an attempt or hook appended to `RETRY_ENV_FILE`: `NAME=VALUE` lines and the
//! multi-line `NAME<<DELIMITER` ... `DELIMITER` form, as GitHub Actions reads `GITHUB_ENV`
//! (<https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions#environment-files>;
//! the runner's `SetEnvFileCommand` in actions/runner `src/Runner.Worker/FileCommandManager.cs`):
//! empty lines are skipped; a line whose first `=` comes before any `<<` is `NAME=VALUE`, the
//! value being everything after that `=`; otherwise a line with `<<` opens a value that runs
//! up to a line that is exactly the delimiter, its line breaks kept but the last. A line that
//! ends in CR LF reads as one ending in LF, as the runner does on Windows.
//!
//! Stricter than the runner, since the values become a program's environment: a name must be
//! letters, digits and `_`, not starting with a digit; names starting with `RETRY_` are
//! refused (they would change retry's own settings, or the variables it gives its attempts);
//! a line or value with a NUL byte, or not UTF-8, is refused (no environment variable can hold
//! it); a value longer than [`MAX_VARIABLE_BYTES`] with its name is refused (Linux gives no
//! program a longer variable: `MAX_ARG_STRLEN`, execve(2)). Each refusal is a [`Problem`] with
//! its line number and the line is skipped; the rest is read. A problem never quotes a value,
//! nor anything that may be one: they are often secrets.

/// The longest `NAME=VALUE` string, its terminating NUL included, that Linux passes to a
/// program: `MAX_ARG_STRLEN`, 32 pages of 4 KiB (execve(2), "Limits on size of arguments and
/// environment").
pub const MAX_VARIABLE_BYTES: usize = 32 * 4096;

/// What one read of the file came to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The variables set, in the order of their lines (a name may come more than once: the
    /// last wins).
    pub vars: Vec<(String, String)>,
    /// The lines skipped, and why.
    pub problems: Vec<Problem>,
    /// The lines read (the number of the last line is `first_line + lines - 1`).
    pub lines: u64,
}

/// A line that was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Its number in the file, from 1.
    pub line: u64,
    /// Why.
    pub why: Why,
}

/// Why a line was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// Neither `NAME=VALUE` nor `NAME<<DELIMITER` (nor an empty line).
    Malformed,
    /// The name is not letters, digits and `_`, or starts with a digit.
    BadName,
    /// The name (given) starts with `RETRY_`.
    Reserved(String),
    /// A NUL byte in the line or value.
    Nul,
    /// Not UTF-8.
    NotUtf8,
    /// The value of this name has no line with its delimiter after it.
    NeverClosed(String),
    /// The variable of this name is longer than [`MAX_VARIABLE_BYTES`].
    TooLong(String),
}

impl std::fmt::Display for Problem {
    /// `line N: why; skipped`, never quoting a value.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let line = self.line;
        match &self.why {
            Why::Malformed => write!(
                f,
                "line {line} is neither NAME=VALUE nor NAME<<DELIMITER: skipped"
            ),
            Why::BadName => write!(
                f,
                "line {line}: the name is not a variable name (letters, digits and _, not \
                 starting with a digit): skipped"
            ),
            Why::Reserved(name) => write!(
                f,
                "line {line}: {name} is refused (names starting with RETRY_ would change \
                 retry's own settings): skipped"
            ),
            Why::Nul => write!(
                f,
                "line {line} holds a NUL byte, which no variable can: skipped"
            ),
            Why::NotUtf8 => write!(f, "line {line} is not UTF-8: skipped"),
            Why::NeverClosed(name) => write!(
                f,
                "line {line}: the value of {name} has no line with its delimiter after it: \
                 skipped"
            ),
            Why::TooLong(name) => write!(
                f,
                "line {line}: {name} is longer than {} KiB, more than a program can be given: \
                 skipped",
                MAX_VARIABLE_BYTES / 1024
            ),
        }
    }
}

/// Whether `name` is a variable name: letters, digits and `_`, not empty, not starting with a
/// digit (POSIX XBD 8.1 names, either case).
pub fn is_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads `text`, whose first line is line `first_line` of the file.
pub fn parse(text: &[u8], first_line: u64) -> Parsed {
    let mut lines = split_lines(text);
    let mut parsed = Parsed::default();
    let mut index = 0u64;
    while let Some(raw) = lines.next() {
        let number = first_line + index;
        index += 1;
        if raw.is_empty() {
            continue;
        }
        let problem = |why| Problem { line: number, why };
        let Ok(line) = std::str::from_utf8(raw) else {
            parsed.problems.push(problem(Why::NotUtf8));
            continue;
        };
        if line.contains('\0') {
            parsed.problems.push(problem(Why::Nul));
            continue;
        }
        let (equals, heredoc) = (line.find('='), line.find("<<"));
        let (name, value) = match (equals, heredoc) {
            (Some(e), h) if h.is_none_or(|h| e < h) => (&line[..e], Ok(line[e + 1..].to_string())),
            (_, Some(h)) => {
                let (name, delimiter) = (&line[..h], &line[h + 2..]);
                if name.is_empty() || delimiter.is_empty() {
                    parsed.problems.push(problem(Why::Malformed));
                    continue;
                }
                let mut value: Vec<&[u8]> = Vec::new();
                let mut closed = false;
                for next in lines.by_ref() {
                    index += 1;
                    if next == delimiter.as_bytes() {
                        closed = true;
                        break;
                    }
                    value.push(next);
                }
                if !closed {
                    parsed.problems.push(problem(if is_name(name) {
                        Why::NeverClosed(name.to_string())
                    } else {
                        Why::BadName
                    }));
                    continue;
                }
                (name, heredoc_value(&value))
            }
            _ => {
                parsed.problems.push(problem(Why::Malformed));
                continue;
            }
        };
        let why = if !is_name(name) {
            Some(Why::BadName)
        } else if name.starts_with("RETRY_") {
            Some(Why::Reserved(name.to_string()))
        } else {
            match &value {
                Err(why) => Some(why.clone()),
                Ok(v) if name.len() + 1 + v.len() + 1 > MAX_VARIABLE_BYTES => {
                    Some(Why::TooLong(name.to_string()))
                }
                Ok(_) => None,
            }
        };
        match (why, value) {
            (Some(why), _) => parsed.problems.push(problem(why)),
            (None, Ok(value)) => parsed.vars.push((name.to_string(), value)),
            (None, Err(_)) => unreachable!("an Err value is a problem"),
        }
    }
    parsed.lines = index;
    parsed
}

/// The value of a heredoc from its lines: joined with LF, not ending with one.
fn heredoc_value(lines: &[&[u8]]) -> Result<String, Why> {
    let joined = lines.join(&b'\n');
    if joined.contains(&0) {
        return Err(Why::Nul);
    }
    String::from_utf8(joined).map_err(|_| Why::NotUtf8)
}

/// The lines of `text`, without their LF (or CR LF); a last line without one counts.
fn split_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let empty = text.is_empty();
    text.split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(move |_| !empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(text: &str) -> Vec<(String, String)> {
        let parsed = parse(text.as_bytes(), 1);
        assert_eq!(parsed.problems, [], "{text:?}");
        parsed.vars
    }

    fn pair(name: &str, value: &str) -> (String, String) {
        (name.into(), value.into())
    }

    #[test]
    fn one_line_and_heredoc_values_as_github_reads_them() {
        assert_eq!(
            vars("TOKEN=abc\nEMPTY=\nEQ=a=b<<c\n\nMULTI<<EOF\nline 1\n\nline 3\nEOF\nLAST=x"),
            [
                pair("TOKEN", "abc"),
                pair("EMPTY", ""),
                pair("EQ", "a=b<<c"),
                pair("MULTI", "line 1\n\nline 3"),
                pair("LAST", "x"),
            ]
        );
        // An empty heredoc, and a delimiter that is any text.
        assert_eq!(
            vars("E<<x\nx\nJ<<ghadelimiter_9f1\n{\"a\": 1}\nghadelimiter_9f1\n"),
            [pair("E", ""), pair("J", "{\"a\": 1}")]
        );
        // CR LF reads as LF; a CR elsewhere is kept.
        assert_eq!(
            vars("A=1\r\nB<<E\r\nx\ry\r\nE\r\n"),
            [pair("A", "1"), pair("B", "x\ry")]
        );
        assert_eq!(parse(b"", 1), Parsed::default());
        assert_eq!(parse(b"\n\n", 1).lines, 2);
    }

    #[test]
    fn problems_name_the_line_and_never_the_value() {
        let text = b"OK=1\nno equals here\n1BAD=x\nRETRY_ATTEMPT=x\nNUL=a\0b\nBIN=\xff\nA B=x\n\
                     <<EOF\nX<<\nOPEN<<EOF\nnever closed\n";
        let parsed = parse(text, 10);
        assert_eq!(parsed.vars, [pair("OK", "1")]);
        let got: Vec<(u64, Why)> = parsed
            .problems
            .iter()
            .map(|p| (p.line, p.why.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (11, Why::Malformed),
                (12, Why::BadName),
                (13, Why::Reserved("RETRY_ATTEMPT".into())),
                (14, Why::Nul),
                (15, Why::NotUtf8),
                (16, Why::BadName),
                (17, Why::Malformed),
                (18, Why::Malformed),
                (19, Why::NeverClosed("OPEN".into())),
            ]
        );
        assert_eq!(parsed.lines, 11);
        for p in &parsed.problems {
            let text = p.to_string();
            assert!(text.starts_with(&format!("line {}", p.line)), "{text}");
            assert!(
                !text.contains("never closed") && !text.contains("a\0b"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_variable_longer_than_a_program_takes_is_refused() {
        let fits = "V=".to_string() + &"x".repeat(MAX_VARIABLE_BYTES - 3) + "\n";
        assert_eq!(parse(fits.as_bytes(), 1).vars.len(), 1);
        let over = "V=".to_string() + &"x".repeat(MAX_VARIABLE_BYTES - 2) + "\n";
        assert_eq!(
            parse(over.as_bytes(), 1).problems,
            [Problem {
                line: 1,
                why: Why::TooLong("V".into())
            }]
        );
    }

    #[test]
    fn names() {
        for good in ["A", "a", "_", "TOKEN_2", "path"] {
            assert!(is_name(good), "{good}");
        }
        for bad in ["", "2A", "A-B", "A B", "A=B", "É"] {
            assert!(!is_name(bad), "{bad}");
        }
    }
}
