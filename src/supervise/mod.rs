//! The supervisor: runs the attempts, decides after each one ([`decide`]), waits
//! (interruptibly), runs hooks, and ends with the right status. It knows the validated
//! [`Config`], never the command line, and names no observer: what happens in the run it
//! emits as events ([`crate::observe`]) to the observers it was given ([`crate::observers`]),
//! which finish the run in their order.

mod attempt;
mod attempts;
mod child;
mod decide;
mod env_file;
mod hints;
mod hooks;
mod idle;
mod io;
mod lock;
mod protect;
mod reset;
mod run_env;
mod stop;
mod wait;

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use retry_tool_backoff::GiveUpRule;

use crate::config::Config;
use crate::observe::problems::Problem;
use crate::observe::reasons::{Reason, StreakCut, Why};
use crate::observe::{Ended, Event, Observers, RunResult, Running};
use crate::pipeline::{RunIo, Tasks};
use crate::process::{self, Outcome};
use crate::signals::Events;
use crate::status::Exit;
use attempt::AttemptEnd;
use decide::Streak;
use protect::Protection;

/// What a run's observers are made from ([`crate::observers`]): its piped I/O (`None` when
/// attempts simply inherit retry's descriptors), its id, when it started and its deadline.
pub struct Listening<'a> {
    /// The run's pipeline I/O, if any.
    pub io: Option<&'a RunIo>,
    /// `RETRY_RUN_ID`.
    pub run_id: &'a str,
    /// When the run started (elapsed times count from here).
    pub start: Instant,
    /// `--deadline` as an instant; `None` when absent or beyond what the clock can hold.
    pub deadline: Option<Instant>,
}

/// Makes the observers of a run of `config` ([`crate::observers::of`]).
pub type Listen = for<'a> fn(&'a Config, &Listening<'a>) -> Observers<'a>;

/// Runs the command under `config` until it succeeds, the retries are used up, the deadline
/// passes, or a signal stops it, telling the observers `listen` makes; returns how retry must
/// end once they have all finished.
pub fn run(config: &Config, listen: Listen) -> Exit {
    let start = Instant::now();
    let run_id = run_env::new_run_id();
    // The signal handlers first: a stop signal from here on is heard.
    let events = Events::listen().map_err(|e| e.to_string());
    let io = match config.pipeline.is_plain() {
        true => Ok(None),
        false => RunIo::new(&config.pipeline).map(Some),
    };
    // The deadline is the give-up rule's to judge: every "is there time for this?" asks it.
    let rule = reset::give_up_rule(config);
    let deadline = rule
        .time_left(Duration::ZERO)
        .and_then(|d| start.checked_add(d));
    let listening = Listening {
        io: io.as_ref().ok().and_then(Option::as_ref),
        run_id: &run_id,
        start,
        deadline,
    };
    let mut observers = listen(config, &listening);
    let events = match events {
        Ok(events) => events,
        Err(e) => {
            observers.event(&Event::Problem(Problem::SignalHandlers(&e)));
            return Exit::OwnFailure;
        }
    };
    let io = match &io {
        Ok(io) => io.as_ref(),
        Err(e) => {
            let e = e.to_string();
            observers.event(&Event::Problem(Problem::PipelineSetup(&e)));
            return Exit::OwnFailure;
        }
    };
    process::become_subreaper();
    let env_file = env_file::open(&run_id, &mut observers);
    let seed = config.seed.unwrap_or_else(crate::entropy::seed);
    observers.event(&Event::RunStart { seed });
    let supervisor = Supervisor {
        config,
        events,
        rule: RefCell::new(rule),
        shape: decide::shapes::of(config.rules.shape),
        start,
        io,
        run_id: &run_id,
        last_attempt: Cell::new(config.max_attempts()),
        launched: Cell::new(0),
        gave_up: RefCell::default(),
        protect: Protection::open(config),
        streak: Cell::default(),
        env_file: RefCell::new(env_file),
        observers: RefCell::new(observers),
    };
    let exit = supervisor.run(seed);
    let ended = Ended {
        exit,
        result: supervisor.run_result(exit),
        gave_up: supervisor.gave_up.borrow().clone(),
        run: &supervisor,
    };
    // The end, in one order: the observers' own (crate::observers).
    supervisor.observers.borrow_mut().finish(ended)
}

struct Supervisor<'a> {
    config: &'a Config,
    events: Events,
    /// The give-up rule: the retries granted, and the one judge of the deadline.
    rule: RefCell<GiveUpRule>,
    /// The loop's shape, chosen once ([`decide::shapes`]).
    shape: Box<dyn decide::LoopShape>,
    /// When the run started (the deadline counts from here).
    start: Instant,
    /// Pipeline I/O; `None` when attempts simply inherit retry's descriptors.
    io: Option<&'a RunIo>,
    /// `RETRY_RUN_ID`: the same for every attempt and hook of this run.
    run_id: &'a str,
    /// The last attempt the run may make ([`Supervisor::max_attempts`]; `--reset-after`).
    last_attempt: Cell<Option<u64>>,
    /// How many attempts were launched.
    launched: Cell<u64>,
    /// Why retry gave up (or refused the run), once it has.
    gave_up: RefCell<Option<Why>>,
    /// `--splay` and `--budget` (protect.rs).
    protect: RefCell<Protection>,
    /// `--successes`: the successes in a row ([`decide`]).
    streak: Cell<Streak>,
    /// `RETRY_ENV_FILE`; `None` when it cannot be offered (env_file.rs).
    env_file: RefCell<Option<crate::env_file::EnvFile>>,
    /// Who hears the run's events.
    observers: RefCell<Observers<'a>>,
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

    /// Tells the observers of `event`.
    fn emit(&self, event: &Event<'_>) {
        self.observers.borrow_mut().event(event);
    }

    /// Whether attempt `attempt`, about to start, is known to be the run's last whatever it
    /// does: it is attempt N of N, or (at the first success ending the run) `rule` can grant
    /// no retry before the deadline however the attempt ends. Never with a `--reset-after`
    /// that a long attempt could reach, which would grant retries afresh.
    fn known_last(&self, attempt: u64) -> bool {
        let may_reset = self
            .config
            .rules
            .reset_after
            .is_some_and(|r| self.config.timeout.is_none_or(|t| t > r));
        if may_reset {
            return false;
        }
        self.max_attempts() == Some(attempt)
            || (self.shape.last_by_rule()
                && self.rule.borrow().surely_gives_up(self.start.elapsed()))
    }

    /// Whether the deadline (if any) has come, as the give-up rule judges it.
    fn deadline_passed(&self) -> bool {
        self.rule.borrow().deadline_passed(self.start.elapsed())
    }

    /// The time left until the deadline, as the give-up rule judges it: `None` without one,
    /// zero once it has passed.
    fn time_left(&self) -> Option<Duration> {
        self.rule.borrow().time_left(self.start.elapsed())
    }

    /// The deadline as an instant, for a wait bounded by it (an attempt's limit, a hook's, the
    /// lock's): the give-up rule's time left from now; `None` without one, or beyond what the
    /// clock holds.
    fn deadline_at(&self) -> Option<Instant> {
        let now = Instant::now();
        let left = self
            .rule
            .borrow()
            .time_left(now.saturating_duration_since(self.start))?;
        now.checked_add(left)
    }

    /// Gives up after `attempts` with `exit` for `reason` (a `--successes` streak cut short at
    /// `cut`): says why and runs `--on-give-up`.
    fn give_up(&self, attempts: u64, reason: &Reason, cut: Option<StreakCut>, exit: Exit) -> Exit {
        let why = Why::GaveUp {
            reason: reason.clone(),
            cut,
            shape: self.config.rules.shape,
            longest: self.streak.get().longest,
        };
        self.budget_gave_up();
        self.emit(&Event::GaveUp {
            attempts,
            why: &why,
            status: exit.code(),
            elapsed: self.start.elapsed(),
        });
        self.gave_up.replace(Some(why));
        if let Some(script) = &self.config.hooks.on_give_up {
            let env = self.hook_env(attempts, exit, None);
            if let Err(signal) = self.run_hook("on_give_up", script, &env, None) {
                return self.interrupted_by(signal);
            }
        }
        exit
    }

    /// Reports a stop signal that arrived between attempts (or during a hook): retry ends by
    /// it, through the one exit path (`main` raises it).
    fn interrupted_by(&self, signal: i32) -> Exit {
        self.emit(&Event::Stopped(signal));
        Exit::Signal(signal)
    }

    /// How the run ended, from `exit` as the attempts left it (before the end's own writes):
    /// stopped by a signal, success, refused before any attempt (75, by the breaker or the
    /// budget), or given up.
    fn run_result(&self, exit: Exit) -> RunResult {
        if crate::signals::stop_arrived() {
            RunResult::Stopped
        } else if exit == Exit::Code(0) && self.gave_up.borrow().is_none() {
            RunResult::Success
        } else if exit == Exit::TempFail && self.launched.get() == 0 {
            RunResult::Refused
        } else {
            RunResult::GaveUp
        }
    }
}

impl Running for Supervisor<'_> {
    fn wait_tasks(&self, tasks: &Tasks, interrupted: &mut Option<i32>) -> bool {
        Supervisor::wait_tasks(self, tasks, interrupted)
    }

    fn queued_stop_signal(&self) -> Option<i32> {
        Supervisor::queued_stop_signal(self)
    }

    fn stop_arrived(&self) -> bool {
        crate::signals::stop_arrived()
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
            process::Ended::Exited(c) => Exit::Code(c),
            process::Ended::Signaled(n) => Exit::Signal(n),
        },
        Outcome::Signaled(n) => Exit::Signal(*n),
        Outcome::Stopped { killed: true, .. } => Exit::Signal(crate::signal_names::KILL),
        other => Exit::Code(other.code()),
    }
}
