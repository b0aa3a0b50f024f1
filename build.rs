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
//! It also sets the cfg `linux_native` when building for Linux without the `portable` feature:
//! the code that supervises with Linux's own interfaces (signalfd, pidfd, the vfork clone, the
//! child subreaper and `/proc`) is behind it, and the portable code that macOS and FreeBSD use
//! is behind `not(linux_native)` (see docs/platforms.md).
//!
//! And it hands the linker `link/startup.order`, the functions a plain run executes, so that
//! they are laid out first and together in `.text`: the kernel maps a binary's code in 64 KiB
//! windows as it is touched (fault-around), and with the start-up path spread over the whole
//! `.text` a `retry -- true` mapped about half of it. Done only where the linker is known to
//! be LLD (`--symbol-ordering-file`): a native `x86_64-unknown-linux-gnu` build with rustc 1.90
//! or later (LLD by default) and no linker chosen in the config or `RUSTFLAGS`; never when
//! `RETRY_NO_LINK_ORDER` is set. A stale list costs memory, never correctness: tests/cli's
//! `startup_order` tests say when it needs `RETRY_REGENERATE=1 cargo test startup_order`.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
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
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && !crt_static
        && native
        && has_libgcc_eh()
    {
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
    println!("cargo:rerun-if-changed=link/startup.order");
    println!("cargo:rerun-if-env-changed=RETRY_NO_LINK_ORDER");
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/startup.order");
    if var("TARGET") == "x86_64-unknown-linux-gnu"
        && native
        && order.is_file()
        && linker_is_default_lld(&var)
    {
        println!(
            "cargo:rustc-link-arg-bin=retry=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // Functions of the list that a change renamed or removed are not an error.
        println!("cargo:rustc-link-arg-bin=retry=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether rustc links with its own LLD: the default for `x86_64-unknown-linux-gnu` from rustc
/// 1.90, unless a linker is configured (`RUSTC_LINKER`, which cargo sets from
/// `target.<triple>.linker`) or `RUSTFLAGS` say anything of the linker, or
/// `RETRY_NO_LINK_ORDER` is set.
fn linker_is_default_lld(var: &dyn Fn(&str) -> String) -> bool {
    if std::env::var_os("RETRY_NO_LINK_ORDER").is_some()
        || std::env::var_os("RUSTC_LINKER").is_some()
    {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|word| flags.contains(word))
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = String::from_utf8_lossy(&out.stdout);
    let mut numbers = version
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split(['.', '-'])
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (1, 90)
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
