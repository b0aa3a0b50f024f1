//! The binary users run, for the tests of what a run shows on a terminal (issue 20 asks for
//! them through the binary users get): the one [`RELEASE_VARIABLE`] names (`.ci/run` builds
//! `target/release/retry` once and names it), else [`super::BINARY_VARIABLE`]'s (the AArch64
//! release binary under qemu-user), else the one cargo built for this test run
//! (`target/debug/retry` under `cargo test`, `target/release/retry` under
//! `cargo test --release`). No test starts cargo.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The test binary's variable that names the release build of retry to run where the tests
/// ask for the binary users run (`.ci/run`: `target/release/retry`); the other tests still
/// run [`super::bin`].
pub const RELEASE_VARIABLE: &str = "RETRY_TESTS_RELEASE_BINARY";

/// The binary users run: [`RELEASE_VARIABLE`]'s, else [`super::BINARY_VARIABLE`]'s, else the
/// one cargo built for this test run (a debug build under plain `cargo test`). A relative path
/// is taken from the directory the tests run in (the package's root).
pub fn release_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os(RELEASE_VARIABLE) {
        Some(path) => std::path::absolute(PathBuf::from(path)).expect("an absolute path"),
        None => super::bin().to_path_buf(),
    })
}
