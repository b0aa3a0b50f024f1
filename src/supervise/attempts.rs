//! The attempts loop: run an attempt, settle what it left, gather what the run knows
//! ([`decide::Facts`]), take the one decision ([`decide::decide`]), and do what it says: end the
//! run, or say the failure and the wait, run `--on-retry`, wait, check again
//! ([`decide::after_pause`]) and run the next attempt.

use std::time::Instant;

use rand::rngs::Xoshiro256PlusPlus;

use super::Supervisor;
use super::attempt::AttemptEnd;
use super::decide::{self, Decision, Ending, Facts, Next, Pause};
use super::hints;
use super::protect::Cooled;
use crate::codes::Verdict;
use crate::observe::problems::Problem;
use crate::observe::reasons::{Reason, StdinLost};
use crate::observe::{Event, HookEnd};
use crate::process::{self, Outcome};
use crate::status::Exit;
use crate::transient::Classes;

impl Supervisor<'_> {
    pub(super) fn attempts(&self, rng: &mut Xoshiro256PlusPlus) -> Exit {
        let mut attempt: u64 = 1;
        loop {
            let last = self.known_last(attempt);
            let mut end = match self.run_attempt(attempt, last) {
                Ok(end) => end,
                Err(exit) => return exit,
            };
            self.absorb_env_file(&format!("attempt {attempt}"));
            let status = end.outcome.status();
            let findings = end.io.findings;
            end.transient = self.config.rules.transient.map(|_| {
                self.transient_classes(&end.outcome, findings.transient, findings.http_code())
            });
            // Exit status 0 that the output says is a failure (`--retry-if-output`).
            let output_failed = status == 0 && findings.retry_match;
            let succeeded = status == 0 && !output_failed;
            self.emit(&Event::AttemptEnd(end.attempted(attempt, output_failed)));
            // Nothing of an attempt that did not succeed outlives it: what it left running
            // (background jobs, processes in other groups or sessions) is stopped before the
            // next step. A successful attempt keeps what it started (a daemon, say).
            // With --forever a success is run again: what it left is stopped as well, unless
            // --stop-on 0 makes it the run's end, as any success that ends the run.
            let run_again = self.shape.runs_success_again(&self.config.rules);
            if let Some((child, stop)) = end.leftovers.take()
                && (!succeeded || run_again || end.interrupted.is_some())
            {
                let (left, signal) = self.stop_leftovers_counted(&child, stop);
                end.left_running = left;
                if let Some(signal) = signal {
                    end.interrupted.get_or_insert(signal);
                }
            }
            let settled = self.settle_io(attempt, &mut end, succeeded, output_failed);
            // The attempt's output is all written: its fold ends before retry's line about it.
            self.emit(&Event::OutputSettled);
            if let Some(unsettled) = settled {
                return self.conclude(decide::after_output(unsettled), attempt, None);
            }
            let launch_failed = matches!(end.outcome, Outcome::LaunchFailed { .. });
            // Asked of the world only when the attempt is not the run's end already.
            let consult = end.interrupted.is_none() && !launch_failed;
            if let (Outcome::LaunchFailed { message, status }, None) =
                (&end.outcome, end.interrupted)
            {
                let hint = self
                    .config
                    .not_found_hint
                    .as_deref()
                    .filter(|_| *status == crate::status::NOT_FOUND);
                self.emit(&Event::LaunchFailed { message, hint });
            }
            let verdict = decide::verdict(status, output_failed, findings.stop_match, |s| {
                self.config.conditions.verdict(s)
            });
            // Protecting the service (protect.rs): the attempt counted in the budget.
            let budget = consult.then(|| {
                self.budget_attempt_end(attempt, verdict, findings.delay_hint.map(|h| h.not_before))
            });
            // `--reset-after`: an attempt that a timeout stopped hung rather than ran.
            let stopped = matches!(end.outcome, Outcome::Stopped { .. });
            if consult
                && self.shape.may_reset(verdict)
                && !stopped
                && self.reset_if_long(attempt, end.ran)
            {
                self.rule.replace(self.rule_after_reset());
            }
            let now = Instant::now();
            let replay_lost = self.io.is_some_and(|io| io.replay_failure().is_some());
            let facts = Facts {
                attempt,
                outcome: &end.outcome,
                output_failed,
                stop_match: findings.stop_match,
                interrupted: end.interrupted,
                verdict,
                // Asked only when it can matter: after a failure, or a success --until-fail
                // runs again.
                reader_gone: if consult
                    && (verdict != Verdict::Success || self.shape.asks_reader_after_success())
                {
                    process::gone_reader()
                } else {
                    None
                },
                replay_lost,
                hint: hints::asked(findings.delay_hint),
                cooldown: budget.as_ref().and_then(|b| b.cooldown()),
                budget_refusal: budget.as_ref().and_then(|b| b.give_up.as_ref()),
                elapsed: now.saturating_duration_since(self.start),
                http_status: findings.http_code(),
                transient: end.transient.unwrap_or_default(),
                rules: &self.config.rules,
                shape: &*self.shape,
            };
            let mut streak = self.streak.get();
            // The one give-up rule, shared with `--dry-run` and the simulator.
            let decision = decide::decide(&facts, &mut self.rule.borrow_mut(), &mut streak, rng);
            self.streak.set(streak);
            // A success of a streak not yet complete: the run has not succeeded yet.
            if consult
                && self.shape.success_is_partial()
                && verdict == Verdict::Success
                && !matches!(decision, Decision::End(Ending::StreakDone { .. }))
            {
                self.budget_streak_goes_on();
            }
            let (next, delay, hint) = match decision {
                Decision::Again { next, delay, hint } => (next, delay, hint),
                Decision::End(ending) => {
                    return self.conclude(ending, attempt, Some((&end, output_failed)));
                }
            };
            let exit = super::exit_for(
                &end.outcome,
                output_failed,
                self.config.rules.preserve_status,
            );
            match next {
                Next::Retry => {
                    if let Some(text) = &end.io.bad_hint {
                        self.emit(&Event::Problem(Problem::BadHint(text)));
                    }
                    self.emit(&Event::Wait {
                        after: end.attempted(attempt, output_failed),
                        delay,
                        hint,
                        asked: facts.hint.map(|h| h.0),
                    });
                }
                Next::Rerun => self.emit(&Event::Rerun { attempt, delay }),
                Next::Streak { current, needed } => self.emit(&Event::Streak {
                    attempt,
                    current,
                    needed,
                    delay,
                }),
            }
            // The hook runs within the delay: the next attempt still starts at `wake`. Like an
            // attempt, it is stopped at the deadline. No hook runs between successes of a
            // streak (they are not retries).
            let wake = now.checked_add(delay);
            if !matches!(next, Next::Streak { .. })
                && let Some(script) = &self.config.hooks.on_retry
            {
                let last = if next == Next::Rerun {
                    Exit::Code(0)
                } else {
                    exit
                };
                let env = self.hook_env(attempt, last, Some(delay));
                let hook_end = match self.run_hook("on_retry", script, &env, self.deadline_at()) {
                    Ok(end) => end,
                    Err(signal) => return self.interrupted_by(signal),
                };
                let hook_failed =
                    hook_end != HookEnd::Status(0) && self.config.hooks.stop_on_failure;
                let pause = Pause::Hook { hook_failed };
                let streak = self.streak.get();
                let passed = self.deadline_passed();
                if let Some(d) =
                    decide::after_pause(next, pause, attempt, exit, passed, false, &streak)
                {
                    return self.conclude(decide::settled(&*self.shape, d), attempt, None);
                }
            }
            if let Err(signal) = self.wait(wake) {
                return self.interrupted_by(signal);
            }
            // No attempt starts at or after the deadline, nor once the recording of stdin
            // failed during the wait.
            let lost = self.io.is_some_and(|io| io.replay_failure().is_some());
            let streak = self.streak.get();
            let passed = self.deadline_passed();
            if let Some(d) =
                decide::after_pause(next, Pause::Wait, attempt, exit, passed, lost, &streak)
            {
                return self.conclude(decide::settled(&*self.shape, d), attempt, None);
            }
            // Protecting the service (protect.rs): a later cooldown another run set meanwhile,
            // or a breaker that opened: the decision ends the run then.
            if next == Next::Retry {
                match self.shared_cooldown(attempt + 1) {
                    Ok(()) => {}
                    Err(Cooled::Stopped(exit)) => return exit,
                    Err(Cooled::Refused { why, .. }) => {
                        let streak = self.streak.get();
                        let pause = Pause::Refused(why);
                        if let Some(d) =
                            decide::after_pause(next, pause, attempt, exit, false, false, &streak)
                        {
                            let ending = decide::settled(&*self.shape, d);
                            return self.conclude(ending, attempt, None);
                        }
                    }
                }
            }
            attempt += 1;
        }
    }

    /// Does what `ending`, which ends the run after attempt `attempt`, says; `ended` is that
    /// attempt's end and whether it failed by its output, when the decision came right after
    /// it. Returns how retry ends.
    fn conclude(&self, ending: Ending, attempt: u64, ended: Option<(&AttemptEnd, bool)>) -> Exit {
        let failed = |ended: Option<(&AttemptEnd, bool)>| {
            if let Some((end, output_failed)) = ended {
                self.emit(&Event::Failed(end.attempted(attempt, output_failed)));
            }
        };
        match ending {
            Ending::Stopped { signal, exit } => {
                if let Some((end, output_failed)) = ended
                    && (end.outcome.status() != 0 || output_failed)
                {
                    failed(ended);
                }
                self.emit(&Event::Stopped(signal));
                exit
            }
            Ending::Succeed => {
                self.emit(&Event::Succeeded {
                    attempts: attempt,
                    elapsed: self.start.elapsed(),
                });
                Exit::Code(0)
            }
            Ending::StreakDone { needed } => {
                self.emit(&Event::StreakDone { attempt, needed });
                Exit::Code(0)
            }
            Ending::GiveUp {
                reason,
                exit,
                failed_first,
                streak,
                lost,
            } => {
                if let Some(next) = lost {
                    self.stdin_lost(next);
                }
                if failed_first {
                    failed(ended);
                }
                self.give_up(attempt, &reason, streak, exit)
            }
            Ending::NoFailure { runs, reason } => self.no_failure(runs, &reason),
            Ending::UntilFailFailed { exit } => {
                if let Some((end, output_failed)) = ended {
                    self.emit(&Event::UntilFailFailed(
                        end.attempted(attempt, output_failed),
                    ));
                }
                exit
            }
            Ending::Abort { exit, next } => {
                self.stdin_lost(next);
                exit
            }
            Ending::Quiet { exit } => exit,
        }
    }

    /// The classes of transient failure an attempt that ended with `outcome` is known by: what
    /// its output named (`named`), retry's own stop at `--timeout` or `--idle-timeout`
    /// (`timeout`), the status of the last HTTP response (`--http-hints`, `http`) when
    /// `--http-retry-on` retries it, and the documented exit status of the program run as the
    /// command itself.
    fn transient_classes(&self, outcome: &Outcome, named: Classes, http: Option<u16>) -> Classes {
        use crate::process::StopReason;
        use crate::transient::{Class, class_of_exit};
        let mut classes = named;
        let retried = self.config.rules.http_retry_on.unwrap_or_default();
        if http.is_some_and(|code| retried.contains(code)) {
            classes = classes.with(Class::Http);
        }
        if let Outcome::Stopped {
            reason: StopReason::Timeout | StopReason::Idle(_),
            ..
        } = outcome
        {
            classes = classes.with(Class::Timeout);
        }
        let program = self.config.command.first().and_then(|p| {
            std::path::Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        });
        if let (Outcome::Exited(status), Some(program)) = (outcome, program)
            && let Ok(status) = u8::try_from(*status)
            && let Some(class) = class_of_exit(&program, status)
        {
            classes = classes.with(class);
        }
        classes
    }

    /// Says why the recording of stdin failed, so that attempt `next` would see only part of it.
    fn stdin_lost(&self, next: u64) {
        let why = self
            .io
            .and_then(|io| io.replay_failure())
            .unwrap_or_default();
        let lost = StdinLost { why, next };
        self.emit(&Event::Problem(Problem::StdinLost(&lost)));
    }

    /// `--until-fail` ends after `runs` runs without a failure, for `reason`: reported, and
    /// `--on-give-up` run; status 0.
    fn no_failure(&self, runs: u64, reason: &Reason) -> Exit {
        self.emit(&Event::NoFailure { runs, reason });
        if let Some(script) = &self.config.hooks.on_give_up {
            let env = self.hook_env(runs, Exit::Code(0), None);
            if let Err(signal) = self.run_hook("on_give_up", script, &env, None) {
                return self.interrupted_by(signal);
            }
        }
        Exit::Code(0)
    }
}
