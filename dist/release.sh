#!/usr/bin/env bash
# Builds the release files of retry (crates.io package `retry-tool`, command `retry`) from a
# checkout, into target/dist/ (git-ignored), one archive per target, laid out as ripgrep's:
#
#   retry-tool-VERSION-TARGET.tar.gz
#       retry-tool-VERSION-TARGET/
#           retry                 the binary (dist/build.sh TARGET)
#           doc/retry.1           man page
#           complete/             retry.bash, _retry (zsh), retry.fish, retry.elv, _retry.ps1
#           README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE
#           docs/                 the guide the README links to (*.md and its charts)
#   retry-tool-VERSION-TARGET.tar.gz.sha256
#
# for the targets (docs/platforms.md says what is tested on each):
#   x86_64-unknown-linux-gnu    static (glibc, +crt-static, DT_RELR relocations); always
#   aarch64-unknown-linux-gnu   static, with Debian's cross gcc (gcc-aarch64-linux-gnu and
#                               libc6-dev-arm64-cross, which .ci/platforms installs), else
#                               skipped with a note as the optional targets below; run under
#                               qemu-user (`-- true`) when qemu-aarch64(-static) is installed
#   x86_64-apple-darwin         when cargo-zigbuild and zig are present (linked by zig),
#   aarch64-apple-darwin        else skipped with a note; RELEASE_REQUIRE_ALL=1 (the release
#   x86_64-unknown-freebsd      workflow) makes a missing linker an error
#   x86_64-pc-windows-gnu       when Debian's MinGW-w64 gcc is present (gcc-mingw-w64-x86-64),
#                               else skipped as the three above; packed as a .zip (below)
#
# and for Windows, by dist/windows-zip.sh, a .zip of the same layout (retry.exe; complete/ holds
# the PowerShell completion alone, and there is no doc/: no man page on Windows):
#   retry-tool-VERSION-x86_64-pc-windows-gnu.zip, and its .zip.sha256
#
# and the Debian package, from the same static x86_64 binary as the archive:
#   retry-tool_VERSION-1_amd64.deb                              cargo-deb
#       /usr/bin/retry, man page, bash, zsh and fish completions, and in /usr/share/doc/retry-tool/
#       copyright (DEP-5), changelog.Debian.gz, changelog.gz, README.md.gz; lintian-clean
#   retry-tool_VERSION-1_amd64.deb.sha256
#
# Usage: [DEB_MAINTAINER='Name <address>'] [RELEASE_REQUIRE_ALL=1] dist/release.sh [--check]
#
# Each target's linker is checked first (dist/build.sh --check): a missing one is a note, and
# that target is skipped (the native x86_64 one is needed: an error), or with
# RELEASE_REQUIRE_ALL=1 an error, at once rather than after the first build. --check does that
# alone: says which targets this machine can build, and what the others lack, and stops.
#
# DEB_MAINTAINER is the .deb's Maintainer (and the signature of its changelog.Debian.gz): a name
# and an e-mail address in angle brackets, as Debian policy 5.6.2 asks. The project has no
# public address yet, so the default is the placeholder below, on the reserved domain .invalid
# (RFC 2606), which lintian accepts but which receives no mail, as policy 3.3 asks a
# maintainer's address to: local builds use it; a tag build (the release workflow passes the
# repository variable DEB_MAINTAINER) refuses it.
#
# Needs rustup's (or the default) targets, which it adds when missing, glibc's static libraries
# (libc6-dev, as for any Rust build on Debian; libc6-dev-arm64-cross and gcc-aarch64-linux-gnu
# for AArch64), tar, gzip, sha256sum, python3 (its zipfile packs the .zip), dpkg-deb, and cargo-deb
# 3.8.0 (CARGO_DEB_VERSION below), which it installs with `cargo install cargo-deb --version
# =3.8.0 --locked` when it is missing or of another version. The archive and the .deb carry the
# time of the last commit (SOURCE_DATE_EPOCH, when unset), so two runs on the same commit and
# toolchain give the same bytes. It refuses a version without a CHANGELOG.md section; on a tag
# (GITHUB_REF_TYPE=tag in the release workflow), a tag other than vVERSION, an undated section
# and the placeholder Maintainer. dist/test-release.sh checks what this script made, lintian
# included.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGE=retry-tool
# The native target: the .deb's, and the binary that checks the man page and completions.
TARGET=x86_64-unknown-linux-gnu
# Built when their linkers are present (see above).
OPTIONAL_TARGETS=(x86_64-apple-darwin aarch64-apple-darwin x86_64-unknown-freebsd
    x86_64-pc-windows-gnu)
# Packed as a .zip (dist/windows-zip.sh), not as a .tar.gz.
WINDOWS_TARGET=x86_64-pc-windows-gnu
OUT=target/dist
# The .deb's documentation (changelogs, README), generated here; Cargo.toml's assets take them.
DEBDOC=target/deb-doc
# The cargo-deb whose output the Debian step below expects (and patches: see there).
CARGO_DEB_VERSION=3.8.0
DEB_MAINTAINER_PLACEHOLDER='retry-tool developers <no-address-yet@retry-tool.invalid>'

step() { printf '\n== %s\n' "$*"; }
die() { printf 'release.sh: %s\n' "$*" >&2; exit 1; }

check_only=no
case $# in
    0) ;;
    1) [ "$1" = --check ] || die "usage: dist/release.sh [--check]"; check_only=yes ;;
    *) die "usage: dist/release.sh [--check]" ;;
esac

# `cargo pkgid` reads the version from Cargo.lock, which still names the old one after a bump of
# Cargo.toml's until cargo updates it: the lock must be current (the build below is --locked).
cargo metadata --locked --format-version 1 >/dev/null ||
    die "Cargo.lock does not match Cargo.toml (after a version bump, run: cargo update --workspace)"
# `cargo pkgid` prints e.g. path+file:///src/retry#retry-tool@0.1.0.
VERSION=$(cargo pkgid -p "$PACKAGE" | sed 's/.*[#@]//')
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "cannot read the version of $PACKAGE: '$VERSION'"
# Debian's version: a semver pre-release (1.0.0-rc.1) sorts before its release with `~`
# (1.0.0~rc.1); revision 1.
DEB_VERSION="${VERSION/-/\~}-1"

# A release tag (the workflow passes GITHUB_REF_NAME) must name this version.
if [ "${GITHUB_REF_TYPE:-}" = tag ] && [ "${GITHUB_REF_NAME:-}" != "v$VERSION" ]; then
    die "tag ${GITHUB_REF_NAME:-} does not match the version in Cargo.toml, $VERSION (expected v$VERSION)"
fi
grep -q "^## \[$VERSION\]" CHANGELOG.md || die "CHANGELOG.md has no section '## [$VERSION]'"
if grep -Eq "^## \[$VERSION\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" CHANGELOG.md; then
    dated=yes
else
    dated=no
fi
if [ "${GITHUB_REF_TYPE:-}" = tag ] && [ "$dated" = no ]; then
    die "CHANGELOG.md's section '## [$VERSION]' has no date (## [$VERSION] - YYYY-MM-DD)"
fi

DEB_MAINTAINER=${DEB_MAINTAINER:-$DEB_MAINTAINER_PLACEHOLDER}
# A name, then one address in angle brackets; nothing after it.
maintainer_form='^[^<>@,]*[^<>@,[:space:]][[:space:]]+<[^<>@[:space:]]+@[^<>@[:space:]]+\.[^<>@[:space:]]+>$'
[[ $DEB_MAINTAINER =~ $maintainer_form ]] ||
    die "DEB_MAINTAINER is not 'Name <address>': '$DEB_MAINTAINER'"
if [ "${GITHUB_REF_TYPE:-}" = tag ] && [[ $DEB_MAINTAINER == *.invalid'>' ]]; then
    die "the .deb's Maintainer is '$DEB_MAINTAINER', which receives no mail; set the repository variable DEB_MAINTAINER to 'Name <address>'"
fi

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

# The static Linux binary at $1 (for $2): ldd calls it static, and it runs `-- true`, under
# qemu-user when it is for AArch64.
check_linux_binary() {
    local bin=$1 target=$2 linkage qemu
    # ldd prints "statically linked" (static-pie) or "not a dynamic executable" (static) and,
    # for a static binary, exits 1 in the second case.
    linkage=$(ldd "$bin" 2>&1 || true)
    case $linkage in
        *"statically linked"* | *"not a dynamic executable"*) ;;
        *) die "$bin is not statically linked: $linkage" ;;
    esac
    case $target in
        x86_64-*) "$bin" -- true || die "$bin -- true failed" ;;
        aarch64-*)
            qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
            if [ -n "$qemu" ]; then
                "$qemu" "$bin" -- true || die "$qemu $bin -- true failed"
            else
                echo "(no qemu-aarch64: $bin not run)"
            fi
            ;;
    esac
}

# What this machine can build: every target but the native one may be skipped, with a note
# (each linker is checked before the first build, so that a missing one is told at once).
step "the targets this machine can build"
buildable=()
for target in "$TARGET" aarch64-unknown-linux-gnu "${OPTIONAL_TARGETS[@]}"; do
    status=0
    lacks=$(dist/build.sh --check "$target" 2>&1 >/dev/null) || status=$?
    lacks=${lacks##*$'\n'}
    lacks=${lacks#build.sh: }
    if [ "$status" -eq 0 ]; then
        echo "$target"
        buildable+=("$target")
    elif [ "$status" -eq 2 ] && [ "$target" != "$TARGET" ] && [ "${RELEASE_REQUIRE_ALL:-}" != 1 ]; then
        echo "$target: skipped, $lacks"
    else
        die "cannot build $target: $lacks"
    fi
done
if [ "$check_only" = yes ]; then exit 0; fi

targets=()
windows_exe=""
for target in "${buildable[@]}"; do
    step "cargo build --release --target $target (stripped)"
    status=0
    bin=$(dist/build.sh "$target") || status=$?
    if [ "$status" -eq 2 ] && [ "$target" != "$TARGET" ] && [ "${RELEASE_REQUIRE_ALL:-}" != 1 ]; then
        echo "(skipped: $target's linker or standard library is missing)"
        continue
    fi
    [ "$status" -eq 0 ] || die "dist/build.sh $target failed"
    case $target in *-linux-*) check_linux_binary "$bin" "$target" ;; esac
    if [ "$target" = "$WINDOWS_TARGET" ]; then
        windows_exe=$bin
        continue
    fi
    [[ " ${targets[*]} " == *" $target "* ]] || targets+=("$target")
done
TARGET_DIR=${CARGO_TARGET_DIR:-target}
BIN="$TARGET_DIR/$TARGET/release/retry"

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

mkdir -p "$OUT"
for target in "${targets[@]}"; do
    name="$PACKAGE-$VERSION-$target"
    step "archive $name.tar.gz"
    rm -rf "${OUT:?}/$name" "$OUT/$name.tar.gz" "$OUT/$name.tar.gz.sha256"
    stage="$OUT/$name"
    mkdir -p "$stage/doc" "$stage/complete" "$stage/docs"
    install -m 755 "$TARGET_DIR/$target/release/retry" "$stage/retry"
    install -m 644 man/retry.1 "$stage/doc/retry.1"
    for pair in "${generated[@]}"; do
        file=${pair#*:}
        case $file in completions/*) install -m 644 "$file" "$stage/complete/" ;; esac
    done
    install -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/"
    # The README's links into the guide work in the unpacked archive too.
    install -m 644 docs/*.md docs/*.svg "$stage/docs/"
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
        -C "$OUT" -cf - "$name" | gzip -9 -n > "$OUT/$name.tar.gz"
    rm -rf "${stage:?}"
    (cd "$OUT" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
done
windows_zip=""
if [ -n "$windows_exe" ]; then
    step "archive $PACKAGE-$VERSION-$WINDOWS_TARGET.zip"
    # The PowerShell completion in it is the committed file checked above against what the
    # native binary generates (retry.exe generates the same: the clap definitions are one).
    windows_zip=$(dist/windows-zip.sh "$VERSION" "$windows_exe" "$OUT") ||
        die "dist/windows-zip.sh failed"
fi

step "Debian package $DEB_VERSION"
# What Debian expects in /usr/share/doc/retry-tool/ beside the copyright (dist/debian/copyright):
# the upstream changelog as changelog.gz, a Debian changelog as changelog.Debian.gz, and files
# over 4 kB compressed (policy 12.3, 12.7), all with gzip -9 (-n: no name or time inside).
rm -rf "${DEBDOC:?}"
mkdir -p "$DEBDOC"
gzip -9n < CHANGELOG.md > "$DEBDOC/changelog.gz"
gzip -9n < README.md > "$DEBDOC/README.md.gz"
# One entry, for this version, dated by SOURCE_DATE_EPOCH; UNRELEASED until CHANGELOG.md's
# section has its date (which a tag build requires).
if [ "$dated" = yes ]; then distribution=stable; else distribution=UNRELEASED; fi
{
    printf '%s (%s) %s; urgency=medium\n\n' "$PACKAGE" "$DEB_VERSION" "$distribution"
    printf '  * Upstream release %s, packaged by dist/release.sh. The changes are\n' "$VERSION"
    printf '    in /usr/share/doc/%s/changelog.gz.\n\n' "$PACKAGE"
    printf ' -- %s  %s\n' "$DEB_MAINTAINER" "$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$DEBDOC/changelog.Debian.gz"

if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $CARGO_DEB_VERSION" ]; then
    cargo install cargo-deb --version "=$CARGO_DEB_VERSION" --locked
fi
deb=$(cargo deb -p "$PACKAGE" --no-build --no-strip --target "$TARGET" --output "$OUT/" -q \
    --deb-version "$DEB_VERSION" --maintainer "$DEB_MAINTAINER")
# cargo deb prints the path of the package it wrote.
deb=${deb##*$'\n'}
[ -f "$deb" ] || die "cargo deb did not report the package it wrote: '$deb'"
debname=$(basename "$deb")

# What cargo-deb cannot be told, done on its package, rebuilt with dpkg-deb:
# - it writes `Depends:` even when empty (cargo-deb 3.8.0, PackageConfig::generate_control),
#   which lintian calls empty-field: the static binary depends on nothing, so the line goes;
# - Built-Using names the glibc linked into the binary, as policy 7.8 asks of static linking
#   with a library whose licence (LGPL) requires its source to be available;
# - md5sums, which dpkg --verify and debsums read, and cargo-deb does not write.
# dpkg-deb clamps the file times to SOURCE_DATE_EPOCH and dates the ar members by it; one xz
# thread, since xz's multi-threaded output differs from its single-threaded one.
repack="$OUT/deb-repack"
rm -rf "${repack:?}"
dpkg-deb -R "$deb" "$repack"
# shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
glibc=$(dpkg-query -W -f='${source:Package} (= ${source:Version})' libc6-dev:amd64) ||
    die "cannot read the version of libc6-dev, whose libc.a is linked into the binary"
sed -i -e '/^Depends:[[:space:]]*$/d' -e "/^Description:/i Built-Using: $glibc" "$repack/DEBIAN/control"
(cd "$repack" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 md5sum) > "$repack/DEBIAN/md5sums"
chmod 644 "$repack/DEBIAN/md5sums"
dpkg-deb --root-owner-group -Zxz --threads-max=1 --build "$repack" "$deb" >/dev/null
rm -rf "${repack:?}"
(cd "$OUT" && sha256sum "$debname" > "$debname.sha256")

step "made, in $OUT/"
(cd "$OUT" && for target in "${targets[@]}"; do
    ls -l "$PACKAGE-$VERSION-$target.tar.gz" "$PACKAGE-$VERSION-$target.tar.gz.sha256"
    cat "$PACKAGE-$VERSION-$target.tar.gz.sha256"
done && if [ -n "$windows_zip" ]; then
    ls -l "$(basename "$windows_zip")" "$(basename "$windows_zip").sha256"
    cat "$(basename "$windows_zip").sha256"
fi && ls -l "$debname" "$debname.sha256" && cat "$debname.sha256")
