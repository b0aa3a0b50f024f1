//! The release build of retry, for the tests of what a run shows on a terminal (issue 20 asks
//! for them through the binary users get): `cargo build --release --bin retry` is run once per
//! test run, into the target directory the tests' own binary is in, and the path of the
//! result handed out. Cargo does nothing when the build is fresh; when it is stale (the sources
//! changed), it is rebuilt, so a test never runs an old release binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The path of `target/release/retry`, built (or found fresh) by cargo on the first call, with
/// the `portable` feature when the tests have it; panics with cargo's output if the build
/// fails. When `RETRY_TESTS_BINARY` names the binary under test (a release build, such as the
/// AArch64 one under qemu-user), that binary.
pub fn release_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if std::env::var_os(super::BINARY_VARIABLE).is_some() {
            super::bin().to_path_buf()
        } else {
            build()
        }
    })
}

fn build() -> PathBuf {
    // The tests' binary is `TARGET/debug/retry` (or `TARGET/release/retry` under
    // `cargo test --release`): the release build goes next to it.
    let tested = Path::new(assert_cmd::cargo::cargo_bin!("retry"));
    let target = tested
        .parent()
        .and_then(Path::parent)
        .expect("the tested binary is TARGET/PROFILE/retry");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "--release", "--bin", "retry", "--target-dir"]);
    build.arg(target);
    if cfg!(feature = "portable") {
        build.args(["--features", "portable"]);
    }
    let out = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo build --release: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = target.join("release").join("retry");
    assert!(
        bin.is_file(),
        "{} after cargo build --release",
        bin.display()
    );
    bin
}
