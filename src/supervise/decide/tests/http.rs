//! `--http-retry-on` in the decision after an attempt ([`super::super::decide`]): a failed
//! attempt whose last HTTP response has a status outside the set is not retried.

use super::*;

/// The facts of attempt 1 exiting 22 (curl -f's status for an HTTP error) after a response
/// with `code`.
fn curl_failed(code: Option<u16>) -> Facts<'static> {
    const CURL_22: Outcome = Outcome::Exited(22);
    let mut f = facts(&CURL_22);
    f.http_status = code;
    f
}

#[test]
fn a_status_outside_the_set_is_not_retried_and_ends_with_the_attempt_s_status() {
    for code in [404, 400, 401, 403, 410, 422, 451, 499] {
        assert_eq!(
            once(&curl_failed(Some(code))),
            gives_up(Reason::HttpNotRetried(code), Exit::Code(22), true),
            "{code}"
        );
    }
}

#[test]
fn the_default_set_retries_408_425_429_and_5xx() {
    for code in [408, 425, 429, 500, 502, 503, 504, 599] {
        assert_eq!(
            once(&curl_failed(Some(code))),
            again(Next::Retry, SECS(1), None),
            "{code}"
        );
    }
}

#[test]
fn a_failure_after_a_status_that_is_no_error_is_retried() {
    // A body cut short after a 200 (curl 18), curl's --max-time after a 206 (28), a redirect's
    // target refusing the connection (7): the answer said nothing against the request.
    for code in [100, 200, 204, 206, 301, 302, 304, 399] {
        let mut f = curl_failed(Some(code));
        assert_eq!(once(&f), again(Next::Retry, SECS(1), None), "{code}");
        set(&mut f, |r| r.http_retry_on = Some("404".parse().unwrap()));
        assert_eq!(
            once(&f),
            again(Next::Retry, SECS(1), None),
            "{code}, 404 only"
        );
    }
}

#[test]
fn with_the_default_set_a_status_whose_server_said_when_is_retried_then() {
    // A spent rate limit sent as a 403, with X-RateLimit-Remaining: 0 and the time it resets.
    let mut f = curl_failed(Some(403));
    f.hint = Some((SECS(30), HintSource::XRateLimitReset));
    assert_eq!(
        once(&f),
        again(Next::Retry, SECS(30), Some(HintSource::XRateLimitReset))
    );
    // A set given is kept to: the user left 403 out.
    set(&mut f, |r| r.http_retry_on = Some("403".parse().unwrap()));
    assert_eq!(
        once(&f),
        again(Next::Retry, SECS(30), Some(HintSource::XRateLimitReset))
    );
    set(&mut f, |r| r.http_retry_on = Some("5xx".parse().unwrap()));
    assert_eq!(
        once(&f),
        gives_up(Reason::HttpNotRetried(403), Exit::Code(22), true)
    );
    set(&mut f, |r| r.http_retry_on = None);
    // A hint past --max-hint still makes retry give up, saying so.
    f.hint = Some((SECS(7200), HintSource::RetryAfter));
    assert_eq!(
        once(&f),
        gives_up(
            Reason::HintTooLong {
                source: HintSource::RetryAfter,
                asked: SECS(7200),
                max_hint: SECS(3600),
            },
            Exit::Code(22),
            true
        )
    );
}

#[test]
fn a_failure_without_a_status_line_is_retried() {
    assert_eq!(once(&curl_failed(None)), again(Next::Retry, SECS(1), None));
}

#[test]
fn any_retries_every_status() {
    let mut f = curl_failed(Some(404));
    set(&mut f, |r| r.http_retry_on = Some("any".parse().unwrap()));
    assert_eq!(once(&f), again(Next::Retry, SECS(1), None));
}

#[test]
fn a_success_is_one_whatever_status_it_printed() {
    let mut f = facts(&OK);
    f.http_status = Some(404);
    assert_eq!(once(&f), Decision::End(Ending::Succeed));
}

#[test]
fn stop_on_and_stop_if_output_come_first() {
    let mut f = curl_failed(Some(404));
    f.verdict = Verdict::Stop;
    assert_eq!(
        once(&f),
        gives_up(Reason::StatusNotRetried(22), Exit::Code(22), true)
    );
    let mut f = curl_failed(Some(404));
    f.stop_match = true;
    assert_eq!(
        once(&f),
        gives_up(Reason::OutputMatched, Exit::Code(22), true)
    );
}

#[test]
fn a_stop_signal_comes_before_the_status() {
    let mut f = curl_failed(Some(404));
    f.interrupted = Some(2);
    assert_eq!(
        once(&f),
        Decision::End(Ending::Stopped {
            signal: 2,
            exit: Exit::Code(22)
        })
    );
}

#[test]
fn with_forever_a_status_outside_the_set_ends_the_run_too() {
    let mut f = curl_failed(Some(404));
    set(&mut f, |r| r.shape = Shape::Forever);
    assert_eq!(
        once(&f),
        gives_up(Reason::HttpNotRetried(404), Exit::Code(22), true)
    );
}
