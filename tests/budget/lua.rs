//! The Redis store's script (`src/budget/redis_state.lua`) against the Rust state code, the
//! reference, on a real `redis-server`: random sequences of operations with random policies,
//! times and ids from random starting states, through `Store::perform`, must leave the very
//! bytes `codec::encode` writes for the state the Rust code computes in memory (and nothing
//! written when nothing changed), with the expiry the Rust rule gives. Corrupt values are
//! refused without a write, and a value a file store accepts (spaces, counts out of range)
//! reads the same in the script.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use retry::budget::redis_store::expiry_ms;
use retry::budget::throttle::MAX_REFILL;
use retry::budget::{
    AttemptOutcome, BreakerPolicy, BudgetKey, CircuitBreaker, MAX_TIME_MS, Operation, Policy,
    ProbeLease, RunEnd, SharedState, Store, StoreError, Throttle, TokenBucket, codec,
    parse_store_location,
};

use crate::support::RedisServer;
use crate::tools::{self, require};

fn time() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 1_767_225_600_000u64..1_767_225_900_000,
        1 => 0..=MAX_TIME_MS,
        1 => prop::sample::select(vec![0, 1, MAX_TIME_MS - 1, MAX_TIME_MS]),
    ]
}

fn id() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 1u64..4,
        1 => any::<u64>(),
        1 => Just(u64::MAX),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    let throttle = (
        prop::sample::select(vec![0.001f64, 1.0, 2.5, 10.0, 1000.0, 1_000_000.0]),
        prop::sample::select(vec![0.001f64, 0.1, 1.0, 7.0]),
        prop::option::of(prop::sample::select(vec![
            1u64,
            7,
            60_000,
            u64::try_from(MAX_REFILL.as_millis()).unwrap(),
        ])),
    )
        .prop_map(|(max, ratio, refill)| {
            let t = Throttle::new(max, ratio.min(max)).unwrap();
            match refill {
                Some(ms) => t.with_refill(Duration::from_millis(ms)).unwrap(),
                None => t,
            }
        });
    let breaker = prop::option::of((
        prop::sample::select(vec![1u32, 2, 3, u32::MAX]),
        prop::sample::select(vec![0u64, 1, 1000, 60_000, MAX_TIME_MS]),
        prop::sample::select(vec![1u64, 300_000, MAX_TIME_MS]),
    ))
    .prop_map(|b| {
        b.map(|(threshold, cooldown, lease)| {
            BreakerPolicy::new(threshold, Duration::from_millis(cooldown))
                .unwrap()
                .with_probe_lease(Duration::from_millis(lease))
                .unwrap()
        })
    });
    (throttle, breaker).prop_map(|(throttle, breaker)| Policy { throttle, breaker })
}

/// Any state a store may hold (times up to year 9999, counts and ids of their full width).
fn state() -> impl Strategy<Value = SharedState> {
    let bucket = prop::option::of((any::<u32>(), any::<u32>(), time()));
    let probe = prop::option::of((id(), time()));
    (
        bucket,
        any::<u32>(),
        prop::option::of(time()),
        probe,
        prop::option::of((time(), 1..=MAX_TIME_MS)),
        time(),
    )
        .prop_map(|(bucket, consecutive, open, probe, cooldown, updated_ms)| {
            let (not_before_ms, hint_len_ms) = match cooldown {
                Some((t, len)) => (Some(t), Some(len)),
                None => (None, None),
            };
            SharedState {
                bucket: bucket.map(|(m, max, at)| TokenBucket::from_parts(m, max, at)),
                breaker: CircuitBreaker {
                    consecutive,
                    open_until_ms: open,
                    probe: probe.map(|(id, expires_ms)| ProbeLease { id, expires_ms }),
                },
                not_before_ms,
                hint_len_ms,
                updated_ms,
            }
        })
}

fn operation() -> impl Strategy<Value = Operation> {
    let outcome = prop::sample::select(vec![
        AttemptOutcome::Success,
        AttemptOutcome::Failure,
        AttemptOutcome::Neutral,
    ]);
    let end = prop::sample::select(vec![RunEnd::Succeeded, RunEnd::GaveUp, RunEnd::Abandoned]);
    let hint = prop::option::of(prop_oneof![time(), Just(u64::MAX)]);
    prop_oneof![
        id().prop_map(|id| Operation::Begin { id }),
        prop::option::of(id()).prop_map(|probe| Operation::Cooldown { probe }),
        (outcome, hint, prop::option::of(id())).prop_map(|(outcome, hint_ms, probe)| {
            Operation::AttemptEnd {
                outcome,
                hint_ms,
                probe,
            }
        }),
        (end, prop::option::of(id())).prop_map(|(end, probe)| Operation::Finish { end, probe }),
    ]
}

/// A step: an operation at a time; the time mostly moves on a little, sometimes anywhere.
fn steps() -> impl Strategy<Value = Vec<(Operation, u64, u64)>> {
    prop::collection::vec(
        (
            operation(),
            prop_oneof![4 => 0u64..120_000, 1 => Just(0)],
            prop::option::of(time()),
        ),
        1..40,
    )
    .prop_map(|steps| {
        let mut now = 1_767_225_600_000u64;
        steps
            .into_iter()
            .map(|(op, dt, jump)| {
                now = jump.unwrap_or(now.saturating_add(dt).min(MAX_TIME_MS));
                (op, now, dt)
            })
            .collect()
    })
}

fn raw(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

#[test]
fn the_script_and_the_rust_code_agree_on_every_operation() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let location = parse_store_location("--budget-store", server.url().as_ref()).unwrap();
    // The runner takes a `Fn`: the connections are borrowed in each case.
    let store = std::cell::RefCell::new(Store::open(&location).unwrap());
    let con = std::cell::RefCell::new(raw(&server));
    let key = BudgetKey::new(b"prop".to_vec()).unwrap();
    let rkey = key.redis_key();
    let mut runner = TestRunner::new(Config {
        cases: 300,
        ..Config::default()
    });
    let strategy = (prop::option::of(state()), policy(), steps());
    runner
        .run(&strategy, |(start, policy, steps)| {
            let (mut store, mut con) = (store.borrow_mut(), con.borrow_mut());
            let con = &mut *con;
            let _: () = redis::cmd("DEL").arg(&rkey).query(con).unwrap();
            let mut model = start.unwrap_or_default();
            if let Some(s) = start {
                let _: () = redis::cmd("SET")
                    .arg(&rkey)
                    .arg(codec::encode(&s))
                    .query(con)
                    .unwrap();
            }
            for (op, now, _) in steps {
                let before = model;
                let expected = op.apply(&mut model, &policy, now);
                let (answer, state) = store.perform(&key, &policy, now, &op).unwrap();
                prop_assert_eq!(answer, expected, "{:?} at {} on {:?}", op, now, before);
                prop_assert_eq!(state, model);
                let stored: Option<Vec<u8>> = redis::cmd("GET").arg(&rkey).query(con).unwrap();
                match stored {
                    Some(bytes) => prop_assert_eq!(
                        String::from_utf8(bytes).unwrap(),
                        String::from_utf8(codec::encode(&model)).unwrap(),
                        "{:?} at {} on {:?}",
                        op,
                        now,
                        before
                    ),
                    None => prop_assert_eq!(model, SharedState::default()),
                }
                if model != before {
                    let ttl: i64 = redis::cmd("PTTL").arg(&rkey).query(con).unwrap();
                    let want = expiry_ms(&model, now.min(MAX_TIME_MS)) as i64;
                    prop_assert!((want - 10_000..=want).contains(&ttl), "{ttl} {want}");
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn corrupt_values_are_refused_and_left_as_they_are() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let location = parse_store_location("--budget-store", server.url().as_ref()).unwrap();
    let mut store = Store::open(&location).unwrap();
    let mut con = raw(&server);
    let key = BudgetKey::new(b"bad".to_vec()).unwrap();
    let rkey = key.redis_key();
    let good = String::from_utf8(codec::encode(&SharedState::default())).unwrap();
    let op = Operation::AttemptEnd {
        outcome: AttemptOutcome::Failure,
        hint_ms: None,
        probe: None,
    };
    let past_9999 = good.replace(
        "\"not_before_ms\":null",
        &format!("\"not_before_ms\":{}", MAX_TIME_MS + 1),
    );
    let big_id = good.replace(
        "\"probe\":null",
        "\"probe\":{\"id\":18446744073709551616,\"expires_ms\":1}",
    );
    for bad in [
        "garbage".to_string(),
        "{".into(),
        "null".into(),
        "[]".into(),
        "{\"version\":2}".into(),
        "{\"version\":1}".into(),
        good.replace("\"updated_ms\":0", "\"updated_ms\":1.5"),
        good.replace("\"updated_ms\":0", "\"updated_ms\":-1"),
        good.replace("\"updated_ms\":0", "\"updated_ms\":\"0\""),
        good.replace("\"updated_ms\":0", "\"updated_ms\":0,\"surprise\":1"),
        good.replace("\"updated_ms\":0", "\"updated_ms\":0,\"updated_ms\":0"),
        good.replace("\"consecutive\":0", "\"consecutive\":4294967296"),
        good.replace("\"consecutive\":0", "\"consecutive\":00"),
        good.replace("\"updated_ms\":0", "\"updated_ms\":01"),
        good.replace("\"probe\":null", "\"probe\":{\"id\":07,\"expires_ms\":1}"),
        good.replace(
            "\"not_before_ms\":null",
            "\"not_before_ms\":1,\"hint_len_ms\":01",
        ),
        good.clone() + "x",
        past_9999,
        big_id,
        "{\"version\":1,\"updated_ms\":0,\"breaker\":null}".into(),
        "\u{1b}]0;pwned\u{7}{\u{1b}[2J".into(),
    ] {
        let _: () = redis::cmd("SET")
            .arg(&rkey)
            .arg(&bad)
            .query(&mut con)
            .unwrap();
        let e = store.perform(&key, &Policy::default(), 5, &op).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt { .. }), "{bad:?}: {e}");
        let after: String = redis::cmd("GET").arg(&rkey).query(&mut con).unwrap();
        assert_eq!(after, bad, "a corrupt value was written over");
    }
    // A value of more than 64 KiB is neither read nor written.
    let _: () = redis::cmd("SET")
        .arg(&rkey)
        .arg(vec![b' '; 64 * 1024 + 1])
        .query(&mut con)
        .unwrap();
    let e = store.perform(&key, &Policy::default(), 5, &op).unwrap_err();
    assert!(e.to_string().contains("larger than 65536"), "{e}");
    assert!(store.load(&key).is_err());
}

#[test]
fn values_a_file_store_reads_read_the_same_in_the_script() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let location = parse_store_location("--budget-store", server.url().as_ref()).unwrap();
    let mut store = Store::open(&location).unwrap();
    let mut con = raw(&server);
    let key = BudgetKey::new(b"edited".to_vec()).unwrap();
    let rkey = key.redis_key();
    let op = Operation::AttemptEnd {
        outcome: AttemptOutcome::Success,
        hint_ms: None,
        probe: None,
    };
    for text in [
        "",
        " \n",
        " { \"version\" : 1 ,\n \"updated_ms\":0, \"tokens\" : { \"milli\" : 99999, \"max_milli\":10000, \"stamp_ms\":0 }, \"breaker\":{\"consecutive\":0,\"open_until_ms\":null,\"probe\":null},\"not_before_ms\":null } ",
        "{\"version\":1,\"updated_ms\":0,\"tokens\":{\"milli\":5,\"max_milli\":0,\"stamp_ms\":0},\"breaker\":{\"consecutive\":0}}",
        "{\"breaker\":{\"consecutive\":7,\"probe\":{\"expires_ms\":9,\"id\":12345678901234567890}},\"updated_ms\":3,\"version\":1}",
        // In the form the codec writes, but with counts to clamp.
        "{\"version\":1,\"updated_ms\":0,\"tokens\":{\"milli\":99999,\"max_milli\":10000,\"stamp_ms\":0},\"breaker\":{\"consecutive\":0,\"open_until_ms\":null,\"probe\":null},\"not_before_ms\":null}",
        "{\"version\":1,\"updated_ms\":0,\"tokens\":{\"milli\":7,\"max_milli\":0,\"stamp_ms\":0},\"breaker\":{\"consecutive\":0,\"open_until_ms\":null,\"probe\":null},\"not_before_ms\":null}",
        // A length without a time.
        "{\"version\":1,\"updated_ms\":0,\"tokens\":null,\"breaker\":{\"consecutive\":0,\"open_until_ms\":null,\"probe\":null},\"not_before_ms\":null,\"hint_len_ms\":5}",
    ] {
        let _: () = redis::cmd("SET")
            .arg(&rkey)
            .arg(text)
            .query(&mut con)
            .unwrap();
        let mut model = codec::decode(text.as_bytes()).unwrap();
        op.apply(&mut model, &Policy::default(), 1_000);
        let (_, state) = store.perform(&key, &Policy::default(), 1_000, &op).unwrap();
        assert_eq!(state, model, "{text}");
        let stored: Vec<u8> = redis::cmd("GET").arg(&rkey).query(&mut con).unwrap();
        assert_eq!(stored, codec::encode(&model), "{text}");
    }
}

/// Cases where the naive double arithmetic (`math.floor(a * b / c)`) is off by one, found by a
/// search: a bucket rescaled to another maximum near 2^32 thousandths, and refill credited
/// over centuries at an interval of years. The script must agree with the Rust code here too.
#[test]
fn arithmetic_past_2_pow_53_is_exact() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let location = parse_store_location("--budget-store", server.url().as_ref()).unwrap();
    let mut store = Store::open(&location).unwrap();
    let mut con = raw(&server);
    let key = BudgetKey::new(b"exact".to_vec()).unwrap();
    let rkey = key.redis_key();
    let failure = Operation::AttemptEnd {
        outcome: AttemptOutcome::Failure,
        hint_ms: None,
        probe: None,
    };
    let mut check = |bucket: TokenBucket, throttle: Throttle, now: u64| {
        let start = SharedState {
            bucket: Some(bucket),
            ..SharedState::default()
        };
        let _: () = redis::cmd("SET")
            .arg(&rkey)
            .arg(codec::encode(&start))
            .query(&mut con)
            .unwrap();
        let policy = Policy {
            throttle,
            breaker: None,
        };
        let mut model = start;
        failure.apply(&mut model, &policy, now);
        store.perform(&key, &policy, now, &failure).unwrap();
        let stored: Vec<u8> = redis::cmd("GET").arg(&rkey).query(&mut con).unwrap();
        assert_eq!(
            String::from_utf8(stored).unwrap(),
            String::from_utf8(codec::encode(&model)).unwrap()
        );
    };
    for (milli, old_max, new_tokens) in [
        (2_447_126_806u32, 3_196_750_975u32, 1_000_000.0f64),
        (3_374_116_284, 3_555_540_733, 1_000_000.0),
        (2_876_195_417, 3_314_355_727, 999_999.999),
    ] {
        let throttle = Throttle::new(new_tokens, 1.0).unwrap();
        check(TokenBucket::from_parts(milli, old_max, 0), throttle, 1);
    }
    for (every, elapsed) in [
        (148_818_766_892u64, 150_333_295_482_659u64),
        (817_106_586_250, 105_103_603_082_751),
        (805_190_311_491, 238_696_252_270_572),
        (2_398_335_733_058, 180_455_577_226_749),
    ] {
        let throttle = Throttle::new(1_000_000.0, 1.0)
            .unwrap()
            .with_refill(Duration::from_millis(every))
            .unwrap();
        check(
            TokenBucket::from_parts(0, 1_000_000_000, 1_000),
            throttle,
            1_000 + elapsed,
        );
    }
}
