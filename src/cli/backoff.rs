//! The "Backoff" heading: `--preset`, `--base`, `--multiplier`, `--cap`, `--delays`,
//! `--jitter`, `--seed`.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use crate::duration::{is_unlimited, parse_duration, too_large};
use crate::preset::Preset;
use retry_tool_backoff::Jitter;

/// The "Backoff" heading: the delays between attempts.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Backoff")]
pub struct BackoffArgs {
    /// Start from a published policy
    ///
    /// Sets --base, --multiplier, --cap, --jitter and, where the source defines them,
    /// --max-retries and --deadline; the others keep retry's defaults. Precedence, highest
    /// first: a flag, --preset, a RETRY_<FLAG> variable, RETRY_PRESET, the default; so
    /// `--preset aws -n 5` is AWS's policy with 5 retries. --dry-run shows the schedule.
    #[arg(long, env = "RETRY_PRESET", value_name = "NAME", value_enum)]
    pub preset: Option<Preset>,

    /// First delay [default: 1s]
    ///
    /// The delay before the first retry: humantime syntax (250ms, 1.5s, 2m30s) or a bare
    /// number of seconds. Later delays grow by --multiplier up to --cap.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_BASE", value_name = "DURATION",
          value_parser = parse_duration)]
    pub base: Option<Duration>,

    /// Growth per retry; must be >= 1 [default: 2]
    ///
    /// The delay before retry n (from 0) is base * multiplier^n, capped at --cap, before
    /// jitter. Ignored by decorrelated jitter.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_MULTIPLIER",
          value_name = "FACTOR", value_parser = parse_multiplier)]
    pub multiplier: Option<f64>,

    /// Largest single delay; must be >= base [default: 64s]
    ///
    /// No delay ever exceeds the cap, whatever the jitter.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_CAP", value_name = "DURATION",
          value_parser = parse_duration)]
    pub cap: Option<Duration>,

    /// Explicit delays before retries 1, 2, 3, ...; the last one repeats
    ///
    /// `--delays 1s,5s,30s,2m` waits 1s before the first retry, 5s before the second, 30s before
    /// the third and 2m before every later one, as systemd's RestartSteps= and minfrin/retry's
    /// -d list them. The list takes the place of the exponential formula: --base, --multiplier
    /// or --cap with it (flag or variable) is an error; a --preset's give way to it (its
    /// jitter, retries and deadline still apply). No jitter unless --jitter or a preset sets
    /// one; each mode then treats every listed delay as it treats base * multiplier^n, with the
    /// first delay as the base and the largest as the cap. Server hints still lengthen a delay;
    /// --dry-run shows the schedule. Each item a DURATION, finite; at most 1000 of them.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_DELAYS", value_name = "LIST",
          value_parser = parse_delays)]
    pub delays: Option<DelayList>,

    /// Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]
    ///
    /// With v = min(cap, base * multiplier^n): none waits v; full U(0, v); equal
    /// v/2 + U(0, v/2); decorrelated s = min(cap, U(base, 3*s)) from s = base (AWS
    /// Architecture Blog, "Exponential Backoff And Jitter"); additive
    /// min(cap, base * multiplier^n + U(0, base)) (Google Cloud's retry guides); proportional
    /// min(cap, v * (1 + U(-0.2, 0.2))) (gRPC connection backoff, grpc/grpc
    /// doc/connection-backoff.md, kept under the cap). With --simulate, a comma-separated
    /// list of modes to compare, no-backoff (retry at once) among them.
    //
    // With --simulate, [`parse`] reads this flag as the simulation's list of modes instead
    // (see [`SimulateArgs::modes`]); this field is then `None`.
    #[arg(
        allow_hyphen_values = true,
        short,
        long,
        env = "RETRY_JITTER",
        value_name = "MODE",
        value_enum,
        hide_possible_values = true
    )]
    pub jitter: Option<JitterArg>,

    /// Seed the jitter, to reproduce a schedule [default: from the OS]
    ///
    /// For reproducing a schedule only: a fixed seed on many clients brings back the
    /// thundering herd that jitter exists to prevent. Do not set RETRY_SEED for a whole fleet.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_SEED", value_name = "N")]
    pub seed: Option<u64>,
}

/// `--jitter` of a run: one [`Jitter`] mode, by the name the mode has ([`Jitter::name`]), in the
/// order of [`Jitter::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitterArg(pub Jitter);

/// Every [`JitterArg`], one per mode of [`Jitter::ALL`].
static JITTER_ARGS: [JitterArg; Jitter::ALL.len()] = {
    let mut args = [JitterArg(Jitter::None); Jitter::ALL.len()];
    let mut i = 0;
    while i < args.len() {
        args[i] = JitterArg(Jitter::ALL[i]);
        i += 1;
    }
    args
};

impl JitterArg {
    /// What the mode does, beside its name in the completions. Each description stands alone
    /// (without `--help`'s definition of v), in words: "the exponential delay" is min(cap,
    /// base * multiplier^n).
    fn description(self) -> &'static str {
        match self.0 {
            Jitter::None => {
                "the exponential delay, min(cap, base * multiplier^n), with no randomness"
            }
            Jitter::Full => {
                "random from 0 to the exponential delay: the AWS Architecture Blog's recommendation"
            }
            Jitter::Equal => "half the exponential delay, plus a random part up to the other half",
            Jitter::Decorrelated => "random from base to 3 times the previous delay, at most cap",
            Jitter::Additive => {
                "base * multiplier^n plus a random part up to base, at most cap: Google Cloud's \
                 guides"
            }
            Jitter::Proportional => {
                "the exponential delay, 20% more or less at random, at most cap: gRPC connection \
                 backoff"
            }
        }
    }
}

impl ValueEnum for JitterArg {
    fn value_variants<'a>() -> &'a [Self] {
        &JITTER_ARGS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.description()))
    }
}

/// The most delays `--delays` takes: a list for a person to write; past it, the last one
/// repeats anyway.
pub const MAX_DELAYS: usize = 1000;

/// `--delays`: the listed delays, and the list as it was given (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayList {
    /// The delays before retries 1, 2, 3, ... (the last repeating): at least one, each finite.
    pub delays: Vec<Duration>,
    /// The value as given.
    pub text: String,
}

/// `--delays`: a comma-separated list of 1 to [`MAX_DELAYS`] DURATIONs, none of them `inf`.
fn parse_delays(s: &str) -> Result<DelayList, String> {
    if s.trim().is_empty() {
        return Err("expected a comma-separated list of delays, such as 1s,5s,30s".into());
    }
    let count = memchr::memchr_iter(b',', s.as_bytes()).count() + 1;
    if count > MAX_DELAYS {
        return Err(format!(
            "{count} delays: at most {MAX_DELAYS} (the last one repeats)"
        ));
    }
    let delays = s
        .split(',')
        .enumerate()
        .map(|(i, item)| {
            let n = i + 1;
            if item.trim().is_empty() {
                return Err(format!("delay {n} is empty"));
            }
            // `1s 5s 30s` would be one delay of 36 s (a DURATION may be a sum, `1m 30s`).
            if item.trim().contains(char::is_whitespace) {
                return Err(format!(
                    "delay {n} ({}) holds more than one duration: separate the delays with \
                     commas (1s,5s,30s), or write a sum without spaces (1m30s)",
                    item.trim()
                ));
            }
            match parse_duration(item) {
                Ok(d) if is_unlimited(d) => Err(match too_large(item) {
                    Some(words) => format!(
                        "delay {n} ({}) {words}, and a delay must be finite (use -n for fewer \
                         retries)",
                        item.trim()
                    ),
                    None => format!(
                        "delay {n} ({}) must be finite: a delay without end is no retry at all \
                         (use -n for fewer retries)",
                        item.trim()
                    ),
                }),
                Ok(d) => Ok(d),
                Err(e) => Err(format!("delay {n} ({}): {e}", item.trim())),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DelayList {
        delays,
        text: s.to_string(),
    })
}

/// `--multiplier`: a finite number `>= 1`.
fn parse_multiplier(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m >= 1.0 => Ok(m),
        Ok(_) => Err("must be a finite number >= 1".into()),
        Err(_) => Err("expected a number >= 1".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::value_name;

    #[test]
    fn multiplier_bounds() {
        assert_eq!(parse_multiplier("1"), Ok(1.0));
        assert!(parse_multiplier("0.9").is_err());
        assert!(parse_multiplier("inf").is_err());
        assert!(parse_multiplier("NaN").is_err());
    }

    #[test]
    fn delay_lists() {
        let list = parse_delays("1s, 5s,30s,2m").unwrap();
        assert_eq!(
            list.delays,
            [1, 5, 30, 120].map(Duration::from_secs).to_vec()
        );
        assert_eq!(list.text, "1s, 5s,30s,2m");
        assert_eq!(parse_delays("0").unwrap().delays, [Duration::ZERO]);
        for (bad, says) in [
            ("", "comma-separated"),
            (" ", "comma-separated"),
            ("1s,,2s", "delay 2 is empty"),
            ("1s,", "delay 2 is empty"),
            ("1s,inf", "delay 2 (inf) must be finite"),
            (
                "1s,1e400",
                "delay 2 (1e400) is too large: past 9223372036854775807",
            ),
            ("-1s", "delay 1 (-1s)"),
            ("1s,x", "delay 2 (x)"),
        ] {
            let e = parse_delays(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let many = vec!["1"; MAX_DELAYS].join(",");
        assert_eq!(parse_delays(&many).unwrap().delays.len(), MAX_DELAYS);
        let e = parse_delays(&format!("{many},1")).unwrap_err();
        assert!(e.starts_with("1001 delays: at most 1000"), "{e}");
    }

    #[test]
    fn jitter_names_are_the_modes_own() {
        let names: Vec<String> = JitterArg::value_variants().iter().map(value_name).collect();
        assert_eq!(
            names,
            [
                "none",
                "full",
                "equal",
                "decorrelated",
                "additive",
                "proportional"
            ]
        );
        for (&arg, jitter) in JitterArg::value_variants().iter().zip(Jitter::ALL) {
            assert_eq!(arg, JitterArg(jitter));
            assert_eq!(value_name(&arg), jitter.name());
        }
    }
}
