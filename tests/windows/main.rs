//! The Windows suite: retry.exe, built for x86_64-pc-windows-gnu, driven through probe.exe
//! (tests/windows/probe) and `cmd /C`, under Wine on Linux (`.ci/windows test`) or natively on
//! Windows. A module per concern: exit statuses and launches ([`statuses`]), the clocks and
//! what a stop ends ([`stopping`]), the features around an attempt ([`features`]), and the
//! adversarial pass of issue 33 ([`adversarial`]).
//!
//! Every test is `#[ignore]`d: a plain `cargo test` has neither Wine nor the .exe files, and
//! lists them as ignored. `.ci/windows test` builds what they need and runs them with
//! `-- --ignored`, naming retry.exe, probe.exe and the Wine loader in `RETRY_WINE_EXE`,
//! `RETRY_WINE_PROBE` and `RETRY_WINE`, with `WINEPREFIX` a prefix that has the test-only
//! bcryptprimitives.dll (tests/windows/shim). Run with `--ignored` but without them, a test is
//! skipped with one line (`tests/common/tools.rs`), or fails under
//! `RETRY_TESTS_REQUIRE_TOOLS=1`.

mod bench;
#[cfg(unix)]
#[path = "../common/tools.rs"]
mod tools;

mod adversarial;
mod adversarial_hook;
mod adversarial_lock;
mod adversarial_output;
mod adversarial_stdio;
mod features;
mod statuses;
mod stopping;
mod waits;
