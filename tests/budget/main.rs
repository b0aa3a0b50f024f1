//! Tests of the budget layer through the library, with real components: the file store's
//! directory and `flock` across processes, a real `redis-server`, and property tests of the
//! pure state. Unix only, as the suite of the binary is.
#![cfg(unix)]

mod contention;
mod file_store;
mod lua;
mod measure;
mod props;
mod redis_store;
mod support;
#[path = "../common/tools.rs"]
mod tools;

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use retry::budget::file_store::FileStore;
use retry::budget::{BudgetKey, Store, parse_store_location};

/// Not a test: the entry point of helper child processes (see `support::helper`). Run only
/// with `--ignored` and the helper variable set; does nothing otherwise.
#[test]
#[ignore = "helper entry for child processes"]
fn helper_entry() {
    let Ok(spec) = std::env::var(support::HELPER_ENV) else {
        return;
    };
    let fields: Vec<&str> = spec.split('\n').collect();
    match fields[..] {
        // Hold KEY's lock in DIR: signal READY, then sleep until killed.
        ["hold", dir, key, ready] => {
            let store = FileStore::open(Path::new(dir)).unwrap();
            let key = BudgetKey::new(key.as_bytes().to_vec()).unwrap();
            // The store runs the closure once without the lock, and again under it only when
            // the first run changed the state.
            let mut calls = 0;
            store
                .update(&key, |state| {
                    calls += 1;
                    state.updated_ms += 1;
                    if calls == 1 {
                        return;
                    }
                    std::fs::write(ready, b"").unwrap();
                    loop {
                        std::thread::sleep(Duration::from_secs(60));
                    }
                })
                .unwrap();
        }
        // Wait for GO, then run an always-failing command with -n RETRIES against LOCATION.
        ["run", location, key, retries, go, lock_ms] => {
            let location = parse_store_location("--budget-store", OsStr::new(location)).unwrap();
            let store = match &location {
                retry::budget::StoreLocation::Dir(dir) => Store::File(
                    FileStore::open(dir)
                        .unwrap()
                        .with_lock_timeout(Duration::from_millis(lock_ms.parse().unwrap())),
                ),
                _ => Store::open(&location).unwrap(),
            };
            assert!(support::wait_for_file(
                Path::new(go),
                Duration::from_secs(60)
            ));
            let key = BudgetKey::new(key.as_bytes().to_vec()).unwrap();
            let report = support::always_failing_run(store, &key, retries.parse().unwrap());
            println!("attempts={} warnings={}", report.attempts, report.warnings);
        }
        _ => panic!("unknown helper spec {spec:?}"),
    }
}
