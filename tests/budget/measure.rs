//! A measurement, not a test (ignored; run by hand): the latency of one `Store::perform` (the
//! read-modify-write of an `attempt_end`), file store against a local Redis, 1000 updates
//! each, one process, no contention. Prints the median and the 99th percentile.
//!
//! `cargo test --release --test budget measure_update_latency -- --ignored --nocapture`

use std::time::{Duration, Instant};

use retry::budget::{AttemptOutcome, BudgetKey, Operation, Policy, Store, parse_store_location};

use crate::support::{self, RedisServer};
use crate::tools::{self, require};

fn measure(location: &str) -> (Duration, Duration) {
    let loc = parse_store_location("--budget-store", location.as_ref()).unwrap();
    let mut store = Store::open(&loc).unwrap();
    let key = BudgetKey::new(b"latency".to_vec()).unwrap();
    let mut times: Vec<Duration> = (0..1000u64)
        .map(|i| {
            let outcome = if i % 2 == 0 {
                AttemptOutcome::Failure
            } else {
                AttemptOutcome::Success
            };
            let start = Instant::now();
            let op = Operation::AttemptEnd {
                outcome,
                hint_ms: None,
                probe: None,
            };
            store.perform(&key, &Policy::default(), i, &op).unwrap();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[500], times[990])
}

#[test]
#[ignore = "a measurement, run by hand"]
fn measure_update_latency() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let (median, p99) = measure(dir.to_str().unwrap());
    println!(
        "file store ({}): median {median:?}, p99 {p99:?}",
        dir.display()
    );
    // A tmpfs, as `$XDG_RUNTIME_DIR` usually is.
    if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
        let dir = support::store_dir(&shm);
        let (median, p99) = measure(dir.to_str().unwrap());
        println!(
            "file store ({}): median {median:?}, p99 {p99:?}",
            dir.display()
        );
    }
    let server = RedisServer::start();
    let (median, p99) = measure(&server.url());
    println!("redis store (local redis-server): median {median:?}, p99 {p99:?}");
}
