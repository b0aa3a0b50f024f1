//! The adversarial pass of issue 33 on Windows, stdin and stdout closed or the null device
//! (see [`crate::adversarial`]).

use std::time::Duration;

use crate::bench::{START, bench, retry};

// --- stdin and stdout closed, or the null device -------------------------------------------

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_replay_stdin_with_stdin_closed_or_nul() {
    let Some(b) = bench() else { return };
    let flags = ["--replay-stdin", "--successes", "2", "-b", "0"];
    for stdin in ["nul", "closed"] {
        let r = retry(b, &b.probe_args(&flags, &["stdin-copy"]))
            .io(stdin, "inherit")
            .run();
        // Nothing to replay: every attempt reads end of file at once (Unix gives a closed
        // stdin on to the attempt, which fails reading it; Windows programs see no handle
        // as an empty stdin).
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "stdin {stdin}: {r:?}");
        assert!(
            r.elapsed < START * 4,
            "stdin {stdin}: {:?}: {r:?}",
            r.elapsed
        );
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_output_to_nul() {
    let Some(b) = bench() else { return };
    for flags in [
        &["-n", "0"][..],
        &["-n", "0", "--stdout-on-success"],
        &["-n", "0", "--chronic"],
        &["-n", "0", "--retry-if-output", "^NOPE$"],
    ] {
        let r = retry(b, &b.probe_args(flags, &["spew", "5000000", "END"]))
            .io("nul", "nul")
            .run();
        assert_eq!(r.code, 0, "{flags:?}: {r:?}");
        assert_eq!(r.stdout, "", "{flags:?}: {r:?}");
        assert!(
            r.elapsed < Duration::from_secs(10) + START * 2,
            "{flags:?}: {:?}: {r:?}",
            r.elapsed
        );
    }
    // The failed attempt's held stdout, written out to NUL, then the status.
    let flags = ["-n", "0", "--chronic", "--retry-if-output", "^END$"];
    let r = retry(b, &b.probe_args(&flags, &["spew", "5000000", "END"]))
        .io("nul", "nul")
        .run();
    assert_eq!(r.code, 1, "{r:?}");
}
