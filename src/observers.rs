//! Which observers listen to a run, chosen from its validated config: the one place that names
//! them all, so that the supervisor names none ([`crate::observe`]). Their order is the order
//! in which they hear each event and finish: the metrics file and the trace first (they write
//! nothing as the run goes, and the metrics file is the end's first write), then the CI system
//! (a fold opens before retry says anything of an attempt), then the reporter, then
//! `--chronic` (whose end drops or writes out what was held, after the CI files and the
//! annotation). The reporter, made here, is retry's voice for them all.
//!
//! A new observer: a type implementing [`crate::observe::Observer`] in the module of what it
//! writes, pushed here where its place in the order says when it hears the run.

use std::rc::Rc;

use crate::chronic::Chronic;
use crate::ci::observer::CiObserver;
use crate::config::Config;
use crate::observe::Observers;
use crate::report::{ReportObserver, Reporter, Shown, StopPlan, Writer};
use crate::supervise::Listening;
use crate::telemetry::Telemetry;
use crate::telemetry::observer::TelemetryObserver;

/// The observers of the run `run` of `config`, in order. Says the warnings reading the
/// telemetry settings left.
pub fn of<'a>(config: &'a Config, run: &Listening<'a>) -> Observers<'a> {
    let reporter = Rc::new(
        Reporter::new(
            Writer::new(config.color, config.verbosity, config.log_format),
            &config.command,
            config.max_attempts(),
            run.start,
        )
        .with_run_id(run.run_id)
        .with_loop(
            config.rules.shape,
            config.lock.as_ref().map(|l| l.path.as_path()),
        ),
    );
    for warning in &config.telemetry.warnings {
        reporter.warning(warning);
    }
    // --chronic: retry's own lines are held with the attempts' output from here on.
    if let Some(held) = run.io.and_then(|io| io.held()) {
        reporter.writer().hold_from_now(held.clone());
    }
    // retry's own lines and files wait for a reader at most until the deadline (and never
    // past a stop signal).
    reporter.writer().set_patience(run.deadline);
    let mut observers = Observers::new(Rc::clone(&reporter));
    let telemetry = Telemetry::start(&config.telemetry, run.run_id, &config.command);
    observers.push(TelemetryObserver::new(telemetry));
    let program = config
        .command
        .first()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    observers.push(CiObserver::new(
        config.ci.clone(),
        Rc::clone(&reporter),
        run.run_id,
        &program,
    ));
    let shown = Shown {
        policy: config.policy.clone(),
        deadline: config.deadline,
        timeout: config.timeout,
        stop: StopPlan::of(config),
        budget: (config.protect.budget.as_ref()).map(|b| (b.store.clone(), b.policy)),
        lock_wait: config.lock.as_ref().map(|l| l.wait).unwrap_or_default(),
    };
    observers.push(ReportObserver::new(Rc::clone(&reporter), shown));
    if let Some(chronic) = run
        .io
        .and_then(|io| Chronic::new(io, Rc::clone(&reporter), config.pipeline.max_output))
    {
        observers.push(chronic);
    }
    observers
}
