//! `--transient` in the decision after an attempt ([`super::super::decide`]): a failure of a
//! class given is retried; any other, or one of no known class, ends the run at once with its
//! status; a success is never examined; `--stop-if-output` and `--stop-on` still stop first.

use super::*;
use crate::transient::{Class, Classes};

fn transient(outcome: &Outcome, wanted: &str, found: &[Class]) -> Decision {
    let mut f = facts(outcome);
    let wanted = Classes::parse_list(wanted).unwrap();
    set(&mut f, |r| r.transient = Some(wanted));
    f.transient = found.iter().fold(Classes::default(), |s, c| s.with(*c));
    once(&f)
}

#[test]
fn a_failure_of_a_class_given_is_retried() {
    assert_eq!(
        transient(&FAILED, "dns,connect", &[Class::Reset, Class::Connect]),
        again(Next::Retry, SECS(1), None)
    );
}

#[test]
fn a_failure_of_another_class_or_of_none_ends_the_run_with_its_status() {
    let wanted = Classes::parse_list("dns").unwrap();
    assert_eq!(
        transient(&Outcome::Exited(7), "dns", &[Class::Connect]),
        gives_up(
            Reason::NotTransient {
                wanted,
                found: Classes::default().with(Class::Connect)
            },
            Exit::Code(7),
            true
        )
    );
    assert_eq!(
        transient(&Outcome::Exited(128), "dns", &[]),
        gives_up(
            Reason::NotTransient {
                wanted,
                found: Classes::default()
            },
            Exit::Code(128),
            true
        )
    );
}

#[test]
fn a_success_is_never_examined_and_the_stops_come_first() {
    assert_eq!(transient(&OK, "dns", &[]), Decision::End(Ending::Succeed));
    // --forever runs a success again, transient or not.
    let mut f = facts(&OK);
    set(&mut f, |r| r.shape = Shape::Forever);
    set(&mut f, |r| r.transient = Some(Classes::all()));
    assert_eq!(once(&f), again(Next::Retry, SECS(1), None));
    // --stop-if-output stops first.
    let mut f = facts(&FAILED);
    set(&mut f, |r| r.transient = Some(Classes::all()));
    f.stop_match = true;
    assert_eq!(
        once(&f),
        gives_up(Reason::OutputMatched, Exit::Code(1), true)
    );
    // And without --transient any failure is retried, whatever it is known by.
    let f = facts(&FAILED);
    assert_eq!(once(&f), again(Next::Retry, SECS(1), None));
}
