//! `--successes` and `--until-fail` in the decision after an attempt ([`super::super::decide`]):
//! a success of a streak waits the first delay, the deadline cuts a streak with 124; a success
//! of `--until-fail` runs again, its first failure ends the run.

use super::*;

#[test]
fn successes_in_a_row_wait_the_first_delay_then_end_the_run() {
    let mut r = rule(Some(2));
    let mut streak = Streak::default();
    let mut f = facts(&OK);
    set(&mut f, |r| r.shape = Shape::Streak(2));
    set(&mut f, |r| r.base = SECS(3));
    let first = run(&f, &mut r, &mut streak);
    assert_eq!(
        first,
        again(
            Next::Streak {
                current: 1,
                needed: 2
            },
            SECS(3),
            None
        )
    );
    // A failure ends the streak and is retried the usual way.
    let mut failed = facts(&FAILED);
    set(&mut failed, |r| r.shape = Shape::Streak(2));
    set(&mut failed, |r| r.base = SECS(3));
    assert_eq!(
        run(&failed, &mut r, &mut streak),
        again(Next::Retry, SECS(1), None)
    );
    assert_eq!(
        streak,
        Streak {
            current: 0,
            longest: 1
        }
    );
    run(&f, &mut r, &mut streak);
    assert_eq!(
        run(&f, &mut r, &mut streak),
        Decision::End(Ending::StreakDone { needed: 2 })
    );
}

#[test]
fn a_streak_the_deadline_cuts_ends_with_124() {
    let mut f = facts(&OK);
    set(&mut f, |r| r.shape = Shape::Streak(3));
    set(&mut f, |r| r.base = SECS(3));
    // The give-up rule judges the deadline: 10s from the start.
    let ten = || {
        let policy = Policy::new(SECS(1), 2.0, SECS(60), Jitter::None).unwrap();
        let limits = Limits {
            max_retries: Some(2),
            deadline: Some(SECS(10)),
        };
        GiveUpRule::new(policy.schedule(), limits)
    };
    f.elapsed = SECS(10);
    assert_eq!(
        run(&f, &mut ten(), &mut Streak::default()),
        gives_up(Reason::DeadlinePassed, Exit::Code(TIMED_OUT.into()), false)
    );
    f.elapsed = SECS(8);
    assert_eq!(
        run(&f, &mut ten(), &mut Streak::default()),
        gives_up(
            Reason::WaitPastDeadline(SECS(3)),
            Exit::Code(TIMED_OUT.into()),
            false
        )
    );
    // After a longer streak, the current one is named.
    let mut streak = Streak {
        current: 0,
        longest: 2,
    };
    assert_eq!(
        run(&f, &mut ten(), &mut streak),
        Decision::End(Ending::GiveUp {
            reason: Reason::WaitPastDeadline(SECS(3)),
            exit: Exit::Code(TIMED_OUT.into()),
            failed_first: false,
            streak: Some(StreakCut {
                current: 1,
                needed: 3
            }),
            lost: None,
        })
    );
}

#[test]
fn until_fail_reruns_a_success_and_ends_at_the_first_failure() {
    let mut f = facts(&OK);
    set(&mut f, |r| r.shape = Shape::UntilFail);
    let mut r = rule(Some(1));
    let mut streak = Streak::default();
    assert_eq!(
        run(&f, &mut r, &mut streak),
        again(Next::Rerun, SECS(1), None)
    );
    // Out of retries without a failure: status 0.
    assert_eq!(
        run(&f, &mut r, &mut streak),
        Decision::End(Ending::NoFailure {
            runs: 1,
            reason: Reason::Rule(GiveUp::RetriesUsedUp)
        })
    );
    let mut f = facts(&FAILED);
    set(&mut f, |r| r.shape = Shape::UntilFail);
    assert_eq!(
        once(&f),
        Decision::End(Ending::UntilFailFailed {
            exit: Exit::Code(1)
        })
    );
    // A run the deadline stopped did not fail: it ran out of time.
    let deadline = Outcome::Stopped {
        reason: StopReason::Deadline,
        killed: false,
        after: SECS(1),
        ended: Ended::Signaled(15),
    };
    let mut f = facts(&deadline);
    set(&mut f, |r| r.shape = Shape::UntilFail);
    f.attempt = 4;
    assert_eq!(
        once(&f),
        Decision::End(Ending::NoFailure {
            runs: 3,
            reason: Reason::DeadlineStoppedRun(4)
        })
    );
}
