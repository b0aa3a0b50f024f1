//! `--forever` in the decision after an attempt ([`super::super::decide`]): a success runs
//! again as a failure is retried, through the same checks; the retries are a crash loop's.

use super::*;

/// The facts of a `--forever` run's attempt ending with `outcome`, `-n 2`, `--reset-after 1m`.
fn forever(outcome: &Outcome) -> Facts<'_> {
    let mut f = facts(outcome);
    f.shape = Shape::Forever;
    f.reset_after = Some(SECS(60));
    f
}

#[test]
fn a_success_runs_again_after_the_schedule_s_delays_which_grow() {
    let mut r = rule(None);
    let mut streak = Streak::default();
    let mut f = forever(&OK);
    f.max_retries = None;
    let delays: Vec<_> = (0..8)
        .map(|_| match run(&f, &mut r, &mut streak) {
            Decision::Again {
                next: Next::Retry,
                delay,
                hint: None,
            } => delay,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        delays,
        [1, 2, 4, 8, 16, 32, 60, 60].map(SECS),
        "to the cap and no further"
    );
}

#[test]
fn a_failure_runs_again_as_a_success_does() {
    assert_eq!(once(&forever(&FAILED)), again(Next::Retry, SECS(1), None));
}

#[test]
fn n_plus_one_short_runs_in_a_row_are_a_crash_loop_that_ends_with_the_last_status() {
    let mut r = rule(Some(2));
    let mut streak = Streak::default();
    let f = forever(&OK);
    assert!(matches!(
        run(&f, &mut r, &mut streak),
        Decision::Again { .. }
    ));
    assert!(matches!(
        run(&f, &mut r, &mut streak),
        Decision::Again { .. }
    ));
    assert_eq!(
        run(&f, &mut r, &mut streak),
        gives_up(
            "3 runs in a row ended within --reset-after (1m): a crash loop",
            Exit::Code(0),
            true
        )
    );
    let mut f = forever(&Outcome::Exited(3));
    f.reset_after = None;
    f.max_retries = Some(0);
    assert_eq!(
        run(&f, &mut rule(Some(0)), &mut streak),
        gives_up(
            "no restarts left: 1 run (--reset-after 0 or inf: every run counts, none starts \
             the count afresh)",
            Exit::Code(3),
            true
        )
    );
}

#[test]
fn a_status_in_stop_on_ends_it_with_that_status() {
    let mut f = forever(&Outcome::Exited(3));
    f.verdict = Verdict::Stop;
    assert_eq!(
        once(&f),
        gives_up("status 3 is not retried", Exit::Code(3), true)
    );
}

#[test]
fn stop_if_output_ends_it_even_after_a_success() {
    let mut f = forever(&OK);
    f.stop_match = true;
    assert_eq!(
        once(&f),
        gives_up("its output matched --stop-if-output", Exit::Code(0), true)
    );
}

#[test]
fn a_stop_signal_ends_it_and_retry_dies_of_it_whatever_the_run_did() {
    for outcome in [OK, FAILED, Outcome::Signaled(9)] {
        let mut f = forever(&outcome);
        f.interrupted = Some(15);
        assert_eq!(
            once(&f),
            Decision::End(Ending::Stopped {
                signal: 15,
                exit: Exit::Signal(15)
            }),
            "{outcome:?}"
        );
    }
}

#[test]
fn the_deadline_ends_it() {
    let mut r = GiveUpRule::new(
        Policy::new(SECS(1), 2.0, SECS(60), Jitter::None)
            .unwrap()
            .schedule(),
        Limits {
            max_retries: None,
            deadline: Some(SECS(10)),
        },
    );
    let mut f = forever(&OK);
    f.elapsed = SECS(10);
    assert_eq!(
        run(&f, &mut r, &mut Streak::default()),
        gives_up("the deadline has passed", Exit::Code(0), true)
    );
}

#[test]
fn a_success_whose_reader_is_gone_is_not_run_again() {
    let mut f = forever(&OK);
    f.reader_gone = true;
    assert_eq!(
        once(&f),
        gives_up("the reader of stdout is gone", Exit::Code(0), true)
    );
}

#[test]
fn a_command_that_cannot_be_run_is_not_run_again() {
    let outcome = Outcome::LaunchFailed {
        message: "not found".into(),
        status: 127,
    };
    assert_eq!(
        once(&forever(&outcome)),
        gives_up("the command could not be run", Exit::Code(127), false)
    );
}
