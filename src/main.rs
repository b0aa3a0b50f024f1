//! The `retry` binary: parse, run, and end with the status retry owes its caller.
//!
//! On Unix it starts without std's runtime set-up (`#![no_main]`), which costs start-up time
//! that `retry -- true` would pay on every call; [`retry::start`] does the part retry needs.

#![cfg_attr(all(unix, not(test)), no_main)]

#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(target_feature = "crt-static")
))]
mod math_symbols;

/// The C entry point: arguments from `argc` and `argv`, then [`retry::start::main`].
#[cfg(all(unix, not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: the C runtime calls `main` with `argc` pointers to NUL-terminated strings at
    // `argv`, which nothing changes while they are copied.
    let args = unsafe { retry::start::args(argc, argv) };
    retry::start::main(|| retry::run(args))
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    retry::finish(retry::run(std::env::args_os()))
}
