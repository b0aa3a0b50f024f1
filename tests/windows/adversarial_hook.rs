//! The adversarial pass of issue 33 on Windows, a hook that hangs past the deadline (see
//! [`crate::adversarial`]): it is stopped at the deadline and leaves nothing running.

use std::time::Duration;

use crate::adversarial::{Reaper, left_running, records, timed_out};
use crate::bench::{START, bench, retry};

// --- A hook that hangs -----------------------------------------------------------------------

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_the_deadline_stops_a_hook_that_hangs() {
    let Some(b) = bench() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = records(&tmp, "hook");
    let _reaper = Reaper {
        bench: b,
        dir: dir.clone(),
    };
    let hook = format!(
        "{} pid-sleep {} 600",
        b.win(&b.probe),
        b.win(&dir.join("hook"))
    );
    let flags = [
        "-d",
        "3s",
        "--kill-after",
        "1s",
        "-b",
        "0",
        "--on-retry",
        &hook,
    ];
    let r = retry(b, &b.probe_args(&flags, &["exit", "1"])).run();
    // As on Unix: the attempt's status, the hook's stop said, the deadline named.
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.elapsed >= Duration::from_secs(3), "{r:?}");
    assert!(
        r.elapsed < Duration::from_secs(4) + START * 3,
        "{:?}: {r:?}",
        r.elapsed
    );
    let lines = r.lines();
    assert!(
        lines.iter().any(|l| l.contains(&format!(
            "--on-retry hook exited with status {}",
            timed_out(b)
        ))),
        "{lines:?}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .contains("the deadline passed during --on-retry"),
        "{lines:?}"
    );
    assert!(dir.join("hook").is_file(), "the hook never ran: {r:?}");
    let left = left_running(b, &dir, START * 2);
    assert!(left.is_empty(), "the hook outlived the deadline: {left:?}");
}
