//! `dist/release.sh` on a machine without a target's linker, as a fresh Debian clone is
//! without the AArch64 cross gcc: the target is skipped with a note saying what to install (as
//! for macOS), or with `RELEASE_REQUIRE_ALL=1` refused at once, before any build; `--check`
//! says so and builds nothing. Run with a PATH of links to the tools the check needs, and no
//! linker but the native one, so that the machine's own cross tools (which `.ci/platforms`
//! installs) are out of sight.

use std::path::PathBuf;
use std::process::Command;

use crate::downloaders::linked_tools;
use crate::release::repository;
use crate::support::{Scratch, hermetic, run};

/// A PATH with what `dist/release.sh --check` runs, and no cross linker, nor zig, nor
/// cargo-zigbuild.
fn path_without_cross_tools() -> PathBuf {
    linked_tools(
        "release-tools-native-only",
        &[
            "bash", "env", "cargo", "rustc", "rustup", "sed", "grep", "git", "date", "dirname",
            "cat", "python3",
        ],
    )
}

/// `dist/release.sh ARGS` (or `dist/build.sh`) with `env`, and the PATH above.
fn script(name: &str, args: &[&str], env: &[(&str, &str)]) -> crate::support::Run {
    let scratch = Scratch::new();
    let mut cmd = Command::new(repository().join(name));
    hermetic(&mut cmd, &scratch);
    cmd.env_remove("RELEASE_REQUIRE_ALL")
        .env_remove("DEB_MAINTAINER")
        .env_remove("SOURCE_DATE_EPOCH")
        .env("PATH", path_without_cross_tools())
        // rustup and cargo find their toolchain where the tests' do.
        .env(
            "RUSTUP_HOME",
            std::env::var("RUSTUP_HOME").unwrap_or_else(|_| {
                format!("{}/.rustup", std::env::var("HOME").unwrap_or_default())
            }),
        )
        .env(
            "CARGO_HOME",
            std::env::var("CARGO_HOME").unwrap_or_else(|_| {
                format!("{}/.cargo", std::env::var("HOME").unwrap_or_default())
            }),
        )
        .args(args)
        .envs(env.iter().copied());
    run(cmd)
}

const AARCH64_LACKS: &str =
    "no aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)";

#[test]
fn build_sh_check_says_what_a_target_lacks_and_builds_nothing() {
    let run = script(
        "dist/build.sh",
        &["--check", "aarch64-unknown-linux-gnu"],
        &[],
    );
    assert_eq!(run.status, Some(2), "{run:#?}");
    assert_eq!(
        run.stderr,
        format!("build.sh: {AARCH64_LACKS}\n"),
        "{run:#?}"
    );
    assert_eq!(run.stdout, "", "{run:#?}");
    let run = script(
        "dist/build.sh",
        &["--check", "x86_64-unknown-linux-gnu"],
        &[],
    );
    assert_eq!(run.status, Some(0), "{run:#?}");
}

#[test]
fn release_sh_skips_a_target_whose_linker_is_missing_with_a_note() {
    let run = script("dist/release.sh", &["--check"], &[]);
    assert_eq!(run.status, Some(0), "{run:#?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines.contains(&"x86_64-unknown-linux-gnu"), "{run:#?}");
    assert!(
        lines.contains(&format!("aarch64-unknown-linux-gnu: skipped, {AARCH64_LACKS}").as_str()),
        "{run:#?}"
    );
    // The release workflow's RELEASE_REQUIRE_ALL=1: an error, at once.
    let run = script(
        "dist/release.sh",
        &["--check"],
        &[("RELEASE_REQUIRE_ALL", "1")],
    );
    assert_eq!(run.status, Some(1), "{run:#?}");
    assert_eq!(
        run.stderr.lines().last().unwrap(),
        format!("release.sh: cannot build aarch64-unknown-linux-gnu: {AARCH64_LACKS}"),
        "{run:#?}"
    );
}
