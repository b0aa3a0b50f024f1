//! `--forever` in the decision after an attempt ([`super::super::decide`]): a success runs
//! again as a failure is retried, through the same checks; the retries are a crash loop's.

use super::*;

/// The facts of a `--forever` run's attempt ending with `outcome`, `-n 2`, `--reset-after 1m`.
fn forever(outcome: &Outcome) -> Facts<'_> {
    let mut f = facts(outcome);
    set(&mut f, |r| r.shape = Shape::Forever);
    set(&mut f, |r| r.reset_after = Some(SECS(60)));
    f
}

#[test]
fn a_success_runs_again_after_the_schedule_s_delays_which_grow() {
    let mut r = rule(None);
    let mut streak = Streak::default();
    let mut f = forever(&OK);
    set(&mut f, |r| r.max_retries = None);
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
fn n_plus_one_short_runs_in_a_row_are_a_crash_loop_that_ends_with_the_last_status_or_1() {
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
            Reason::CrashLoop {
                runs: 3,
                reset_after: Some(SECS(60)),
            },
            Exit::Code(1),
            true
        )
    );
    let mut f = forever(&Outcome::Exited(3));
    set(&mut f, |r| r.reset_after = None);
    set(&mut f, |r| r.max_retries = Some(0));
    assert_eq!(
        run(&f, &mut rule(Some(0)), &mut streak),
        gives_up(
            Reason::CrashLoop {
                runs: 1,
                reset_after: None,
            },
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
        gives_up(Reason::StatusNotRetried(3), Exit::Code(3), true)
    );
}

#[test]
fn stop_if_output_ends_it_even_after_a_success() {
    let mut f = forever(&OK);
    f.stop_match = true;
    assert_eq!(
        once(&f),
        gives_up(Reason::OutputMatched, Exit::Code(0), true)
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
        gives_up(Reason::Rule(GiveUp::DeadlinePassed), Exit::Code(1), true)
    );
}

#[test]
fn a_success_whose_reader_is_gone_is_not_run_again() {
    let mut f = forever(&OK);
    f.reader_gone = Some(crate::held::Stream::Stdout);
    assert_eq!(
        once(&f),
        gives_up(
            Reason::ReaderGone(crate::held::Stream::Stdout),
            Exit::Code(1),
            true
        )
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
        gives_up(Reason::CannotRun, Exit::Code(127), false)
    );
}

#[test]
fn stop_on_0_ends_it_after_a_run_that_exits_0_with_0() {
    let mut f = forever(&OK);
    set(&mut f, |r| r.success_stops = true);
    assert_eq!(once(&f), Decision::End(Ending::Succeed));
    let mut f = forever(&FAILED);
    set(&mut f, |r| r.success_stops = true);
    assert_eq!(
        once(&f),
        again(Next::Retry, SECS(1), None),
        "a failure restarts"
    );
}

#[test]
fn alrm_that_stopped_a_run_ends_it_with_the_timed_out_status_not_the_signal() {
    let stopped = Outcome::Stopped {
        reason: StopReason::Timeout,
        killed: false,
        after: SECS(1),
        ended: Ended::Signaled(15),
    };
    let mut f = forever(&stopped);
    f.interrupted = Some(crate::signals::ALARM);
    assert_eq!(
        once(&f),
        Decision::End(Ending::Stopped {
            signal: crate::signals::ALARM,
            exit: Exit::Code(124)
        })
    );
    let mut f = forever(&OK);
    f.interrupted = Some(crate::signals::ALARM);
    assert_eq!(
        once(&f),
        Decision::End(Ending::Stopped {
            signal: crate::signals::ALARM,
            exit: Exit::Signal(crate::signals::ALARM)
        }),
        "ALRM after a run that ended by itself: retry dies of it"
    );
}

#[test]
fn giving_up_after_a_wait_is_never_0() {
    let (forever, plain) = (shapes::of(Shape::Forever), shapes::of(Shape::Plain));
    let why = Reason::DeadlinePassed;
    assert_eq!(forever.give_up_exit(Exit::Code(0), &why), Exit::Code(1));
    assert_eq!(forever.give_up_exit(Exit::Code(3), &why), Exit::Code(3));
    assert_eq!(plain.give_up_exit(Exit::Code(0), &why), Exit::Code(0));
}

#[test]
fn a_lost_recording_of_stdin_after_a_run_that_exited_0_is_retry_s_own_failure() {
    let mut f = forever(&OK);
    f.replay_lost = true;
    match once(&f) {
        Decision::End(Ending::GiveUp { reason, exit, .. }) => {
            assert_eq!((reason, exit), (Reason::StdinLost, Exit::OwnFailure));
        }
        other => panic!("{other:?}"),
    }
    // After the wait: the same, through the status settled for the loop.
    let ended = after_pause(
        Next::Retry,
        Pause::Wait,
        1,
        Exit::Code(0),
        false,
        true,
        &Streak::default(),
    )
    .map(|e| super::super::settled(&*shapes::of(Shape::Forever), e));
    assert!(
        matches!(
            ended,
            Some(Ending::GiveUp {
                exit: Exit::OwnFailure,
                ..
            })
        ),
        "{ended:?}"
    );
    let ended = after_pause(
        Next::Retry,
        Pause::Wait,
        1,
        Exit::Code(0),
        true,
        false,
        &Streak::default(),
    )
    .map(|e| super::super::settled(&*shapes::of(Shape::Forever), e));
    assert!(
        matches!(
            ended,
            Some(Ending::GiveUp {
                exit: Exit::Code(1),
                ..
            })
        ),
        "the deadline after a run that exited 0: {ended:?}"
    );
}
