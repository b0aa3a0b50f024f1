//! `--forever`'s ends under attack, through the binary users run (issue 41's items 1-7, a
//! second look): a shared cooldown that ends the loop between runs after a run that exited 0
//! ends it with 1, not 0; a preset's deadline that does not apply does not refuse `--splay`
//! either; a run that exits 0 and so ends a `--stop-on 0` loop keeps what it started, as any
//! successful attempt does; the metrics file's notices after a run are said, not dropped.

use std::process::Stdio;

use crate::helpers::{alive, release, release_std, send, wait_for_lines, wait_with_limit};

/// Waits (within the hang limit) until `path` exists.
fn wait_for_file(path: &std::path::Path) {
    wait_for_lines(path, 0);
}

#[test]
fn a_shared_cooldown_that_ends_the_loop_after_a_run_that_exited_0_ends_it_with_1() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (hooked, go) = (dir.path().join("hooked"), dir.path().join("go"));
    // The loop's first run exits 0; its --on-retry hook (within the pause before the next run)
    // waits while another run with the same KEY sets a shared cooldown of 2 hours, past
    // --max-hint: the loop then gives up before its next run.
    let mut looped = release_std()
        .env("HOOKED", &hooked)
        .env("GO", &go)
        .args(["--forever", "-b", "0", "--budget", "k", "--budget-store"])
        .arg(&store)
        .args([
            "--on-retry",
            "touch \"$HOOKED\"; while [ ! -e \"$GO\" ]; do sleep 0.02; done",
        ])
        .args(["--", "true"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&hooked);
    let other = release()
        .args([
            "-n",
            "0",
            "--max-hint",
            "3h",
            "--delay-from-output",
            "wait (\\d+)",
        ])
        .args(["--budget", "k", "--budget-store"])
        .arg(&store)
        .args(["--", "sh", "-c", "echo wait 7200; exit 1"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(1));
    std::fs::write(&go, "").unwrap();
    let status = wait_with_limit(&mut looped);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut looped.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("the shared cooldown of budget k"),
        "{stderr}"
    );
    assert_eq!(
        status.code(),
        Some(1),
        "giving up is never 0 with --forever: {stderr}"
    );
}

#[test]
fn a_preset_s_deadline_that_does_not_apply_does_not_refuse_a_long_splay() {
    // api-core's deadline is 2 minutes: without --forever a 5m splay cannot fit in it.
    let out = release()
        .args([
            "--preset",
            "api-core",
            "--splay",
            "5m",
            "--dry-run",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    for preset in [Some("api-core"), None] {
        let mut cmd = release();
        match preset {
            Some(name) => cmd.args(["--preset", name]),
            None => cmd.env("RETRY_PRESET", "api-core"),
        };
        let out = cmd
            .args(["--forever", "--splay", "5m", "--dry-run", "--", "true"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{preset:?}: {stderr}");
    }
    // A deadline given still counts.
    let out = release()
        .args([
            "--forever",
            "--preset",
            "api-core",
            "-d",
            "2m",
            "--splay",
            "5m",
        ])
        .args(["--dry-run", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
}

#[test]
fn a_run_that_ends_a_stop_on_0_loop_keeps_what_it_started() {
    for (args, kept) in [
        // As any successful attempt that ends the run does.
        (&["--forever", "--stop-on", "0", "-b", "0"][..], true),
        (&["-b", "0"][..], true),
        // A run that is restarted, or the last of a crash loop, leaves nothing.
        (&["--forever", "-n", "0", "-b", "0"][..], false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let out = release()
            .env("PID_FILE", &pid_file)
            .args(args)
            .args(["--", "sh", "-c"])
            .arg("sleep 60 >/dev/null 2>&1 & echo $! > \"$PID_FILE\"; exit 0")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let pid: i32 = wait_for_lines(&pid_file, 1).trim().parse().unwrap();
        let running = alive(pid);
        if running {
            send(pid as u32, libc::SIGKILL);
        }
        assert_eq!(running, kept, "{args:?}: {stderr}");
    }
}

#[test]
fn a_notice_of_the_metrics_file_written_after_a_run_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("retry.prom");
    let log = dir.path().join("runs");
    // Run 2 leaves the file unreadable (another program wrote it): the write after it
    // replaces it, which a warning must say (as it does when the end's write replaces it).
    let mut child = release_std()
        .env("LOG", &log)
        .env("PROM", &prom)
        .args(["--forever", "-b", "0", "--metrics-file"])
        .arg(&prom)
        .args(["--", "sh", "-c"])
        .arg(
            "echo run >> \"$LOG\"; [ \"$RETRY_ATTEMPT\" = 2 ] && echo 'not{{prometheus' > \"$PROM\"; \
             [ \"$RETRY_ATTEMPT\" -lt 3 ] && exit 4; exec sleep 60",
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&log, 3);
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM),
        "{stderr}"
    );
    assert!(
        stderr.contains("did not parse") && stderr.contains("it was replaced"),
        "{stderr}"
    );
}

#[test]
fn a_lost_recording_of_stdin_after_a_run_that_exited_0_is_retry_s_own_failure() {
    let out = release()
        .args([
            "--forever",
            "--replay-stdin",
            "--max-replay",
            "1000",
            "-b",
            "0.2",
        ])
        .args(["--", "sh", "-c", "exit 0"])
        .write_stdin(vec![b'y'; 100_000])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stdin could not be recorded whole"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(125), "{stderr}");
}
