#!/usr/bin/env bash
# Builds the release files of retry (crates.io package `retry-tool`, command `retry`) from a
# checkout, into target/dist/ (git-ignored):
#
#   retry-tool-VERSION-x86_64-unknown-linux-gnu.tar.gz         the archive, laid out as ripgrep's:
#       retry-tool-VERSION-x86_64-unknown-linux-gnu/
#           retry                 statically linked (glibc, +crt-static, DT_RELR relocations)
#           doc/retry.1           man page
#           complete/             retry.bash, _retry (zsh), retry.fish, retry.elv, _retry.ps1
#           README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE
#   retry-tool-VERSION-x86_64-unknown-linux-gnu.tar.gz.sha256
#   retry-tool_VERSION-1_amd64.deb                              cargo-deb, from the same binary
#   retry-tool_VERSION-1_amd64.deb.sha256
#
# Usage: dist/release.sh
#
# Needs rustup's (or the default) x86_64-unknown-linux-gnu target with glibc's static libraries
# (libc6-dev, as for any Rust build on Debian), tar, gzip, sha256sum, and cargo-deb, which it
# installs with `cargo install cargo-deb --locked` when missing. The archive and the .deb carry
# the time of the last commit (SOURCE_DATE_EPOCH, when unset), so two runs on the same commit
# and toolchain give the same bytes. It refuses a version without a CHANGELOG.md section; on a
# tag (GITHUB_REF_TYPE=tag in the release workflow), a tag other than vVERSION and an undated
# section. dist/test-release.sh checks what this script made.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGE=retry-tool
TARGET=x86_64-unknown-linux-gnu
OUT=target/dist

step() { printf '\n== %s\n' "$*"; }
die() { printf 'release.sh: %s\n' "$*" >&2; exit 1; }

# `cargo pkgid` prints e.g. path+file:///src/retry#retry-tool@0.1.0.
VERSION=$(cargo pkgid -p "$PACKAGE" | sed 's/.*[#@]//')
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "cannot read the version of $PACKAGE: '$VERSION'"
NAME="$PACKAGE-$VERSION-$TARGET"

# A release tag (the workflow passes GITHUB_REF_NAME) must name this version.
if [ "${GITHUB_REF_TYPE:-}" = tag ] && [ "${GITHUB_REF_NAME:-}" != "v$VERSION" ]; then
    die "tag ${GITHUB_REF_NAME:-} does not match the version in Cargo.toml, $VERSION (expected v$VERSION)"
fi
grep -q "^## \[$VERSION\]" CHANGELOG.md || die "CHANGELOG.md has no section '## [$VERSION]'"
if [ "${GITHUB_REF_TYPE:-}" = tag ]; then
    grep -Eq "^## \[$VERSION\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" CHANGELOG.md ||
        die "CHANGELOG.md's section '## [$VERSION]' has no date (## [$VERSION] - YYYY-MM-DD)"
fi

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

step "target $TARGET"
if command -v rustup >/dev/null 2>&1; then
    rustup target list --installed | grep -qx "$TARGET" || rustup target add "$TARGET"
else
    host=$(rustc -vV | sed -n 's/^host: //p')
    [ "$host" = "$TARGET" ] || die "no rustup, and rustc's host is $host, not $TARGET"
fi

step "cargo build --release --target $TARGET (static, stripped)"
# With an explicit --target, RUSTFLAGS reach only the target's code, not build scripts and
# proc macros (which must stay dynamic); crt-static links glibc statically (a static PIE), and
# pack-relative-relocs stores its 8,700 relative relocations as DT_RELR, which the start-up
# code of glibc 2.36 and later (linked in) applies faster, touching fewer pages. Stripped here, so
# that the archive and the .deb hold the very same file (cargo deb runs with --no-strip).
RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static -C link-arg=-Wl,-z,pack-relative-relocs" \
    CARGO_PROFILE_RELEASE_STRIP=symbols \
    cargo build --release --locked -p "$PACKAGE" --bin retry --target "$TARGET"
BIN="target/$TARGET/release/retry"

# ldd prints "statically linked" (static-pie) or "not a dynamic executable" (static) and, for
# a static binary, exits 1 in the second case.
linkage=$(ldd "$BIN" 2>&1 || true)
case $linkage in
    *"statically linked"* | *"not a dynamic executable"*) ;;
    *) die "$BIN is not statically linked: $linkage" ;;
esac
"$BIN" -- true || die "$BIN -- true failed"

step "man page and completions"
# The committed files are what goes out (the .deb takes them through Cargo.toml's assets):
# check that they are what this binary generates.
generated=(man:man/retry.1 bash:completions/retry.bash zsh:completions/_retry
    fish:completions/retry.fish elvish:completions/retry.elv powershell:completions/_retry.ps1)
for pair in "${generated[@]}"; do
    what=${pair%%:*} file=${pair#*:}
    "$BIN" --generate "$what" | cmp -s - "$file" ||
        die "$file is not what 'retry --generate $what' prints; run RETRY_REGENERATE=1 cargo test generated"
done

step "archive $NAME.tar.gz"
mkdir -p "$OUT"
rm -rf "${OUT:?}/$NAME" "$OUT/$NAME.tar.gz" "$OUT/$NAME.tar.gz.sha256"
stage="$OUT/$NAME"
mkdir -p "$stage/doc" "$stage/complete"
install -m 755 "$BIN" "$stage/retry"
install -m 644 man/retry.1 "$stage/doc/retry.1"
for pair in "${generated[@]}"; do
    file=${pair#*:}
    case $file in completions/*) install -m 644 "$file" "$stage/complete/" ;; esac
done
install -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$OUT" -cf - "$NAME" | gzip -9 -n > "$OUT/$NAME.tar.gz"
rm -rf "${stage:?}"
(cd "$OUT" && sha256sum "$NAME.tar.gz" > "$NAME.tar.gz.sha256")

step "Debian package"
if ! cargo deb --version >/dev/null 2>&1; then
    cargo install cargo-deb --locked
fi
deb=$(cargo deb -p "$PACKAGE" --no-build --no-strip --target "$TARGET" --output "$OUT/" -q)
# cargo deb prints the path of the package it wrote.
deb=${deb##*$'\n'}
[ -f "$deb" ] || die "cargo deb did not report the package it wrote: '$deb'"
debname=$(basename "$deb")
(cd "$OUT" && sha256sum "$debname" > "$debname.sha256")

step "made, in $OUT/"
(cd "$OUT" && ls -l "$NAME.tar.gz" "$NAME.tar.gz.sha256" "$debname" "$debname.sha256" && cat "$NAME.tar.gz.sha256" "$debname.sha256")
