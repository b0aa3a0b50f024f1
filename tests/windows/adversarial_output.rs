//! The adversarial pass of issue 33 on Windows, its huge output (see [`crate::adversarial`]):
//! 50 MB through the pipeline passed on whole, with a matching last line, and under
//! `--chronic`.

use crate::bench::{bench, retry};

// --- Huge output ---------------------------------------------------------------------------

/// 50 MB of output, then a last line `END`.
const HUGE: u64 = 50_000_000;
/// What `probe spew HUGE END` writes: HUGE bytes, `END` and a newline.
const HUGE_OUT: usize = HUGE as usize + 4;

/// Whether `text` is `probe spew HUGE END`'s output, byte for byte.
fn is_spew(text: &str) -> bool {
    text.len() == HUGE_OUT
        && text.ends_with("\nEND\n")
        && text.as_bytes()[..HUGE as usize].chunks(100).all(|line| {
            line[..line.len() - 1].iter().all(|&c| c == b'x') && line[line.len() - 1] == b'\n'
        })
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_huge_output_is_passed_on_whole() {
    let Some(b) = bench() else { return };
    let spew = ["spew", "50000000", "END"];
    for flags in [&["-n", "0"][..], &["-n", "0", "--stdout-on-success"]] {
        let r = retry(b, &b.probe_args(flags, &spew)).run();
        assert_eq!(r.code, 0, "{flags:?}: status, stderr {:?}", r.stderr);
        assert_eq!(r.stdout.len(), HUGE_OUT, "{flags:?}: bytes on stdout");
        assert!(
            is_spew(&r.stdout),
            "{flags:?}: stdout is not what was written"
        );
        assert_eq!(r.lines(), Vec::<&str>::new(), "{flags:?}");
    }
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_huge_output_with_a_matching_last_line_fails_the_attempt_and_nothing_is_lost() {
    let Some(b) = bench() else { return };
    let spew = ["spew", "50000000", "END"];
    // Streamed: the whole output on stdout, then the attempt counts as failed (1).
    let flags = ["-n", "0", "--retry-if-output", "^END$"];
    let r = retry(b, &b.probe_args(&flags, &spew)).run();
    assert_eq!(r.code, 1, "streamed: stderr {:?}", r.stderr);
    assert!(
        is_spew(&r.stdout),
        "streamed: {} bytes on stdout",
        r.stdout.len()
    );
    // --chronic holds it all (50 MB, under --max-output's 64 MiB) and writes it out when the
    // run gives up: stdout to stdout.
    let flags = ["-n", "0", "--chronic", "--retry-if-output", "^END$"];
    let r = retry(b, &b.probe_args(&flags, &spew)).run();
    assert_eq!(r.code, 1, "--chronic: stderr {:?}", r.stderr);
    assert!(
        is_spew(&r.stdout),
        "--chronic: {} bytes on stdout",
        r.stdout.len()
    );
    assert!(
        r.lines().last().is_some_and(|l| l.contains("gave up")),
        "--chronic: stderr {:?}",
        r.stderr
    );
    // --stdout-on-success: the failed attempt's held stdout goes to stderr, whole.
    let flags = [
        "-n",
        "0",
        "--stdout-on-success",
        "--retry-if-output",
        "^END$",
    ];
    let r = retry(b, &b.probe_args(&flags, &spew)).run();
    assert_eq!(
        r.code,
        1,
        "--stdout-on-success: {} bytes on stderr",
        r.stderr.len()
    );
    assert_eq!(r.stdout, "", "--stdout-on-success");
    let held: String = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("retry: "))
        .flat_map(|l| [l, "\n"])
        .collect();
    assert!(
        is_spew(&held),
        "--stdout-on-success: {} bytes held",
        held.len()
    );
}

#[test]
#[ignore = "runs under Wine: .ci/windows test"]
fn adversarial_huge_output_succeeds_under_chronic_and_prints_nothing() {
    let Some(b) = bench() else { return };
    let r = retry(
        b,
        &b.probe_args(&["-n", "0", "--chronic"], &["spew", "50000000", "END"]),
    )
    .run();
    assert_eq!((r.code, r.stdout.len()), (0, 0), "stderr {:?}", r.stderr);
    assert_eq!(r.stderr, "", "{r:?}");
}
