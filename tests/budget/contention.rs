//! 40 concurrent runs (separate processes) of an always-failing command with `-n 5` share one
//! KEY, with the file store and with a real Redis. gRFC A6 at the defaults grants a retry for
//! a failure only while the count it leaves is above 5: from 10 tokens the first four failures
//! (leaving 9, 8, 7, 6) and no other, since with no success the count only falls. So the 40
//! runs make exactly 40 first attempts + 4 retries = 44 attempts, whatever the interleaving
//! (the "at most 46" holds with room to spare).

use std::process::Output;
use std::time::Duration;

use retry::budget::{BudgetKey, Policy, Store, StoreLocation, Throttle, parse_store_location};

use crate::support::{self, RedisServer, RunReport};
use crate::tools::{self, require};

const RUNS: usize = 40;
const RETRIES: u32 = 5;

/// Starts the runs, lets them go together, and returns their reports.
fn forty_runs(location: &str, key: &str) -> Vec<RunReport> {
    let tmp = tempfile::tempdir().unwrap();
    let go = tmp.path().join("go");
    let go_text = go.to_str().unwrap().to_string();
    let retries = RETRIES.to_string();
    let children: Vec<_> = (0..RUNS)
        .map(|_| {
            // A long lock timeout: this test is about the bound, not about load.
            support::helper(&["run", location, key, &retries, &go_text, "20000"])
                .spawn()
                .expect("spawn helper")
        })
        .collect();
    std::fs::write(&go, b"").unwrap();
    children
        .into_iter()
        .map(|child| {
            let Output {
                status,
                stdout,
                stderr,
            } = child.wait_with_output().unwrap();
            assert!(
                status.success(),
                "helper failed: {}{}",
                String::from_utf8_lossy(&stdout),
                String::from_utf8_lossy(&stderr)
            );
            support::parse_report(&stdout)
        })
        .collect()
}

fn check(reports: &[RunReport], location: &str, key: &str) {
    let attempts: u32 = reports.iter().map(|r| r.attempts).sum();
    let warnings: u32 = reports.iter().map(|r| r.warnings).sum();
    assert_eq!(warnings, 0, "a store error made a run fail open");
    assert!(
        reports
            .iter()
            .all(|r| (1..=RETRIES + 1).contains(&r.attempts))
    );
    let bound = RUNS as u32 + Throttle::default().retries_from_full() as u32;
    assert_eq!(bound, 44);
    assert!(attempts <= 46, "{attempts} attempts");
    assert_eq!(attempts, bound, "{reports:?}");
    // The shared count: 10 tokens, 44 failures, floored at 0.
    let location = parse_store_location("--budget-store", location.as_ref()).unwrap();
    let mut store = Store::open(&location).unwrap();
    let key = BudgetKey::new(key.as_bytes().to_vec()).unwrap();
    let tokens = store
        .load(&key)
        .unwrap()
        .tokens(&Policy::default().throttle, 0);
    assert_eq!(tokens, 0.0);
}

#[test]
fn forty_runs_sharing_a_file_budget_make_44_attempts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let location = dir.to_str().unwrap();
    let reports = forty_runs(location, "api.example.com");
    check(&reports, location, "api.example.com");
    assert!(matches!(
        parse_store_location("--budget-store", location.as_ref()).unwrap(),
        StoreLocation::Dir(_)
    ));
}

#[test]
fn forty_runs_sharing_a_redis_budget_make_44_attempts() {
    if !require(&[tools::REDIS_SERVER]) {
        return;
    }
    let server = RedisServer::start();
    let url = server.url();
    let reports = forty_runs(&url, "api.example.com");
    check(&reports, &url, "api.example.com");
}

#[test]
fn forty_threads_sharing_a_file_budget_make_44_attempts() {
    // Threads with their own store each: flock excludes open file descriptions, not
    // processes, so threads contend exactly as processes do.
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let key = BudgetKey::new(b"threads".to_vec()).unwrap();
    let barrier = std::sync::Barrier::new(RUNS);
    let reports: Vec<RunReport> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..RUNS)
            .map(|_| {
                s.spawn(|| {
                    let store = retry::budget::file_store::FileStore::open(&dir)
                        .unwrap()
                        .with_lock_timeout(Duration::from_secs(20));
                    barrier.wait();
                    support::always_failing_run(Store::File(store), &key, RETRIES)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    check(&reports, dir.to_str().unwrap(), "threads");
}
