//! How a timed-out attempt is stopped, in words: `--signal`, `--kill-after` and
//! `--preserve-status` as `--verbose` and `--dry-run` show them.

use std::time::Duration;

use crate::duration::{format_exact, format_human};
use crate::stop_signal::StopSignal;

/// The settings that stop an attempt (filled from a run's settings by `StopPlan::of`, in
/// `crate::config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopPlan {
    /// `--timeout` (`None`: no limit).
    pub timeout: Option<Duration>,
    /// `--idle-timeout` (`None`: no limit).
    pub idle: Option<Duration>,
    /// `--deadline` (`None`: none).
    pub deadline: Option<Duration>,
    /// `--signal`.
    pub signal: StopSignal,
    /// `--kill-after` (0: never KILL).
    pub kill_after: Duration,
    /// `--preserve-status`.
    pub preserve: bool,
}

impl StopPlan {
    /// What is sent, in order, as `--verbose` says it: `SIGTERM, then KILL 10s later`,
    /// `SIGINT, then no KILL`, `no signal, then KILL 1s later`, `SIGKILL`.
    pub fn escalation(&self) -> String {
        let (first, then) = self.steps(format_human);
        format!("{first}{then}")
    }

    /// The first step (`SIGTERM`, `no signal`) and what follows it (`, then KILL 10s later`,
    /// `, then no KILL`, nothing after KILL), the grace as `shown` writes it.
    fn steps(&self, shown: fn(Duration) -> String) -> (String, String) {
        let first = match self.signal.number() {
            0 => "no signal".to_string(),
            _ => self.signal.to_string(),
        };
        let then = if self.signal.is_kill() {
            String::new()
        } else if self.kill_after.is_zero() {
            ", then no KILL".to_string()
        } else {
            format!(", then KILL {} later", shown(self.kill_after))
        };
        (first, then)
    }

    /// The words of the `--dry-run` line after the table (`stop   WORDS`), when an attempt has a time limit or the way it
    /// is stopped was asked for (`--signal`, `--preserve-status`); `None` otherwise, so that a
    /// plain schedule stays a plain table.
    pub fn dry_run_line(&self) -> Option<String> {
        let asked = self.signal != StopSignal::DEFAULT || self.preserve;
        if self.timeout.is_none() && self.idle.is_none() && !asked {
            return None;
        }
        let limits: Vec<String> = [
            self.timeout
                .map(|t| format!("--timeout {}", format_exact(t))),
            self.idle
                .map(|t| format!("--idle-timeout {}", format_exact(t))),
            self.deadline
                .map(|t| format!("--deadline {}", format_exact(t))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let when = if limits.is_empty() {
            "never (no --timeout, --idle-timeout or --deadline)".to_string()
        } else {
            format!("at {}", limits.join(" or "))
        };
        let end = if self.preserve {
            "retry ends as a stopped last attempt ended (--preserve-status)"
        } else {
            "status 124 (137 after KILL)"
        };
        let (first, then) = self.steps(format_exact);
        Some(format!(
            "{when}: {first} to the attempt's process tree{then}; {end}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> StopPlan {
        StopPlan {
            timeout: Some(Duration::from_secs(10)),
            idle: None,
            deadline: None,
            signal: StopSignal::DEFAULT,
            kill_after: Duration::from_secs(10),
            preserve: false,
        }
    }

    #[test]
    fn says_what_is_sent_and_when() {
        assert_eq!(plan().escalation(), "SIGTERM, then KILL 10s later");
        let p = StopPlan {
            signal: "0".parse().unwrap(),
            kill_after: Duration::from_secs(1),
            ..plan()
        };
        assert_eq!(p.escalation(), "no signal, then KILL 1s later");
        let p = StopPlan {
            signal: "KILL".parse().unwrap(),
            ..plan()
        };
        assert_eq!(p.escalation(), "SIGKILL");
        let p = StopPlan {
            kill_after: Duration::ZERO,
            ..plan()
        };
        assert_eq!(p.escalation(), "SIGTERM, then no KILL");
        assert_eq!(
            plan().dry_run_line().unwrap(),
            "at --timeout 10s: SIGTERM to the attempt's process tree, then KILL 10s \
             later; status 124 (137 after KILL)"
        );
        let none = StopPlan {
            timeout: None,
            ..plan()
        };
        assert_eq!(none.dry_run_line(), None);
        let asked = StopPlan {
            preserve: true,
            ..none
        };
        assert!(
            asked
                .dry_run_line()
                .unwrap()
                .starts_with("never (no --timeout")
        );
        let tiny = StopPlan {
            timeout: Some(Duration::from_nanos(1)),
            ..plan()
        };
        assert!(tiny.dry_run_line().unwrap().contains("--timeout 1ns"));
        let exact = StopPlan {
            timeout: Some(Duration::from_millis(2250)),
            kill_after: Duration::from_millis(1500),
            ..plan()
        };
        assert!(exact.dry_run_line().unwrap().starts_with(
            "at --timeout 2.25s: SIGTERM to the attempt's process tree, then KILL 1.5s later"
        ));
    }
}
