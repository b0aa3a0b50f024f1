//! The binary's own `exp`, `log`, `log10` and `pow` (the `libm` crate's, a port of musl's), so
//! that a dynamically linked glibc build does not load `libm.so.6` at every start for them.
//!
//! Declared by `main.rs` only, on `*-linux-gnu` without `crt-static`: the library and its tests
//! link as before, and the static build takes glibc's `libm.a`. Rust's `f64::exp`, `ln`,
//! `log10` and `powf` (in retry, the backoff and simulator crates, rand's distributions and
//! plotters) call these C symbols; with definitions in the executable the linker resolves them
//! here, `libm.so.6` is left with no symbol to give, and `--as-needed` (which rustc passes)
//! leaves it out of the binary's needs. Loading it and binding its symbols cost `retry -- true`
//! about 5 % of its start-up (docs/performance.md, "Start-up and memory"). None of the four is
//! on a plain run's path; each is within one unit in the last place of glibc's.

use std::ffi::c_double;

/// C's `exp`: e raised to `x`.
#[unsafe(no_mangle)]
extern "C" fn exp(x: c_double) -> c_double {
    libm::exp(x)
}

/// C's `log`: the natural logarithm of `x`.
#[unsafe(no_mangle)]
extern "C" fn log(x: c_double) -> c_double {
    libm::log(x)
}

/// C's `log10`: the base-10 logarithm of `x`.
#[unsafe(no_mangle)]
extern "C" fn log10(x: c_double) -> c_double {
    libm::log10(x)
}

/// C's `pow`: `x` raised to `y`.
#[unsafe(no_mangle)]
extern "C" fn pow(x: c_double, y: c_double) -> c_double {
    libm::pow(x, y)
}
