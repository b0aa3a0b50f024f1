//! Build script: links libgcc's unwinder statically into dynamic glibc builds, so that
//! `retry` does not load `libgcc_s.so.1` at every start.
//!
//! Rust's std on `*-linux-gnu` takes its unwinder (`_Unwind_*`) from `libgcc_s.so.1` unless the
//! build is static (`+crt-static`, which uses `libgcc_eh.a`). Loading that library costs
//! `retry -- true` about a tenth of its run time (its constructor, `__cpu_indicator_init`, runs
//! `cpuid` a dozen times, and each `cpuid` traps to the hypervisor in a virtual machine).
//! Linking `libgcc_eh.a` first (the archive `gcc -static-libgcc` uses) resolves those symbols
//! inside the binary, and the linker's `--as-needed` then drops `libgcc_s.so.1`. Done only when
//! the C compiler that links (`$CC`, else `cc`) has `libgcc_eh.a`, and not when
//! cross-compiling; otherwise nothing changes. See "Start-up and memory" in docs/performance.md.
//!
//! The same native dynamic glibc builds link the binary (not the tests) as a position-dependent
//! executable (`-no-pie`): a PIE's 9,000 relative relocations are applied at every start, and
//! the 180 KiB of `.data.rel.ro` they point into (vtables, panic locations, tables of `&str`)
//! are then copied page by page; a fixed address leaves those pages as the file has them. It
//! costs the binary's own address randomisation (the libraries, stack and heap keep theirs).
//! With `RETRY_PIE=1` in the build's environment it stays a PIE, whose relative relocations
//! are then packed (`-z pack-relative-relocs`, DT_RELR) where glibc applies them.
//!
//! It also sets the cfg `linux_native` when building for Linux without the `portable` feature:
//! the code that supervises with Linux's own interfaces (signalfd, pidfd, the vfork clone, the
//! child subreaper and `/proc`) is behind it, and the portable code that macOS and FreeBSD use
//! is behind `not(linux_native)` (see docs/platforms.md).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=RETRY_PIE");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    println!("cargo::rustc-check-cfg=cfg(linux_native)");
    if var("CARGO_CFG_TARGET_OS") == "linux" && std::env::var_os("CARGO_FEATURE_PORTABLE").is_none()
    {
        println!("cargo::rustc-cfg=linux_native");
    }
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|feature| feature == "crt-static");
    let native = var("TARGET") == var("HOST");
    let dynamic_glibc = var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && !crt_static
        && native;
    if dynamic_glibc && has_libgcc_eh() {
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
    // After rustc's own `-pie`, so the last one given wins.
    if dynamic_glibc && var("RETRY_PIE") != "1" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    } else if dynamic_glibc && glibc_applies_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C compiler can find `libgcc_eh.a` (`-print-file-name` echoes the bare name back
/// when it cannot).
fn has_libgcc_eh() -> bool {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .is_some_and(|path| Path::new(path.trim()).is_absolute() && Path::new(path.trim()).exists())
}

/// Whether the C library the build links against applies DT_RELR relocations (glibc 2.36 and
/// later): its `libc.so.6` defines the symbol version `GLIBC_ABI_DT_RELR`, which a binary
/// linked with `-z pack-relative-relocs` then requires, so that an older glibc refuses to load
/// it rather than running it with its pointers unrelocated.
fn glibc_applies_relr() -> bool {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    Command::new(cc)
        .arg("-print-file-name=libc.so.6")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|path| std::fs::read(path.trim()).ok())
        .is_some_and(|bytes| {
            let version = b"GLIBC_ABI_DT_RELR";
            bytes.windows(version.len()).any(|w| w == version)
        })
}
