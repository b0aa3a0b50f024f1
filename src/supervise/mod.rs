//! The supervisor loop: run an attempt, decide, wait (interruptibly), run hooks, report, and
//! end with the right status. Knows the validated [`Config`], never the command line.

mod chronic;
mod ci;
mod env_file;
mod hints;
mod hooks;
mod idle;
mod io;
mod lock;
mod protect;
mod reset;
mod run_env;
mod shape;
mod stop;
mod telemetry;
mod wait;

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::codes::Verdict;
use crate::config::Config;
use crate::env_file::VARIABLE;
use crate::pipeline::{AttemptReport, RunIo};
use crate::process::{self, Attempt, Ended, GroupMode, LaunchError, Outcome, StopReason};
use crate::report::{HookEnd, Reporter};
use crate::signals::{self, Event, Events, passed_on};
use crate::status::Exit;
use protect::Protection;
use stop::{Step, Stopping};

/// Runs the command under `config` until it succeeds, the retries are used up, the deadline
/// passes, or a signal stops it; returns how retry must end.
pub fn run(config: &Config) -> Exit {
    let start = Instant::now();
    crate::report::set_color(config.color);
    let run_id = run_env::new_run_id();
    let reporter = Reporter::new(
        config.verbosity,
        config.log_format,
        &config.command,
        config.max_attempts(),
        start,
    )
    .with_run_id(&run_id)
    .with_loop(config.shape, config.lock.as_ref().map(|l| l.path.as_path()));
    for warning in &config.telemetry.warnings {
        reporter.warning(warning);
    }
    let events = match Events::listen() {
        Ok(events) => events,
        Err(e) => {
            reporter.error(&format!("cannot install signal handlers: {e}"));
            return Exit::OwnFailure;
        }
    };
    let io = if config.pipeline.is_plain() {
        None
    } else {
        match RunIo::new(&config.pipeline) {
            Ok(io) => Some(io),
            Err(e) => {
                reporter.error(&format!("cannot set up pipeline I/O: {e}"));
                return Exit::OwnFailure;
            }
        }
    };
    // --chronic: retry's own lines are held with the attempts' output from here on.
    if let Some(held) = io.as_ref().and_then(RunIo::held) {
        crate::report::hold_from_now(held.clone());
    }
    process::become_subreaper();
    let env_file = env_file::open(&run_id, &reporter);
    let deadline = config.deadline.and_then(|d| start.checked_add(d));
    // retry's own lines and files wait for a reader at most until the deadline (and never past
    // a stop signal).
    crate::outlet::set_patience(deadline);
    let seed = config.seed.unwrap_or_else(crate::entropy::seed);
    let telemetry = RefCell::new(crate::telemetry::Telemetry::start(
        &config.telemetry,
        &run_id,
        &config.command,
    ));
    reporter.start(
        &config.policy,
        config.deadline,
        config.timeout,
        seed,
        &crate::report::StopPlan::of(config),
    );
    let supervisor = Supervisor {
        config,
        events,
        reporter,
        deadline,
        start,
        io,
        run_id,
        last_attempt: Cell::new(config.max_attempts()),
        statuses: RefCell::default(),
        late_failure: RefCell::default(),
        rows: RefCell::default(),
        closing: RefCell::default(),
        open_fold: Cell::default(),
        gave_up: RefCell::default(),
        protect: Protection::open(config),
        streak: shape::Streak::default(),
        env_file: RefCell::new(env_file),
        telemetry,
    };
    let exit = supervisor.run(seed);
    let result = supervisor.run_result(exit);
    // The end, in one order: first what may still turn a success into 125 (the metrics file,
    // the step summary, the step outputs), then what describes the status retry exits with
    // (the annotation), then --chronic's choice to drop or write out what it held (dropped
    // only for a run that exits 0), then the metrics file's warnings, then the trace.
    let (exit, warnings) = supervisor.finish_metrics(exit, result);
    let exit = supervisor.finish_run(exit);
    let exit = supervisor.chronic_finish(exit);
    supervisor.say_warnings(&warnings);
    supervisor.finish_trace(exit, result)
}

struct Supervisor<'a> {
    config: &'a Config,
    events: Events,
    reporter: Reporter,
    /// `--deadline` as an instant; `None` when absent or beyond what the clock can hold.
    deadline: Option<Instant>,
    /// When the run started (the deadline counts from here).
    start: Instant,
    /// Pipeline I/O; `None` when attempts simply inherit retry's descriptors.
    io: Option<RunIo>,
    /// `RETRY_RUN_ID`: the same for every attempt and hook of this run.
    run_id: String,
    /// The last attempt the run may make ([`Supervisor::max_attempts`]; `--reset-after`).
    last_attempt: Cell<Option<u64>>,
    /// Each attempt's status, for GitHub Actions ([`Supervisor::record_attempt`]): the first
    /// and the last ones, and how many there were.
    statuses: RefCell<crate::ci::github::Statuses>,
    /// Why retry exits 125 although the attempts succeeded (a file written at the end that
    /// could not be), for what describes the end ([`Supervisor::failed_late`]).
    late_failure: RefCell<Option<String>>,
    /// Each attempt as the step summary's table shows it (only when there is one to write;
    /// the first and the last ones, [`crate::ci::summary::Rows`]).
    rows: RefCell<crate::ci::summary::Rows>,
    /// The closing line, once said (without `retry: `), for the step summary.
    closing: RefCell<Option<String>>,
    /// The attempt whose CI fold is open, and whether it is known to be the last
    /// ([`Supervisor::fold_open`]).
    open_fold: Cell<Option<(u64, bool)>>,
    /// Why retry gave up, once it has.
    gave_up: RefCell<Option<String>>,
    /// `--splay` and `--budget` (protect.rs).
    protect: RefCell<Protection>,
    /// `--successes`: the successes in a row (shape.rs).
    streak: shape::Streak,
    /// `RETRY_ENV_FILE`; `None` when it cannot be offered (env_file.rs).
    env_file: RefCell<Option<crate::env_file::EnvFile>>,
    /// The metrics file and the trace (telemetry.rs).
    telemetry: RefCell<crate::telemetry::Telemetry>,
}

/// The end of one attempt.
struct AttemptEnd {
    outcome: Outcome,
    ran: Duration,
    /// A stop signal ([`signals::STOP_SIGNALS`]) retry received while the attempt ran.
    interrupted: Option<i32>,
    /// What its piped I/O came to (empty without pipeline flags).
    io: AttemptReport,
    /// The attempt's reaped process, for stopping what is left of its tree, and how far
    /// stopping it had got; `None` when it could not be started.
    leftovers: Option<(Attempt, Stopping)>,
}

impl Supervisor<'_> {
    fn run(&self, seed: u64) -> Exit {
        // The splay is the first draw of the seed's sequence, as in `--dry-run`.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // `--lock` (lock.rs), before anything else and held to the end.
        let _lock = match self.take_lock() {
            Ok(lock) => lock,
            Err(exit) => return exit,
        };
        // Protecting the service (protect.rs): the breaker's admission, the splay and the
        // shared cooldown before attempt 1; the run's end counted by the breaker.
        let exit = match self.before_first_attempt(&mut rng) {
            Ok(()) => self.attempts(&mut rng),
            Err(exit) => exit,
        };
        self.budget_finish();
        exit
    }

    fn attempts(&self, rng: &mut Xoshiro256PlusPlus) -> Exit {
        // The one give-up rule, shared with `--dry-run` and the simulator.
        let mut rule = self.give_up_rule();
        let mut attempt: u64 = 1;
        loop {
            let last = self.known_last(attempt, &rule);
            let mut end = match self.run_attempt(attempt, last) {
                Ok(end) => end,
                Err(exit) => return exit,
            };
            self.absorb_env_file(&format!("attempt {attempt}"));
            let status = end.outcome.status();
            let findings = end.io.findings;
            // Exit status 0 that the output says is a failure (`--retry-if-output`).
            let output_failed = status == 0 && findings.retry_match;
            let succeeded = status == 0 && !output_failed;
            let recorded = if output_failed { 1 } else { status };
            self.record_attempt(attempt, recorded, &end.outcome, end.ran, output_failed);
            self.reporter
                .attempt_end(attempt, &end.outcome, end.ran, output_failed);
            self.telemetry_attempt_end(&end.outcome, output_failed);
            // Nothing of an attempt that did not succeed outlives it: what it left running
            // (background jobs, processes in other groups or sessions) is stopped before the
            // next step. A successful attempt keeps what it started (a daemon, say).
            if let Some((child, stop)) = end.leftovers.take()
                && (!succeeded || end.interrupted.is_some())
                && let Some(signal) = self.stop_leftovers(&child, stop)
            {
                end.interrupted.get_or_insert(signal);
            }
            let settled = self.settle_io(attempt, &mut end, succeeded, output_failed);
            // The attempt's output is all written: its fold ends before retry's line about it.
            self.fold_close();
            if let Some(exit) = settled {
                return exit;
            }
            let exit = exit_for(&end.outcome, output_failed, self.config.preserve_status);
            if let Some(signal) = end.interrupted {
                if !succeeded {
                    self.reporter
                        .failed(attempt, &end.outcome, end.ran, None, output_failed);
                }
                self.reporter.interrupted(signal);
                return exit;
            }
            if let Outcome::LaunchFailed { message, status } = &end.outcome {
                match &self.config.not_found_hint {
                    Some(hint) if *status == crate::status::NOT_FOUND => {
                        self.reporter.launch_failed(&format!("{message}; {hint}"));
                    }
                    _ => self.reporter.launch_failed(message),
                }
                return self.give_up(attempt, "the command could not be run", exit);
            }
            let verdict = if findings.stop_match && !succeeded {
                Verdict::Stop
            } else if output_failed {
                Verdict::Retry
            } else {
                self.config.conditions.verdict(status)
            };
            // Protecting the service (protect.rs): the attempt counted in the budget.
            let budget = self.budget_attempt_end(
                attempt,
                verdict,
                findings.delay_hint.map(|h| h.not_before),
            );
            // Loop shapes (shape.rs): streaks of successes, until it fails.
            match self.shape_turn(attempt, &end, verdict, output_failed, &mut rule, rng) {
                shape::Turn::AsUsual => {}
                shape::Turn::Again => {
                    attempt += 1;
                    continue;
                }
                shape::Turn::End(exit) => return exit,
            }
            if verdict == Verdict::Success {
                self.closing.replace(Some(self.reporter.success(attempt)));
                return Exit::Code(0);
            }
            // An attempt that a timeout stopped hung rather than ran: it is not a healthy run.
            let stopped = matches!(end.outcome, Outcome::Stopped { .. });
            if verdict == Verdict::Retry && !stopped && self.reset_if_long(attempt, end.ran) {
                rule = self.give_up_rule();
            }
            let give_up_reason = if findings.stop_match {
                Some("its output matched --stop-if-output".to_string())
            } else if verdict == Verdict::Stop {
                Some(format!("status {status} is not retried"))
            } else if process::stdout_reader_gone() {
                Some("the reader of stdout is gone".to_string())
            } else {
                self.replay_lost(attempt + 1)
            };
            let failed_giving_up = |why: &str| {
                self.reporter
                    .failed(attempt, &end.outcome, end.ran, None, output_failed);
                self.give_up(attempt, why, exit)
            };
            if let Some(why) = give_up_reason {
                return failed_giving_up(&why);
            }
            // A server's hint may lengthen the delay past the cap, or make retry give up.
            let now = Instant::now();
            let hint = hints::asked(findings.delay_hint);
            // So may the budget's shared cooldown: a hint any run with the KEY saw.
            let floor = budget.lengthen(hint.map(|h| h.0));
            let delay = match rule.next_delay(now.saturating_duration_since(self.start), floor, rng)
            {
                Ok(delay) => delay,
                Err(why) => return failed_giving_up(&crate::report::give_up_reason(why)),
            };
            // Protecting the service (protect.rs): a retry the budget refuses.
            if let Some(why) = &budget.give_up {
                return failed_giving_up(why);
            }
            let wait = match self.hinted_wait(delay, hint) {
                Ok(wait) => wait,
                Err(why) => return failed_giving_up(&why),
            };
            let wake = now.checked_add(delay);
            if let Some(text) = &end.io.bad_hint {
                self.reporter.error(&format!(
                    "--delay-from-output captured '{text}', which is neither a number of seconds \
                     nor an HTTP-date: the hint is ignored"
                ));
            }
            self.record_wait(wait.delay, wait.hint);
            self.reporter
                .failed(attempt, &end.outcome, end.ran, Some(wait), output_failed);
            self.telemetry_wait(
                attempt,
                delay,
                &end.outcome,
                output_failed,
                hint.map(|h| h.0),
            );
            // The hook runs within the delay: the next attempt still starts at `wake`. Like an
            // attempt, it is stopped at the deadline.
            if let Some(script) = &self.config.hooks.on_retry {
                let env = self.hook_env(attempt, exit, Some(delay));
                let end = match self.run_hook("on_retry", script, &env, self.deadline) {
                    Ok(end) => end,
                    Err(signal) => return self.interrupted_by(signal),
                };
                if self.deadline_passed() {
                    return self.give_up(attempt, "the deadline passed during --on-retry", exit);
                }
                if end != HookEnd::Status(0) && self.config.hooks.stop_on_failure {
                    return self.give_up(attempt, "the --on-retry hook failed", exit);
                }
            }
            if let Err(signal) = self.wait(wake) {
                return self.interrupted_by(signal);
            }
            // No attempt starts at or after the deadline.
            if self.deadline_passed() {
                return self.give_up(attempt, "the deadline has passed", exit);
            }
            // The recording may have failed during the wait.
            if let Some(why) = self.replay_lost(attempt + 1) {
                return self.give_up(attempt, &why, exit);
            }
            // Protecting the service (protect.rs): a later cooldown another run set meanwhile.
            if let Err(exit) = self.shared_cooldown(attempt + 1, Some(exit)) {
                return exit;
            }
            attempt += 1;
        }
    }

    /// Whether attempt `attempt`, about to start, is known to be the run's last whatever it
    /// does: it is attempt N of N, or (at the first success ending the run) `rule` can grant
    /// no retry before the deadline however the attempt ends. Never with a `--reset-after`
    /// that a long attempt could reach, which would grant retries afresh.
    fn known_last(&self, attempt: u64, rule: &crate::backoff::GiveUpRule) -> bool {
        let may_reset = self
            .config
            .reset_after
            .is_some_and(|r| self.config.timeout.is_none_or(|t| t > r));
        if may_reset {
            return false;
        }
        self.max_attempts() == Some(attempt)
            || (self.config.shape == crate::config::Shape::Plain
                && rule.surely_gives_up(self.start.elapsed()))
    }

    /// Whether the deadline (if any) has come.
    fn deadline_passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Gives up after `attempts` with `exit`: reports why and runs `--on-give-up`.
    fn give_up(&self, attempts: u64, why: &str, exit: Exit) -> Exit {
        let why = &self.with_streak(why);
        self.fold_close();
        self.budget_gave_up();
        self.gave_up.replace(Some(why.to_string()));
        self.telemetry_gave_up(attempts, why);
        let closing = self.reporter.giving_up(attempts, why, exit.code());
        self.closing.replace(Some(closing));
        if let Some(script) = &self.config.hooks.on_give_up {
            let env = self.hook_env(attempts, exit, None);
            if let Err(signal) = self.run_hook("on_give_up", script, &env, None) {
                return self.interrupted_by(signal);
            }
        }
        exit
    }

    /// A write at the end of the run failed (`why`, reported already): returns how retry ends
    /// now: 125 instead of a success, which is remembered with `why` for what describes the
    /// end; any other ending keeps its status.
    fn failed_late(&self, exit: Exit, why: &str) -> Exit {
        if exit != Exit::Code(0) {
            return exit;
        }
        // As retry's lines say it: the system's words without Rust's " (os error N)".
        let why = crate::report::without_os_error(why).into_owned();
        self.late_failure.replace(Some(why));
        Exit::OwnFailure
    }

    /// Reports a stop signal that arrived between attempts (or during a hook): retry ends by
    /// it, through the one exit path (`main` raises it).
    fn interrupted_by(&self, signal: i32) -> Exit {
        self.fold_close();
        self.reporter.interrupted(signal);
        Exit::Signal(signal)
    }

    /// Runs attempt number `attempt` (from 1) to its end, enforcing the timeout and deadline
    /// and passing signals on. `Err` only when retry itself fails (its I/O threads cannot
    /// start); the attempt is then stopped and reaped first.
    fn run_attempt(&self, attempt: u64, last: bool) -> Result<AttemptEnd, Exit> {
        // Nothing of retry's is left drawn in place when the attempt may write; its CI fold
        // opens before anything is said of it.
        crate::report::settle();
        self.fold_open(attempt, last);
        // A stop signal that arrived before the attempt (during the splay, a wait on the
        // budget store, a slow write, the fold's own) ends the run here: no attempt starts
        // after it.
        if let Some(signal) = self.queued_stop_signal() {
            return Err(self.interrupted_by(signal));
        }
        self.reporter.attempt_start(attempt);
        let max = self
            .max_attempts()
            .map(|m| m.to_string())
            .unwrap_or_default();
        let mut env = vec![
            ("RETRY_ATTEMPT", attempt.to_string()),
            ("RETRY_MAX_ATTEMPTS", max),
        ];
        env.extend(self.run_env());
        let handed_on = self.env_file_env(attempt == 1);
        env.extend(handed_on.iter().map(|(k, v)| (k.as_str(), v.clone())));
        env.extend(self.telemetry_attempt_start(attempt));
        let started = Instant::now();
        let piped = self.io.as_ref().map(RunIo::piped).unwrap_or_default();
        // Decided for each attempt: `retry ... &` then `fg` puts retry in the foreground.
        let mode = GroupMode::detect();
        let spawned = match process::spawn(&self.config.command, &env, &[VARIABLE], mode, piped) {
            Ok(spawned) => spawned,
            Err(LaunchError::Own(e)) => {
                self.reporter
                    .error(&format!("cannot start attempt {attempt}: {e}"));
                return Err(Exit::OwnFailure);
            }
            Err(LaunchError::Command(e)) => {
                return Ok(AttemptEnd {
                    outcome: Outcome::launch_failed(&e),
                    ran: started.elapsed(),
                    interrupted: None,
                    io: AttemptReport::default(),
                    leftovers: None,
                });
            }
        };
        let child = spawned.attempt;
        self.events.watch_child(&child);
        self.telemetry_attempt_pid(child.pid());
        let attempt_io = match self
            .io
            .as_ref()
            .map(|io| io.start(spawned.stdin, spawned.stdout, spawned.stderr))
        {
            Some(Err(e)) => {
                // Without its I/O threads the attempt cannot run as asked: stop it, reap it.
                self.reporter
                    .error(&format!("cannot start pipeline I/O: {e}"));
                child.signal_tree(libc::SIGKILL);
                while child.try_reap().is_none() {
                    let _ = self.events.wait(None);
                }
                self.events.unwatch_child();
                self.stop_leftovers(&child, Stopping::killed());
                return Err(Exit::OwnFailure);
            }
            Some(Ok(io)) => Some(io),
            None => None,
        };
        let timeout_at = self.config.timeout.and_then(|t| started.checked_add(t));
        // The earlier of the timeout and the deadline stops the attempt.
        let (limit, reason) = match (timeout_at, self.deadline) {
            (Some(t), Some(d)) if d < t => (Some(d), StopReason::Deadline),
            (Some(t), _) => (Some(t), StopReason::Timeout),
            (None, Some(d)) => (Some(d), StopReason::Deadline),
            (None, None) => (None, StopReason::Timeout),
        };
        let mut stop = Stopping::new(limit, self.config.stop_signal.number());
        let mut stopped_by: Option<(StopReason, Duration)> = None;
        let mut interrupted = None;
        let ended = loop {
            let event = self.next_event(self.attempt_wake(&stop, attempt_io.as_ref()));
            match event {
                Some(Event::Child) => {
                    if let Some(ended) = child.try_reap() {
                        self.events.unwatch_child();
                        break ended;
                    }
                }
                Some(Event::Signal { signal, .. }) if passed_on(signal) => {
                    child.forward(signal);
                }
                // retry's timer, as `timeout`'s: the attempt is stopped as at its timeout (the
                // stop signal to its whole tree, KILL after the grace; 124 or 137), and not
                // retried. Once it is being stopped, the plan stands.
                Some(Event::Signal { signal, .. }) if signal == signals::ALARM => {
                    interrupted = Some(signal);
                    if stopped_by.is_none() {
                        stopped_by = Some((StopReason::Timeout, started.elapsed()));
                        if stop.term_sent {
                            child.stop_tree(self.config.stop_signal.number());
                        } else if let Some(step) = stop.escalate(self.config.kill_after) {
                            child.stop_tree(step.signal());
                        }
                    }
                }
                Some(Event::Signal {
                    signal,
                    from_kernel,
                }) => {
                    interrupted = Some(signal);
                    // A terminal's Ctrl-C or hangup already reached an attempt that shares
                    // retry's group: passing it on would deliver it twice.
                    if !(from_kernel && child.mode() == GroupMode::Shared) {
                        child.forward(signal);
                        child.forward(libc::SIGCONT);
                    }
                    if signal == libc::SIGTERM {
                        stop.term_sent(self.config.kill_after);
                    }
                }
                None => {
                    let Some(why) = self.due(&stop, attempt_io.as_ref(), reason) else {
                        continue; // Output arrived: not idle after all.
                    };
                    if let Some(step) = stop.escalate(self.config.kill_after) {
                        if let Step::Stop(_) = step {
                            stopped_by = Some((why, started.elapsed()));
                        }
                        child.stop_tree(step.signal());
                    }
                }
            }
        };
        let ran = started.elapsed();
        // What is left in the pipes; a stop signal meanwhile still counts. Only an attempt that
        // may have succeeded keeps its pipes open for what its leftovers still write (io.rs).
        let exited_0 = stopped_by.is_none() && ended == Ended::Exited(0);
        let io = self.finish_io(attempt_io, attempt, &mut interrupted, exited_0);
        let outcome = match (stopped_by, ended) {
            (Some((reason, after)), ended) => Outcome::Stopped {
                reason,
                killed: stop.killed,
                after,
                ended,
            },
            (None, Ended::Exited(c)) => Outcome::Exited(c),
            (None, Ended::Signaled(n)) => Outcome::Signaled(n),
        };
        Ok(AttemptEnd {
            outcome,
            ran,
            interrupted: interrupted.or_else(|| self.queued_stop_signal()),
            io,
            leftovers: Some((child, stop)),
        })
    }
}

/// How retry ends after this outcome: the same status, or the same signal; 1 for an exit
/// status 0 that failed by `--retry-if-output` (a script must see the failure). After KILL at
/// a timeout or the deadline retry dies of KILL, as coreutils `timeout` does (its parent sees
/// a death by signal 9; a shell's `$?` is 137 either way). With `preserve` (`--preserve-status`)
/// a stopped attempt's own end instead: its exit status, or death by its signal.
fn exit_for(outcome: &Outcome, output_failed: bool, preserve: bool) -> Exit {
    match outcome {
        _ if output_failed => Exit::Code(1),
        Outcome::Stopped { ended, .. } if preserve => match *ended {
            Ended::Exited(c) => Exit::Code(c),
            Ended::Signaled(n) => Exit::Signal(n),
        },
        Outcome::Signaled(n) => Exit::Signal(*n),
        Outcome::Stopped { killed: true, .. } => Exit::Signal(libc::SIGKILL),
        other => Exit::Code(other.status()),
    }
}
