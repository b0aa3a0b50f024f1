#!/usr/bin/env bash
# Builds the release binary of `retry` for one target and prints its path (the last line of
# stdout; cargo's messages go to stderr). dist/release.sh builds every archive with it, and
# .ci/platforms the AArch64 binary whose integration suite runs under qemu-user.
#
#   x86_64-unknown-linux-gnu    native; static glibc (+crt-static), DT_RELR relocations
#   aarch64-unknown-linux-gnu   the same, linked by Debian's cross gcc (gcc-aarch64-linux-gnu
#                               and libc6-dev-arm64-cross, which hold the static glibc)
#   x86_64-apple-darwin,        linked by zig (`cargo zigbuild`): zig carries the macOS and
#   aarch64-apple-darwin,       FreeBSD libc stubs, so no SDK is needed. Dynamic, as every
#   x86_64-unknown-freebsd      program on those systems is (libSystem; FreeBSD's libc).
#   x86_64-pc-windows-gnu       retry.exe, linked by Debian's MinGW-w64 gcc
#                               (gcc-mingw-w64-x86-64)
#
# Every binary is stripped and built with --locked from Cargo.lock.
# Usage: dist/build.sh TARGET
#        dist/build.sh --check TARGET   whether this machine has the target's linker; builds nothing
# Exits 2 when the target's linker (or its rustup target) is missing, with one line saying what
# to install (the caller decides whether that is an error), 1 on any other failure. The linker
# is checked first, so that a missing one is told at once, before rustup downloads anything.
# cargo-zigbuild: https://github.com/rust-cross/cargo-zigbuild
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }
missing() { printf 'build.sh: %s\n' "$*" >&2; exit 2; }

check=no
if [ "${1:-}" = --check ]; then
    check=yes
    shift
fi
[ $# -eq 1 ] || die "usage: dist/build.sh [--check] TARGET"
TARGET=$1
host=$(rustc -vV | sed -n 's/^host: //p')

# With an explicit --target, RUSTFLAGS reach only the target's code, not build scripts and
# proc macros (which must stay dynamic); crt-static links glibc statically, and
# pack-relative-relocs stores the relative relocations as DT_RELR, which the start-up code of
# glibc 2.36 and later (linked in) applies faster, touching fewer pages.
static_linux="-C target-feature=+crt-static -C link-arg=-Wl,-z,pack-relative-relocs"
build=(cargo build)
flags=""
case $TARGET in
    x86_64-unknown-linux-gnu)
        [ "$host" = "$TARGET" ] || missing "$TARGET is built on an x86_64 Linux host only (host: $host)"
        flags=$static_linux
        ;;
    aarch64-unknown-linux-gnu)
        if [ "$host" != "$TARGET" ]; then
            command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 ||
                missing "no aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
            export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
        fi
        flags=$static_linux
        ;;
    *-apple-darwin | *-unknown-freebsd)
        if [[ $host != *-apple-darwin || $TARGET != *-apple-darwin ]]; then
            command -v cargo-zigbuild >/dev/null 2>&1 ||
                missing "no cargo-zigbuild for $TARGET (cargo install cargo-zigbuild; python3 -m pip install ziglang)"
            command -v zig >/dev/null 2>&1 || python3 -c 'import ziglang' >/dev/null 2>&1 ||
                missing "no zig for $TARGET (python3 -m pip install ziglang)"
            build=(cargo zigbuild)
        fi
        ;;
    x86_64-pc-windows-gnu)
        # rustc links it with x86_64-w64-mingw32-gcc, the target's default linker.
        command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 ||
            missing "no x86_64-w64-mingw32-gcc (apt-get install gcc-mingw-w64-x86-64)"
        ;;
    *) die "unknown target $TARGET" ;;
esac
if [ "$check" = yes ]; then exit 0; fi

if command -v rustup >/dev/null 2>&1; then
    rustup target list --installed | grep -qx "$TARGET" || rustup target add "$TARGET" >&2 ||
        missing "no standard library for $TARGET (rustup target add $TARGET failed)"
fi

RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags" CARGO_PROFILE_RELEASE_STRIP=symbols \
    "${build[@]}" --release --locked -p retry-tool --bin retry --target "$TARGET" >&2
exe=""
case $TARGET in *-windows-*) exe=.exe ;; esac
echo "${CARGO_TARGET_DIR:-target}/$TARGET/release/retry$exe"
