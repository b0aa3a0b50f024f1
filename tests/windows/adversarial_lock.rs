//! The adversarial pass of issue 33 on Windows, `--lock` on hostile paths (see
//! [`crate::adversarial`]): a read-only directory, a read-only lock file, a directory, and a
//! path with spaces and non-ASCII characters.

#[cfg(unix)]
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::bench::{START, bench, retry, wait_for_file, wait_with_limit};

// --- --lock on hostile paths ---------------------------------------------------------------

/// Makes `dir` read-only for this user: `chmod 555`, and where that is not enough (root, as in
/// CI containers, writes anyway) `chattr +i`. `None` when a file can still be created in it;
/// dropped, it undoes both. (Unix only: natively on Windows a read-only directory is an ACL
/// that denies writing, which these tests do not make.)
#[cfg(unix)]
struct ReadOnly(PathBuf);

#[cfg(unix)]
impl ReadOnly {
    fn make(dir: &Path) -> Option<ReadOnly> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let guard = ReadOnly(dir.to_path_buf());
        let probe = dir.join(".can-i-write");
        if std::fs::write(&probe, "").is_err() {
            return Some(guard);
        }
        let _ = std::fs::remove_file(&probe);
        let immutable = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if immutable && std::fs::write(&probe, "").is_err() {
            return Some(guard);
        }
        let _ = std::fs::remove_file(&probe);
        None
    }
}

#[cfg(unix)]
impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

#[cfg(unix)]
#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_a_lock_file_in_a_read_only_directory() {
    let Some(b) = bench() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    // A lock file there already: it is opened for reading and locked (as on Unix, where the
    // run goes on); none there: it cannot be made, 125 with one line naming --lock.
    std::fs::write(dir.join("present.lock"), "").unwrap();
    let Some(_read_only) = ReadOnly::make(&dir) else {
        eprintln!("skipped: cannot make a directory read-only here (neither chmod nor chattr)");
        return;
    };
    let missing = b.win(&dir.join("missing.lock"));
    let r = retry(b, &b.probe_args(&["--lock", &missing], &["print", "ran"])).run();
    assert_eq!(r.code, 125, "{r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{r:?}");
    assert!(r.stderr.starts_with("retry: --lock "), "{r:?}");

    let present = b.win(&dir.join("present.lock"));
    let r = retry(b, &b.probe_args(&["--lock", &present], &["print", "ran"])).run();
    assert_eq!((r.code, r.stdout.as_str()), (0, "ran\n"), "{r:?}");
}

#[cfg(unix)]
#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_a_read_only_lock_file_is_locked_and_the_run_goes_on() {
    use std::os::unix::fs::PermissionsExt;
    let Some(b) = bench() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let lock = tmp.path().join("ro.lock");
    std::fs::write(&lock, "").unwrap();
    // Mode 0444: Wine shows the file with FILE_ATTRIBUTE_READONLY.
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = retry(
        b,
        &b.probe_args(&["--lock", &b.win(&lock)], &["print", "ran"]),
    )
    .run();
    assert_eq!((r.code, r.stdout.as_str()), (0, "ran\n"), "{r:?}");
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_a_lock_path_that_is_a_directory_is_refused_with_one_line() {
    let Some(b) = bench() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = b.win(tmp.path());
    for path in [dir.clone(), format!("{dir}\\")] {
        let r = retry(b, &b.probe_args(&["--lock", &path], &["print", "ran"])).run();
        assert_eq!(r.code, 125, "{path}: {r:?}");
        assert_eq!(r.stdout, "", "{path}: {r:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{path}: {r:?}");
        assert!(r.stderr.contains("is a directory"), "{path}: {r:?}");
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_a_lock_path_with_spaces_and_non_ascii_characters() {
    let Some(b) = bench() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sp ace ü 日本");
    std::fs::create_dir(&dir).unwrap();
    let lock = dir.join("jöb lock ✓.lck");
    let r = retry(
        b,
        &b.probe_args(&["--lock", &b.win(&lock)], &["print", "ran"]),
    )
    .run();
    assert_eq!((r.code, r.stdout.as_str()), (0, "ran\n"), "{r:?}");
    // The file has that very name (Wine writes UTF-8 names), and held the run's pid.
    let text = std::fs::read_to_string(&lock).expect("the lock file under its own name");
    assert!(text.trim().parse::<u32>().is_ok(), "{text:?}");
    // Held by another run: 75, that run's pid named.
    let mut holder = retry(
        b,
        &b.probe_args(&["--lock", &b.win(&lock)], &["sleep", "20"]),
    )
    .spawn();
    std::fs::write(&lock, "").unwrap();
    let holder_pid = wait_for_file(&lock, Duration::from_secs(10) + START, &mut holder);
    let r = retry(
        b,
        &b.probe_args(&["--lock", &b.win(&lock)], &["print", "ran"]),
    )
    .run();
    let _ = holder.kill();
    let _ = wait_with_limit(&mut holder, Instant::now() + START);
    assert_eq!(r.code, 75, "{r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("is held by pid {}", holder_pid.trim())),
        "{r:?}"
    );
}
