//! `-s SIGNAL`: the signal that stops a timed-out attempt, by name or number, as coreutils
//! `timeout -s` takes it (<https://www.gnu.org/software/coreutils/manual/html_node/timeout-invocation.html>,
//! names as in <https://www.gnu.org/software/coreutils/manual/html_node/Signal-specifications.html>).

use std::fmt;
use std::str::FromStr;

use crate::signal_names;

/// A signal to send, `0` included (no signal at all: only the KILL of `--kill-after` follows,
/// as for `timeout -s 0`). Always `0..=SIGRTMAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopSignal(i32);

impl StopSignal {
    /// TERM, what a timeout sends unless `-s` says otherwise.
    pub const TERM: StopSignal = StopSignal(signal_names::TERMINATE);

    /// What a timeout sends unless `-s` says otherwise: TERM on Unix; on Windows BREAK
    /// (`CTRL_BREAK_EVENT` to the attempt's process group), the one console event a program
    /// can send to another group.
    #[cfg(unix)]
    pub const DEFAULT: StopSignal = StopSignal::TERM;
    /// What a timeout sends unless `-s` says otherwise (see the Unix item).
    #[cfg(windows)]
    pub const DEFAULT: StopSignal = StopSignal(signal_names::BREAK);

    /// Its number (0 for none).
    pub fn number(self) -> i32 {
        self.0
    }

    /// Whether it is KILL: the attempt then needs no later KILL, and counts as killed (137).
    pub fn is_kill(self) -> bool {
        self.0 == signal_names::KILL
    }
}

impl Default for StopSignal {
    fn default() -> StopSignal {
        StopSignal::DEFAULT
    }
}

/// The real-time signals, `SIGRTMIN..=SIGRTMAX`, where the system has them (Linux: as the C
/// library gives them, after the ones it keeps for itself; FreeBSD: 65-126); macOS has none.
pub fn realtime_range() -> Option<(i32, i32)> {
    #[cfg(target_os = "linux")]
    return Some((libc::SIGRTMIN(), libc::SIGRTMAX()));
    #[cfg(target_os = "freebsd")]
    return Some((65, 126));
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    return None;
}

/// The highest signal number: `SIGRTMAX`, or 31 without real-time signals (macOS).
pub fn max_signal() -> i32 {
    realtime_range().map_or(31, |(_, max)| max)
}

/// Aliases coreutils takes besides the names the system gives.
#[cfg(unix)]
const ALIASES: [(&str, i32); 4] = [
    ("EXIT", 0),
    ("IOT", signal_names::ABORT),
    ("CLD", signal_names::CHILD),
    ("POLL", signal_names::IO),
];

impl FromStr for StopSignal {
    type Err = String;

    /// Parses a number `0..=SIGRTMAX` or a name, with or without `SIG`, any case: `INT`,
    /// `SIGINT`, `int`, `EXIT` (0), `RTMIN`, `RTMIN+N`, `RTMAX-N` (real-time signals).
    ///
    /// # Errors
    /// The one-line reason, for clap to show with the flag and the value.
    fn from_str(text: &str) -> Result<StopSignal, String> {
        #[cfg(windows)]
        return windows_only(text);
        #[cfg(unix)]
        return parse(text);
    }
}

/// On Windows a timeout asks the attempt to stop with a console control event, and only two
/// can be sent: INT (`CTRL_C_EVENT`) and BREAK (`CTRL_BREAK_EVENT`), by name or number.
#[cfg(windows)]
fn windows_only(text: &str) -> Result<StopSignal, String> {
    let upper = text.trim().to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    match name {
        "INT" | "2" => Ok(StopSignal(signal_names::INTERRUPT)),
        "BREAK" | "21" => Ok(StopSignal(signal_names::BREAK)),
        _ => Err(
            "not available on Windows: only INT (Ctrl-C) and BREAK (Ctrl-Break) can ask \
                  an attempt to stop there"
                .to_string(),
        ),
    }
}

/// The Unix parse: names and numbers as `timeout -s` takes them.
#[cfg(unix)]
fn parse(text: &str) -> Result<StopSignal, String> {
    {
        let text = text.trim();
        let max = max_signal();
        let invalid = || {
            format!(
                "expected a signal name (INT, SIGINT, RTMIN+1) or number (0-{max}), as for \
                 timeout -s"
            )
        };
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return text
                .parse::<i32>()
                .ok()
                .filter(|n| *n <= max)
                .map(StopSignal)
                .ok_or_else(invalid);
        }
        let upper = text.to_ascii_uppercase();
        let name = upper.strip_prefix("SIG").unwrap_or(&upper);
        if let Some(&(_, n)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
            return Ok(StopSignal(n));
        }
        if let Some(n) = realtime(name) {
            return Ok(StopSignal(n));
        }
        // Standard names only: a number or a real-time name went above.
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(invalid());
        }
        signal_names::number(&format!("SIG{name}"))
            .map(StopSignal)
            .ok_or_else(invalid)
    }
}

/// `RTMIN`, `RTMIN+N`, `RTMAX`, `RTMAX-N`, within `SIGRTMIN..=SIGRTMAX`.
#[cfg(unix)]
fn realtime(name: &str) -> Option<i32> {
    let (min, max) = realtime_range()?;
    let offset = |rest: &str, sign: char| -> Option<i32> {
        match rest.strip_prefix(sign) {
            None if rest.is_empty() => Some(0),
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n.parse().ok(),
            _ => None,
        }
    };
    let n = if let Some(rest) = name.strip_prefix("RTMIN") {
        min.checked_add(offset(rest, '+')?)?
    } else if let Some(rest) = name.strip_prefix("RTMAX") {
        max.checked_sub(offset(rest, '-')?)?
    } else {
        return None;
    };
    (min..=max).contains(&n).then_some(n)
}

impl fmt::Display for StopSignal {
    /// `SIGINT`, `SIGRTMIN+2`, `0 (none)`, or the bare number of a signal without a name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (min, max) = realtime_range().unwrap_or((i32::MAX, i32::MAX));
        match self.0 {
            0 => f.write_str("0 (none)"),
            n if n == min => f.write_str("SIGRTMIN"),
            n if (min..=max).contains(&n) => write!(f, "SIGRTMIN+{}", n - min),
            n => match signal_names::name(n) {
                Some(name) => f.write_str(name),
                // 32 and 33: the C library keeps them for itself and names neither.
                None => write!(f, "{n}"),
            },
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<i32, String> {
        text.parse::<StopSignal>().map(StopSignal::number)
    }

    #[test]
    fn names_and_numbers_as_timeout_takes_them() {
        for int in ["INT", "SIGINT", "int", "sigint", "2", "02", " INT "] {
            assert_eq!(parse(int), Ok(libc::SIGINT), "{int}");
        }
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("EXIT"), Ok(0));
        assert_eq!(parse("KILL"), Ok(9));
        assert_eq!(parse("CLD"), Ok(libc::SIGCHLD));
        let max = max_signal();
        assert_eq!(parse(&max.to_string()), Ok(max));
        let mut span = 0;
        if let Some((min, max)) = realtime_range() {
            assert_eq!(parse("RTMIN"), Ok(min));
            assert_eq!(parse("SIGRTMIN+2"), Ok(min + 2));
            assert_eq!(parse("RTMAX-1"), Ok(max - 1));
            span = max - min;
            assert_eq!(parse(&format!("RTMIN+{span}")), Ok(max));
        } else {
            assert!(parse("RTMIN").is_err());
        }
        for bad in [
            "",
            "invalid",
            "-1",
            "+2",
            &(max + 1).to_string(),
            "99999999999999999999",
            "SIG",
            "RTMIN-1",
            "RTMAX+1",
            "RTMIN+",
            &format!("RTMIN+{}", span + 1),
            "SIGINT2",
            "１",
            "TERM,INT",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn shows_names() {
        assert_eq!(StopSignal::TERM.to_string(), "SIGTERM");
        assert_eq!(StopSignal(0).to_string(), "0 (none)");
        if let Some((min, _)) = realtime_range() {
            assert_eq!(StopSignal(min + 3).to_string(), "SIGRTMIN+3");
        }
        for n in 0..=max_signal() {
            let shown = StopSignal(n).to_string();
            let name = shown.split(' ').next().unwrap();
            assert_eq!(parse(name), Ok(n), "{shown}");
        }
    }
}
