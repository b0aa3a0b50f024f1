//! The file store: its directory (0700, refused when unsafe), its files (0600, any KEY safe),
//! persistence across runs, corruption failing open, the lock timeout, and a lock holder
//! killed with KILL that does not block the others.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::time::{Duration, Instant};

use retry::budget::file_store::{DEFAULT_LOCK_TIMEOUT, FileStore};
use retry::budget::{
    AttemptOutcome, Budget, BudgetKey, Policy, SharedState, Store, StoreError, StoreLocation,
};

use crate::support;

fn key(text: &[u8]) -> BudgetKey {
    BudgetKey::new(text.to_vec()).unwrap()
}

fn fail(store: &FileStore, k: &BudgetKey) -> f64 {
    store
        .update(k, |s| {
            s.attempt_end(&Policy::default(), 0, AttemptOutcome::Failure, None, None)
                .tokens
        })
        .unwrap()
}

#[test]
fn creates_a_private_directory_and_private_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a/b/retry");
    let store = FileStore::open(&dir).unwrap();
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    // A hostile KEY stays inside the directory as an encoded name.
    let k = key(b"../../escape\n\xff");
    assert_eq!(fail(&store, &k), 9.0);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "%2E%2E%2F%2E%2E%2Fescape%0A%FF.json",
            "%2E%2E%2F%2E%2E%2Fescape%0A%FF.lock"
        ]
    );
    for name in names {
        let mode = std::fs::metadata(dir.join(name)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert!(!tmp.path().join("a/escape\n\u{fffd}.json").exists());
}

#[test]
fn state_persists_across_runs_and_stores() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let k = key(b"shared");
    for expected in [9.0, 8.0, 7.0] {
        // A new store each time, as each run opens its own.
        assert_eq!(fail(&FileStore::open(&dir).unwrap(), &k), expected);
    }
    // Another KEY has its own count.
    assert_eq!(fail(&FileStore::open(&dir).unwrap(), &key(b"other")), 9.0);
    // A state written as an empty file (a crash before the first write) is fresh.
    std::fs::write(dir.join("empty.json"), b"").unwrap();
    assert_eq!(fail(&FileStore::open(&dir).unwrap(), &key(b"empty")), 9.0);
}

#[test]
fn refuses_a_symlink_a_file_and_a_directory_others_can_write() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    symlink(&real, &link).unwrap();
    let e = FileStore::open(&link).unwrap_err();
    assert!(e.to_string().contains("is a symlink; refused"), "{e}");

    let file = tmp.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let e = FileStore::open(&file).unwrap_err();
    assert!(matches!(e, StoreError::Dir { .. }), "{e}");

    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = FileStore::open(&open).unwrap_err();
    assert!(e.to_string().contains("writable by others"), "{e}");
}

#[test]
fn refuses_a_directory_of_another_user() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let tmp = tempfile::tempdir().unwrap();
    let dir = if euid == 0 {
        // As root: a private directory given to `nobody`.
        let dir = tmp.path().join("theirs");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        dir
    } else {
        // As a user: root's own directory.
        std::path::PathBuf::from("/")
    };
    let e = FileStore::open(&dir).unwrap_err();
    assert!(e.to_string().contains("not by this user"), "{e}");
}

#[test]
fn a_corrupt_file_fails_open_with_one_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let store = FileStore::open(&dir).unwrap();
    let k = key(b"bad");
    std::fs::write(dir.join("bad.json"), b"{\"version\":1,").unwrap();
    let e = store.update(&k, |_| ()).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("bad.json"), "{e}");

    let mut budget = Budget::open(&StoreLocation::Dir(dir.clone()), k, Policy::default());
    assert!(budget.begin().is_none());
    let warning = budget.take_warning().unwrap();
    assert!(
        warning.contains("corrupt") && warning.contains("remove it"),
        "{warning}"
    );
    // The run goes on as without a budget: no second warning, no store access.
    assert!(budget.attempt_end(AttemptOutcome::Failure, None).is_none());
    assert!(budget.before_attempt().is_none());
    assert_eq!(budget.take_warning(), None);
    // The file is left as it was for the user to look at.
    assert_eq!(
        std::fs::read(dir.join("bad.json")).unwrap(),
        b"{\"version\":1,"
    );
}

#[test]
fn a_killed_lock_holder_never_blocks_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let store = FileStore::open(&dir).unwrap();
    let k = key(b"held");
    assert_eq!(fail(&store, &k), 9.0);

    let ready = tmp.path().join("ready");
    let mut holder = support::helper(&[
        "hold",
        dir.to_str().unwrap(),
        "held",
        ready.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    assert!(
        support::wait_for_file(&ready, Duration::from_secs(60)),
        "the helper never took the lock"
    );

    // While it holds the lock, a read that changes nothing needs no lock...
    assert_eq!(store.update(&k, |s| s.not_before_ms).unwrap(), None);
    // ... and an update waits about the lock timeout, then gives up.
    let start = Instant::now();
    let e = store
        .update(&k, |s| s.not_before_ms = Some(u64::MAX))
        .unwrap_err();
    let waited = start.elapsed();
    assert!(matches!(e, StoreError::LockTimeout { .. }), "{e}");
    assert!(waited >= DEFAULT_LOCK_TIMEOUT, "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    eprintln!("lock timeout took {waited:?}");

    // KILL the holder in the middle of its read-modify-write: the kernel drops its lock.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let start = Instant::now();
    assert_eq!(fail(&store, &k), 8.0);
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_budget_on_the_file_store_reports_tokens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let location = StoreLocation::Dir(dir);
    let mut budget = Budget::open(&location, key(b"k"), Policy::default());
    assert!(budget.is_active());
    let begin = budget.begin().unwrap();
    assert_eq!(begin.tokens, 10.0);
    let after = budget.attempt_end(AttemptOutcome::Failure, None).unwrap();
    assert_eq!(after.tokens, 9.0);
    assert!(after.retry_allowed);
    assert_eq!(budget.take_warning(), None);
    let mut store = Store::open(&location).unwrap();
    let state: SharedState = store.load(&key(b"k")).unwrap();
    assert_eq!(state.bucket.unwrap().tokens(), 9.0);
}

#[test]
fn a_fifo_in_place_of_a_file_is_an_error_at_once_not_a_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = support::store_dir(&tmp);
    let store = FileStore::open(&dir).unwrap();
    let fifo = |name: &str| {
        nix::unistd::mkfifo(
            &dir.join(name),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
    };
    let start = Instant::now();
    fifo("state.json");
    let e = store.update(&key(b"state"), |_| ()).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    // The lock file and the temporary file too, once the state must change.
    fifo("lock.lock");
    let e = store
        .update(&key(b"lock"), |s| s.updated_ms += 1)
        .unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    fifo("tmp.tmp");
    let e = store
        .update(&key(b"tmp"), |s| s.updated_ms += 1)
        .unwrap_err();
    assert!(matches!(e, StoreError::Io { .. }), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
}
