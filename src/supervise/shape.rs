//! The loop shapes in the supervisor ([`crate::config::Shape`]): after each attempt, once its
//! verdict is known, the shape says whether the attempts loop goes on as usual (retry a
//! failure, end at a success), starts the next attempt itself, or ends the run.
//!
//! - `--successes N`: a success short of N in a row waits the first delay as written (no
//!   jitter: a steady pace for a health check), then the next attempt runs; no hook runs
//!   between successes (they are not retries); a failure ends the streak and goes the usual
//!   way, its retry drawn from the one give-up rule, which so counts failures only. The
//!   deadline ending a streak in progress ends the run with 124, as coreutils `timeout` ends
//!   when time runs out: the last status, 0, would claim a streak never seen.
//! - `--until-fail`: the roles reversed. A success is retried through the same give-up rule
//!   (delays, `-n`, the deadline, server hints, `--on-retry`); the first failure ends the run
//!   with its status; running out of retries or time without one ends it with 0 (and runs
//!   `--on-give-up`). A run the deadline stops did not fail: it ran out of time.

use std::cell::Cell;
use std::time::Instant;

use rand::rngs::Xoshiro256PlusPlus;

use super::{AttemptEnd, Supervisor, exit_for, hints};
use crate::backoff::GiveUpRule;
use crate::codes::Verdict;
use crate::config::Shape;
use crate::duration::format_human;
use crate::process::{Outcome, StopReason};
use crate::report::HookEnd;
use crate::status::{Exit, TIMED_OUT};

/// What the shape makes of an attempt's end.
pub(super) enum Turn {
    /// The usual way: retry a failure, end at a success.
    AsUsual,
    /// The next attempt runs now (the wait before it is over).
    Again,
    /// The run ends with this status (reported already).
    End(Exit),
}

/// The successes in a row of `--successes`: the current streak and the longest seen.
#[derive(Debug, Default)]
pub(super) struct Streak {
    current: Cell<u64>,
    longest: Cell<u64>,
}

impl Supervisor<'_> {
    /// After attempt `attempt` (its end `end`, its `verdict`, `output_failed` when it exited 0
    /// but its output matched `--retry-if-output`): what the loop's shape makes of it.
    pub(super) fn shape_turn(
        &self,
        attempt: u64,
        end: &AttemptEnd,
        verdict: Verdict,
        output_failed: bool,
        rule: &mut GiveUpRule,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Turn {
        let succeeded = verdict == Verdict::Success;
        match self.config.shape {
            Shape::Plain => Turn::AsUsual,
            Shape::Streak(needed) => self.streak_turn(attempt, succeeded, needed),
            Shape::UntilFail if succeeded => self.rerun(attempt, end, rule, rng),
            Shape::UntilFail => {
                if let Outcome::Stopped {
                    reason: StopReason::Deadline,
                    ..
                } = end.outcome
                {
                    let why = format!("the deadline stopped run {attempt} before it ended");
                    return Turn::End(self.no_failure(attempt - 1, &why));
                }
                self.reporter
                    .until_fail_failed(attempt, &end.outcome, output_failed);
                let preserve = self.config.preserve_status;
                Turn::End(exit_for(&end.outcome, output_failed, preserve))
            }
        }
    }

    /// `why` a run of `--successes` gives up, with the streak it reached: `no retries left;
    /// the longest streak was 2 of 3 successes in a row`. As it is for any other shape.
    pub(super) fn with_streak(&self, why: &str) -> String {
        match self.config.shape {
            Shape::Streak(needed) => format!(
                "{why}; the longest streak was {} of {needed} successes in a row",
                self.streak.longest.get()
            ),
            Shape::Plain | Shape::UntilFail => why.to_string(),
        }
    }

    /// `--successes needed`, after attempt `attempt`.
    fn streak_turn(&self, attempt: u64, succeeded: bool, needed: u64) -> Turn {
        let streak = &self.streak;
        if !succeeded {
            streak.current.set(0);
            return Turn::AsUsual;
        }
        let current = streak.current.get() + 1;
        streak.current.set(current);
        streak.longest.set(streak.longest.get().max(current));
        if current >= needed {
            self.reporter.streak_done(attempt, needed);
            return Turn::End(Exit::Code(0));
        }
        // The run's end is counted by the breaker once the streak is complete or broken.
        self.budget_streak_goes_on();
        let delay = self.config.policy.base();
        let wake = Instant::now().checked_add(delay);
        // The closing line names the longest streak (`with_streak`): the current one only when
        // it is shorter.
        let short = |why: &str| match streak.longest.get() {
            longest if longest > current => {
                format!("{why} after {current} of {needed} successes in a row")
            }
            _ => why.to_string(),
        };
        if self.deadline_passed() {
            let why = short("the deadline has passed");
            return Turn::End(self.give_up(attempt, &why, Exit::Code(TIMED_OUT)));
        }
        if self
            .deadline
            .is_some_and(|d| wake.is_none_or(|wake| wake >= d))
        {
            let why = short(&format!(
                "the next wait ({}) would end at or past the deadline",
                format_human(delay)
            ));
            return Turn::End(self.give_up(attempt, &why, Exit::Code(TIMED_OUT)));
        }
        self.reporter.streak(attempt, current, needed, delay);
        if let Err(signal) = self.wait(wake) {
            return Turn::End(self.interrupted_by(signal));
        }
        if self.deadline_passed() {
            let why = short("the deadline has passed");
            return Turn::End(self.give_up(attempt, &why, Exit::Code(TIMED_OUT)));
        }
        if let Some(why) = self.replay_lost(attempt + 1) {
            return Turn::End(self.give_up(attempt, &short(&why), Exit::OwnFailure));
        }
        Turn::Again
    }

    /// `--until-fail`: run `attempt` succeeded; the next one comes after the delay the
    /// give-up rule grants, or the run ends without a failure.
    fn rerun(
        &self,
        attempt: u64,
        end: &AttemptEnd,
        rule: &mut GiveUpRule,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Turn {
        let findings = end.io.findings;
        if findings.stop_match {
            return Turn::End(self.no_failure(attempt, "its output matched --stop-if-output"));
        }
        if crate::process::stdout_reader_gone() {
            return Turn::End(self.no_failure(attempt, "the reader of stdout is gone"));
        }
        let now = Instant::now();
        let hint = hints::asked(findings.delay_hint);
        let elapsed = now.saturating_duration_since(self.start);
        let wait = match rule.next_delay(elapsed, hint.map(|h| h.0), rng) {
            Ok(delay) => self.hinted_wait(delay, hint),
            Err(why) => Err(why.to_string()),
        };
        let delay = match wait {
            Ok(wait) => wait.delay,
            Err(why) => return Turn::End(self.no_failure(attempt, &why)),
        };
        self.reporter.rerun(attempt, delay);
        if let Some(script) = &self.config.hooks.on_retry {
            let env = self.hook_env(attempt, Exit::Code(0), Some(delay));
            let end = match self.run_hook("on_retry", script, &env, self.deadline) {
                Ok(end) => end,
                Err(signal) => return Turn::End(self.interrupted_by(signal)),
            };
            if self.deadline_passed() {
                let why = "the deadline passed during --on-retry";
                return Turn::End(self.no_failure(attempt, why));
            }
            if end != HookEnd::Status(0) && self.config.hooks.stop_on_failure {
                return Turn::End(self.no_failure(attempt, "the --on-retry hook failed"));
            }
        }
        if let Err(signal) = self.wait(now.checked_add(delay)) {
            return Turn::End(self.interrupted_by(signal));
        }
        if self.deadline_passed() {
            return Turn::End(self.no_failure(attempt, "the deadline has passed"));
        }
        if self.replay_lost(attempt + 1).is_some() {
            return Turn::End(Exit::OwnFailure);
        }
        Turn::Again
    }

    /// `--until-fail` ends after `runs` runs without a failure, for `why`: reported, and
    /// `--on-give-up` run; status 0.
    fn no_failure(&self, runs: u64, why: &str) -> Exit {
        self.reporter.until_fail_none(runs, why);
        if let Some(script) = &self.config.hooks.on_give_up {
            let env = self.hook_env(runs, Exit::Code(0), None);
            if let Err(signal) = self.run_hook("on_give_up", script, &env, None) {
                return self.interrupted_by(signal);
            }
        }
        Exit::Code(0)
    }
}
