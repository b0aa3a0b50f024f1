//! The Redis store against a real `redis-server`: shared state and its expiry, passwords never
//! shown, and a server that is down, hung or lost mid-run costing one error well under a
//! second, after which the run goes on without a budget.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use retry::budget::redis_store::{COMMAND_TIMEOUT, CONNECT_TIMEOUT, IDLE_EXPIRY};
use retry::budget::{
    Answer, AttemptOutcome, Budget, BudgetKey, Operation, Policy, Store, StoreError, StoreLocation,
    parse_store_location,
};

use crate::support::RedisServer;
use crate::tools::{self, require};

fn location(url: &str) -> StoreLocation {
    parse_store_location("--budget-store", url.as_ref()).unwrap()
}

fn key(text: &str) -> BudgetKey {
    BudgetKey::new(text.as_bytes().to_vec()).unwrap()
}

fn raw(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

fn fail(store: &mut Store, k: &BudgetKey) -> f64 {
    let op = Operation::AttemptEnd {
        outcome: AttemptOutcome::Failure,
        hint_ms: None,
        probe: None,
    };
    match store.perform(k, &Policy::default(), 0, &op).unwrap().0 {
        Answer::AttemptEnd(after) => after.tokens,
        other => panic!("{other:?}"),
    }
}

#[test]
fn state_is_shared_namespaced_and_expires() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let loc = location(&server.url());
    let k = key("api");
    for expected in [9.0, 8.0] {
        let mut store = Store::open(&loc).unwrap();
        assert_eq!(fail(&mut store, &k), expected);
    }
    let mut con = raw(&server);
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    assert_eq!(keys, ["retry:budget:api"]);
    let ttl: i64 = redis::cmd("PTTL")
        .arg("retry:budget:api")
        .query(&mut con)
        .unwrap();
    let idle = IDLE_EXPIRY.as_millis() as i64;
    assert!(ttl > idle - 60_000 && ttl <= idle, "{ttl}");
    // A read that changes nothing writes nothing: the expiry is not refreshed by it.
    redis::cmd("PEXPIRE")
        .arg("retry:budget:api")
        .arg(100_000)
        .exec(&mut con)
        .unwrap();
    let mut store = Store::open(&loc).unwrap();
    let cooldown = Operation::Cooldown { probe: None };
    store.perform(&k, &Policy::default(), 0, &cooldown).unwrap();
    let ttl: i64 = redis::cmd("PTTL")
        .arg("retry:budget:api")
        .query(&mut con)
        .unwrap();
    assert!(ttl <= 100_000, "{ttl}");
    // Binary KEYs are fine.
    let odd = BudgetKey::new(b"a b\n\xff".to_vec()).unwrap();
    assert_eq!(fail(&mut store, &odd), 9.0);
}

#[test]
fn a_password_is_used_but_never_shown() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start_with(Some("s3cret-pw"));
    let url = server.url();
    assert!(url.contains("s3cret-pw"));
    let loc = location(&url);
    assert!(!loc.to_string().contains("s3cret-pw"));
    assert!(!format!("{loc:?}").contains("s3cret-pw"));
    let mut store = Store::open(&loc).unwrap();
    assert!(!format!("{store:?}").contains("s3cret-pw"));
    assert_eq!(fail(&mut store, &key("k")), 9.0);

    let wrong = format!("redis://:wrong-pw@127.0.0.1:{}", server.port());
    let e = Store::open(&location(&wrong)).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, StoreError::Redis { .. }), "{text}");
    assert!(!text.contains("wrong-pw"), "{text}");
    assert!(text.contains(":***@127.0.0.1"), "{text}");
}

#[test]
fn a_corrupt_value_is_an_error() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let mut con = raw(&server);
    redis::cmd("SET")
        .arg("retry:budget:k")
        .arg("garbage")
        .exec(&mut con)
        .unwrap();
    let mut store = Store::open(&location(&server.url())).unwrap();
    let e = store.load(&key("k")).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("retry:budget:k"), "{e}");
}

/// How long a budget on `url` takes to fail open; asserts one warning and no cost after it.
fn fail_open_cost(url: &str) -> Duration {
    let start = Instant::now();
    let mut budget = Budget::open(&location(url), key("k"), Policy::default());
    let begin = budget.begin();
    let cost = start.elapsed();
    assert!(begin.is_none());
    let warning = budget.take_warning().expect("one warning");
    assert!(
        warning.contains("going on without a retry budget"),
        "{warning}"
    );
    let start = Instant::now();
    for _ in 0..10 {
        assert!(budget.attempt_end(AttemptOutcome::Failure, None).is_none());
        assert!(budget.before_attempt().is_none());
    }
    assert!(start.elapsed() < Duration::from_millis(50));
    assert_eq!(budget.take_warning(), None);
    cost
}

#[test]
fn a_server_that_is_down_costs_one_warning_well_under_a_second() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let mut server = RedisServer::start();
    let url = server.url();
    server.stop();
    let cost = fail_open_cost(&url);
    eprintln!("redis down (connection refused): {cost:?}");
    assert!(cost < Duration::from_secs(2), "{cost:?}");
}

#[test]
fn a_server_that_never_answers_costs_one_warning_well_under_a_second() {
    // Accepts connections (the kernel does, from the backlog) and never replies.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "redis://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let cost = fail_open_cost(&url);
    eprintln!("redis hung: {cost:?}");
    assert!(cost >= CONNECT_TIMEOUT.min(COMMAND_TIMEOUT), "{cost:?}");
    assert!(cost < Duration::from_secs(2), "{cost:?}");
    drop(listener);
}

#[test]
fn a_server_lost_mid_run_costs_one_warning() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let mut server = RedisServer::start();
    let mut budget = Budget::open(&location(&server.url()), key("k"), Policy::default());
    assert_eq!(budget.begin().unwrap().tokens, 10.0);
    server.stop();
    let start = Instant::now();
    assert!(budget.attempt_end(AttemptOutcome::Failure, None).is_none());
    let cost = start.elapsed();
    eprintln!("redis lost mid-run: {cost:?}");
    assert!(cost < Duration::from_secs(2), "{cost:?}");
    assert!(budget.take_warning().is_some());
    assert!(budget.attempt_end(AttemptOutcome::Failure, None).is_none());
    assert_eq!(budget.take_warning(), None);
}
