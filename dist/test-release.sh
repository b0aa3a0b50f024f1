#!/usr/bin/env bash
# Checks what dist/release.sh made in target/dist/ (run that first), as a user would meet it:
#
# - the .sha256 files match; each archive holds exactly one directory named as the archive, with
#   the binary, doc/retry.1, complete/ (five shells), README, CHANGELOG, both licences and the
#   guide (docs/), and `file` names the target's format and architecture; the x86_64 and
#   AArch64 Linux archives must be there, the macOS and FreeBSD ones are checked when present;
# - the Windows .zip, when present: its .sha256, exactly retry.exe, complete/_retry.ps1 (what
#   `retry --generate powershell` prints), README, CHANGELOG, both licences and the guide under
#   one directory named as the archive, no name with `..`, and `file` calls retry.exe an x86-64
#   Windows console program (PE32+);
# - unpacked in a temporary directory, `./retry -- true` succeeds, the version and a retried
#   failure's status are right, and `ldd` calls the binary static; the AArch64 binary the same
#   under qemu-user (qemu-aarch64-static);
# - the .deb's control fields (name, version, amd64, a Maintainer with an address, no Depends,
#   Built-Using glibc, Conflicts and Replaces `retry`) and md5sums, and, unpacked into a scratch
#   root with `dpkg -x`, every file where it belongs with its mode: /usr/bin/retry (the same
#   bytes as the archive's binary), the man page in /usr/share/man/man1/, the bash, zsh and fish
#   completions in their vendor directories, in /usr/share/doc/retry-tool/ the DEP-5 copyright
#   (both licences; parsed by python3-debian), changelog.Debian.gz (this version, the commit's
#   date, the Maintainer), changelog.gz and README.md.gz, and the lintian overrides; nothing else;
# - lintian reports no error and no warning on the .deb (its info tags are shown);
# - `man -l` renders both copies of the page, groff finds no mistake in it; bash loads the
#   completion;
# - .github/workflows/release.yml passes actionlint, and dist/*.sh pass shellcheck.
#
# Usage: dist/test-release.sh
# Installs what a fresh Debian machine lacks: man-db, shellcheck, lintian, dpkg-dev,
# python3-debian, file and qemu-user-static (apt-get), actionlint (dist/actionlint.sh: pip, in a virtual environment under ~/.cache/retry-tool/).
# The `bash -c '...' _ ARGS` checks expand their arguments inside, on purpose.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root_dir=$PWD

PACKAGE=retry-tool
TARGET=x86_64-unknown-linux-gnu
OUT=target/dist

failures=0
step() { printf '\n== %s\n' "$*"; }
ok() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*" >&2; failures=$((failures + 1)); }
die() { printf 'test-release.sh: %s\n' "$*" >&2; exit 1; }
# check DESCRIPTION COMMAND...: runs COMMAND, reports it.
check() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}

VERSION=$(cargo pkgid -p "$PACKAGE" | sed 's/.*[#@]//')
NAME="$PACKAGE-$VERSION-$TARGET"
ARCHIVE="$OUT/$NAME.tar.gz"
DEB_VERSION="${VERSION/-/\~}-1" # as dist/release.sh makes it
DEB="$OUT/${PACKAGE}_${DEB_VERSION}_amd64.deb"
AARCH64_ARCHIVE="$OUT/$PACKAGE-$VERSION-aarch64-unknown-linux-gnu.tar.gz"
for f in "$ARCHIVE" "$ARCHIVE.sha256" "$AARCH64_ARCHIVE" "$AARCH64_ARCHIVE.sha256" "$DEB" "$DEB.sha256"; do
    [ -f "$f" ] || die "$f is missing: run dist/release.sh first"
done

missing=()
command -v man >/dev/null 2>&1 || missing+=(man-db)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v lintian >/dev/null 2>&1 || missing+=(lintian)
command -v dpkg-parsechangelog >/dev/null 2>&1 || missing+=(dpkg-dev)
# Debian's python3 (not a python3 earlier on PATH) with python-debian's DEP-5 parser.
/usr/bin/python3 -c 'import debian.copyright' >/dev/null 2>&1 || missing+=(python3-debian)
command -v file >/dev/null 2>&1 || missing+=(file)
command -v qemu-aarch64-static >/dev/null 2>&1 || missing+=(qemu-user-static)
if [ "${#missing[@]}" -gt 0 ]; then
    step "installing ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" </dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every archive of this version that dist/release.sh made.
archives=()
for f in "$OUT/$PACKAGE-$VERSION-"*.tar.gz; do archives+=("$f"); done
# The Windows archive (dist/windows-zip.sh), when dist/release.sh made it.
WINDOWS_ZIP="$OUT/$PACKAGE-$VERSION-x86_64-pc-windows-gnu.zip"

step "checksums"
for f in "${archives[@]}"; do
    check "$(basename "$f").sha256" \
        bash -c 'cd "$1" && sha256sum --quiet -c "$2.sha256"' _ "$OUT" "$(basename "$f")"
done
if [ -f "$WINDOWS_ZIP" ]; then
    check "$(basename "$WINDOWS_ZIP").sha256" \
        bash -c 'cd "$1" && sha256sum --quiet -c "$2.sha256"' _ "$OUT" "$(basename "$WINDOWS_ZIP")"
fi
check "$(basename "$DEB").sha256" \
    bash -c 'cd "$1" && sha256sum --quiet -c "$2.sha256"' _ "$OUT" "$(basename "$DEB")"

# What `file` says of each target's binary.
file_says() {
    case $1 in
        x86_64-unknown-linux-gnu) echo 'ELF 64-bit LSB .*x86-64.*(statically linked|static-pie)' ;;
        aarch64-unknown-linux-gnu) echo 'ELF 64-bit LSB .*ARM aarch64.*(statically linked|static-pie)' ;;
        x86_64-apple-darwin) echo 'Mach-O 64-bit x86_64 executable' ;;
        aarch64-apple-darwin) echo 'Mach-O 64-bit arm64 executable' ;;
        x86_64-unknown-freebsd) echo 'ELF 64-bit LSB .*x86-64.*FreeBSD' ;;
        *) echo 'an unknown target' ;;
    esac
}

for archive in "${archives[@]}"; do
    name=$(basename "$archive" .tar.gz)
    target=${name#"$PACKAGE-$VERSION-"}
    step "archive $name.tar.gz"
    expected_archive=$( (printf '%s\n' \
        "$name/" "$name/CHANGELOG.md" "$name/LICENSE-APACHE" "$name/LICENSE-MIT" "$name/README.md" \
        "$name/complete/" "$name/complete/_retry" "$name/complete/_retry.ps1" \
        "$name/complete/retry.bash" "$name/complete/retry.elv" "$name/complete/retry.fish" \
        "$name/doc/" "$name/doc/retry.1" "$name/docs/" "$name/retry"
        for doc in docs/*.md docs/*.svg; do echo "$name/$doc"; done) | sort)
    listed=$(tar -tzf "$archive" | sort)
    if [ "$listed" = "$expected_archive" ]; then
        ok "the archive holds exactly the expected files, under $name/"
    else
        fail "the archive's files differ from the expected list:"
        diff <(echo "$expected_archive") <(echo "$listed") >&2 || true
    fi
    tar -xzf "$archive" -C "$work"
    says=$(file -b "$work/$name/retry")
    check "file: $says" bash -c '[[ $1 =~ $2 ]]' _ "$says" "$(file_says "$target")"
    check "the README's links into docs/ lead to files in the archive" bash -c '
        cd "$1" && for link in $(grep -o "](docs/[^)#]*" README.md | cut -c3-); do
            [ -f "$link" ] || { echo "missing: $link" >&2; exit 1; }; done' _ "$work/$name"
done

if [ -f "$WINDOWS_ZIP" ]; then
    name=$(basename "$WINDOWS_ZIP" .zip)
    step "archive $name.zip"
    expected_zip=$( (printf '%s\n' \
        "$name/" "$name/CHANGELOG.md" "$name/LICENSE-APACHE" "$name/LICENSE-MIT" "$name/README.md" \
        "$name/complete/" "$name/complete/_retry.ps1" "$name/docs/" "$name/retry.exe"
        for doc in docs/*.md docs/*.svg; do echo "$name/$doc"; done) | LC_ALL=C sort)
    # Listed and unpacked by python3's zipfile (Debian's python3; unzip is not always there).
    listed=$(/usr/bin/python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' \
        "$WINDOWS_ZIP")
    if [ "$listed" = "$expected_zip" ]; then
        ok "the .zip holds exactly the expected files, under $name/, in name order"
    else
        fail "the .zip's files differ from the expected list:"
        diff <(echo "$expected_zip") <(echo "$listed") >&2 || true
    fi
    check "no name in the .zip is absolute or has .." \
        bash -c '! grep -Eq "^/|(^|/)\.\.(/|$)|\\\\" <<<"$1"' _ "$listed"
    /usr/bin/python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
        "$WINDOWS_ZIP" "$work"
    says=$(file -b "$work/$name/retry.exe")
    # file 5.44 says "PE32+ executable (console) x86-64 ..., for MS Windows", later ones
    # "PE32+ executable for MS Windows 6.00 (console), x86-64 ...".
    check "file: $says" bash -c '[[ $1 == "PE32+ executable"* && $1 == *"(console)"* &&
        $1 == *x86-64* && $1 == *"MS Windows"* ]]' _ "$says"
    check "complete/_retry.ps1 is completions/_retry.ps1 (dist/release.sh checked it against --generate)" \
        cmp -s "$work/$name/complete/_retry.ps1" completions/_retry.ps1
    check "the README's links into docs/ lead to files in the .zip" bash -c '
        cd "$1" && for link in $(grep -o "](docs/[^)#]*" README.md | cut -c3-); do
            [ -f "$link" ] || { echo "missing: $link" >&2; exit 1; }; done' _ "$work/$name"
fi

# The AArch64 binary under qemu-user, as test-release runs the x86_64 one below.
a64="$work/$(basename "$AARCH64_ARCHIVE" .tar.gz)/retry"
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
check "$(basename "$qemu") retry -- true exits 0 (AArch64)" "$qemu" "$a64" -- true
check "$(basename "$qemu") retry --version prints 'retry $VERSION' (AArch64)" \
    bash -c '[ "$("$1" "$2" --version)" = "retry $3" ]' _ "$qemu" "$a64" "$VERSION"
status=0
"$qemu" "$a64" -q -n 2 -b 0 -- sh -c 'exit 3' || status=$?
check "$(basename "$qemu") retry -q -n 2 -b 0 -- sh -c 'exit 3' exits 3 (AArch64; got $status)" \
    test "$status" -eq 3

step "the x86_64 Linux archive, unpacked"
unpacked="$work/$NAME"

# The binary, run where it was unpacked, as the README tells users to.
cd "$unpacked"
check "./retry -- true exits 0" ./retry -- true
check "./retry --version prints 'retry $VERSION'" \
    bash -c '[ "$(./retry --version)" = "retry $1" ]' _ "$VERSION"
status=0
./retry -q -n 2 -b 0 -- sh -c 'exit 3' || status=$?
check "./retry -q -n 2 -b 0 -- sh -c 'exit 3' exits 3 (got $status)" test "$status" -eq 3
linkage=$(ldd ./retry 2>&1 || true)
linkage=$(printf '%s' "$linkage" | tr -s '\t\n' '  ' | sed 's/^ *//') # one line
case $linkage in
    *"statically linked"* | *"not a dynamic executable"*) ok "ldd ./retry: $linkage" ;;
    *) fail "ldd calls ./retry dynamic: $linkage" ;;
esac
cd "$root_dir"
for pair in bash:retry.bash zsh:_retry fish:retry.fish elvish:retry.elv powershell:_retry.ps1; do
    check "complete/${pair#*:} is what 'retry --generate ${pair%%:*}' prints" \
        bash -c '"$1/retry" --generate "$2" | cmp -s - "$1/complete/$3"' _ "$unpacked" "${pair%%:*}" "${pair#*:}"
done
check "doc/retry.1 is what 'retry --generate man' prints" \
    bash -c '"$1/retry" --generate man | cmp -s - "$1/doc/retry.1"' _ "$unpacked"
check "bash loads complete/retry.bash and completes retry with it" \
    bash -c 'source "$1/complete/retry.bash" && complete -p retry >/dev/null' _ "$unpacked"

step "Debian package $(basename "$DEB")"
field() { dpkg-deb -f "$DEB" "$1"; }
check "Package: $PACKAGE" test "$(field Package)" = "$PACKAGE"
check "Version: $DEB_VERSION" test "$(field Version)" = "$DEB_VERSION"
check "Architecture: amd64" test "$(field Architecture)" = amd64
maintainer=$(field Maintainer)
maintainer_form='^[^<>@,]*[^<>@,[:space:]][[:space:]]+<[^<>@[:space:]]+@[^<>@[:space:]]+\.[^<>@[:space:]]+>$'
check "Maintainer: a name and an address ($maintainer)" \
    bash -c '[[ $1 =~ $2 ]]' _ "$maintainer" "$maintainer_form"
check "no Depends field, not even an empty one (the binary is static)" \
    bash -c '! dpkg-deb -f "$1" | grep -q "^Depends:"' _ "$DEB"
check "Built-Using: glibc, linked in ($(field Built-Using))" \
    bash -c '[[ $1 =~ ^glibc\ \(=\ [^\ ]+\)$ ]]' _ "$(field Built-Using)"
check "Conflicts: retry (Debian's retry, also /usr/bin/retry)" test "$(field Conflicts)" = retry
check "Replaces: retry" test "$(field Replaces)" = retry
check "no Provides: retry (the command lines differ)" test -z "$(field Provides)"

debroot="$work/debroot"
dpkg -x "$DEB" "$debroot"
dpkg-deb -e "$DEB" "$work/debctl"
doc=usr/share/doc/$PACKAGE
# Every file with its mode; directories are 755.
expected_deb=$(printf '%s\n' \
    '755 usr/bin/retry' \
    '644 usr/share/man/man1/retry.1.gz' \
    '644 usr/share/bash-completion/completions/retry' \
    '644 usr/share/zsh/vendor-completions/_retry' \
    '644 usr/share/fish/vendor_completions.d/retry.fish' \
    "644 $doc/copyright" \
    "644 $doc/changelog.Debian.gz" \
    "644 $doc/changelog.gz" \
    "644 $doc/README.md.gz" \
    "644 usr/share/lintian/overrides/$PACKAGE" | sort -k2)
installed=$(cd "$debroot" && find . -type f -printf '%m %P\n' | sort -k2)
if [ "$installed" = "$expected_deb" ]; then
    ok "dpkg -x puts exactly the expected files in place, with the expected modes"
else
    fail "the .deb's files differ from the expected list:"
    diff <(echo "$expected_deb") <(echo "$installed") >&2 || true
fi
check "every directory is 755 and owned by root" \
    bash -c '[ -z "$(dpkg-deb -c "$1" | grep "^d" | grep -v "^drwxr-xr-x root/root ")" ]' _ "$DEB"
check "every file is owned by root" \
    bash -c '[ -z "$(dpkg-deb -c "$1" | grep -v " root/root ")" ]' _ "$DEB"
check "md5sums lists every file, and they match" \
    bash -c 'cd "$1" && [ "$(cut -c35- "$2/md5sums" | sort)" = "$(find . -type f -printf "%P\n" | sort)" ] &&
        md5sum --quiet -c "$2/md5sums"' _ "$debroot" "$work/debctl"
check "/usr/bin/retry is executable" test -x "$debroot/usr/bin/retry"
check "/usr/bin/retry is the archive's binary, byte for byte" \
    cmp -s "$debroot/usr/bin/retry" "$unpacked/retry"
check "/usr/bin/retry -- true exits 0" "$debroot/usr/bin/retry" -- true
check "man page: retry.1.gz unpacks to the archive's doc/retry.1" \
    bash -c 'gzip -dc "$1" | cmp -s - "$2"' _ "$debroot/usr/share/man/man1/retry.1.gz" "$unpacked/doc/retry.1"
check "bash completion: the archive's complete/retry.bash" \
    cmp -s "$debroot/usr/share/bash-completion/completions/retry" "$unpacked/complete/retry.bash"
check "zsh completion: the archive's complete/_retry" \
    cmp -s "$debroot/usr/share/zsh/vendor-completions/_retry" "$unpacked/complete/_retry"
check "fish completion: the archive's complete/retry.fish" \
    cmp -s "$debroot/usr/share/fish/vendor_completions.d/retry.fish" "$unpacked/complete/retry.fish"
check "copyright is dist/debian/copyright" cmp -s "$debroot/$doc/copyright" dist/debian/copyright
# DEP-5 (copyright-format 1.0) as python-debian reads it, strictly: one Files paragraph for
# everything, under MIT or Apache-2.0, each with a stand-alone License paragraph that has a
# text; the MIT one is LICENSE-MIT's permission notice, word for word.
check "copyright: DEP-5, Files: * under MIT or Apache-2.0, both licences' texts, MIT's as in LICENSE-MIT" \
    /usr/bin/python3 -c '
import sys
from debian.copyright import Copyright
with open(sys.argv[1], encoding="utf-8") as f:
    c = Copyright(f, strict=True)
files = list(c.all_files_paragraphs())
assert [p.files for p in files] == [("*",)], [p.files for p in files]
assert files[0].license.synopsis == "MIT or Apache-2.0", files[0].license.synopsis
texts = {p.license.synopsis: p.license.text for p in c.all_license_paragraphs()}
assert sorted(texts) == ["Apache-2.0", "MIT"], sorted(texts)
with open(sys.argv[2], encoding="utf-8") as f:
    mit = f.read()
assert texts["MIT"].strip() == mit[mit.index("Permission is hereby granted"):].strip()
assert "/usr/share/common-licenses/Apache-2.0" in texts["Apache-2.0"]
' "$debroot/$doc/copyright" LICENSE-MIT
check "changelog.gz unpacks to CHANGELOG.md" \
    bash -c 'gzip -dc "$1" | cmp -s - CHANGELOG.md' _ "$debroot/$doc/changelog.gz"
check "README.md.gz unpacks to README.md" \
    bash -c 'gzip -dc "$1" | cmp -s - README.md' _ "$debroot/$doc/README.md.gz"
# The Debian changelog: one entry, this version, dated by the commit, signed by the Maintainer.
gzip -dc "$debroot/$doc/changelog.Debian.gz" > "$work/changelog.Debian"
changelog() { dpkg-parsechangelog -l "$work/changelog.Debian" -S "$1"; }
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo unknown)}
check "changelog.Debian.gz: $PACKAGE ($DEB_VERSION), $(changelog Distribution)" \
    test "$(changelog Source) $(changelog Version)" = "$PACKAGE $DEB_VERSION"
check "changelog.Debian.gz: dated by SOURCE_DATE_EPOCH, else the last commit ($(changelog Date))" \
    test "$(changelog Timestamp)" = "$epoch"
check "changelog.Debian.gz: signed by the Maintainer" test "$(changelog Maintainer)" = "$maintainer"
# With Debian's retry installed, apt must plan to remove it (Conflicts + Replaces).
if dpkg-query -W -f='${Status}' retry 2>/dev/null | grep -q 'install ok installed'; then
    check "apt-get would replace the installed Debian retry" \
        bash -c 'apt-get install --simulate "$1" 2>/dev/null | grep -q "^Remv retry "' _ "$root_dir/$DEB"
else
    echo "(Debian's retry is not installed: the apt replacement plan is not checked)"
fi

step "lintian $(basename "$DEB")"
# Errors and warnings fail; info and pedantic tags are shown. Then the overridden tags (O:) with
# their reasons from dist/debian/lintian-overrides, in a second run, since lintian's exit status
# counts the overridden tags it shows.
lintian_status=0
lintian --fail-on error,warning --display-info --pedantic "$DEB" \
    >"$work/lintian.out" 2>"$work/lintian.err" || lintian_status=$?
sed 's/^/    /' "$work/lintian.out"
lintian --show-overrides "$DEB" 2>/dev/null | grep -v '^[EWIPX]:' | sed 's/^/    /' || true
if [ "$lintian_status" -eq 0 ] && ! grep -q '^[EW]:' "$work/lintian.out"; then
    ok "$(lintian --version): no error, no warning"
else
    fail "$(lintian --version) exited $lintian_status:"
    cat "$work/lintian.err" >&2
fi

step "man -l"
# man keeps groff's warnings quiet: `groff -ww` shows them (an undefined macro, a bad escape).
check "groff -man -ww finds no roff mistake in doc/retry.1" \
    bash -c '[ -z "$(groff -man -ww -z -Tutf8 "$1" 2>&1)" ]' _ "$unpacked/doc/retry.1"
for page in "$unpacked/doc/retry.1" "$debroot/usr/share/man/man1/retry.1.gz"; do
    if MANWIDTH=80 man -l "$page" >"$work/man.out" 2>"$work/man.err" &&
        [ ! -s "$work/man.err" ] &&
        grep -q '^NAME' "$work/man.out" && grep -q '^EXIT STATUS' "$work/man.out" &&
        grep -q -- '--max-retries' "$work/man.out"; then
        ok "man -l ${page#"$work/"} renders NAME, OPTIONS and EXIT STATUS without a warning"
    else
        fail "man -l ${page#"$work/"}:"
        head -5 "$work/man.err" >&2
    fi
done

step "actionlint .github/workflows/release.yml"
# dist/actionlint.sh finds actionlint, or installs it (PyPI) into the user cache; it also
# checks the `run:` scripts, with shellcheck on PATH.
actionlint=$(dist/actionlint.sh)
check "actionlint $("$actionlint" -version | head -1)" "$actionlint" .github/workflows/release.yml
check "shellcheck dist/*.sh dist/action/install.sh" shellcheck dist/*.sh dist/action/install.sh

if [ "$failures" -gt 0 ]; then
    printf '\n%d check(s) failed\n' "$failures" >&2
    exit 1
fi
printf '\nall checks passed\n'
