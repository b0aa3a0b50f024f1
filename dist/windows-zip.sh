#!/usr/bin/env bash
# Packs the Windows release archive of retry, as dist/release.sh calls it once retry.exe is
# built (dist/build.sh x86_64-pc-windows-gnu), and prints the archive's path:
#
#   OUT/retry-tool-VERSION-x86_64-pc-windows-gnu.zip
#       retry-tool-VERSION-x86_64-pc-windows-gnu/
#           retry.exe             EXE, which must be an x86-64 Windows program (PE32+)
#           complete/_retry.ps1   the PowerShell completion (ROOT/completions/_retry.ps1)
#           README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE
#           docs/                 the guide the README links to (*.md and its charts)
#   OUT/retry-tool-VERSION-x86_64-pc-windows-gnu.zip.sha256   as sha256sum writes it
#
# The same files as the other archives, less what Windows has no use for: the man page and the
# completions of the Unix shells. Every name is under the one top directory (none absolute,
# none with `..`, `/` as the separator, as the zip format, APPNOTE 4.4.17, asks), every
# directory has an entry of its own, and the entries go in byte order of their names.
#
# Reproducible as the .tar.gz archives are: every entry carries SOURCE_DATE_EPOCH (required;
# dist/release.sh sets it to the last commit's time) as its time, in UTC (a zip's times have
# no zone; DOS times count in 2 s from 1980, so the time is rounded down to an even second and
# raised to 1980-01-01 when earlier), the modes 755 (retry.exe, directories) and 644 (the rest)
# whatever the files' own, Unix as the "made by" system (so that unzip on Unix applies those
# modes), no extra fields; so two runs on the same inputs give the same bytes.
#
# Packed by python3's zipfile (the standard library): Debian's python3 is there wherever the
# tests run (.ci/run installs it), while Info-ZIP's `zip` is not in a fresh Debian, stores the
# files' local times (so the bytes would depend on TZ) and extra fields with each file's own
# times unless told otherwise; and bsdtar (libarchive-tools) is not there either.
#
# Usage: SOURCE_DATE_EPOCH=SECONDS dist/windows-zip.sh VERSION EXE OUT [ROOT]
# ROOT is where the README, changelog, licences, docs/ and completions/ are read: the
# repository (the default), or, in the tests, a small tree of the same shape.
set -euo pipefail

die() { printf 'windows-zip.sh: %s\n' "$*" >&2; exit 1; }

[ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: dist/windows-zip.sh VERSION EXE OUT [ROOT]"
VERSION=$1 EXE=$2 OUT=$3
ROOT=${4:-$(dirname "${BASH_SOURCE[0]}")/..}
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+[-+.0-9A-Za-z]*$ ]] || die "not a version: '$VERSION'"
[[ ${SOURCE_DATE_EPOCH:-} =~ ^[0-9]+$ ]] ||
    die "SOURCE_DATE_EPOCH must be the archive's time in seconds: '${SOURCE_DATE_EPOCH:-}'"
[ -f "$EXE" ] || die "no $EXE"
[ -d "$OUT" ] || die "no directory $OUT"
command -v python3 >/dev/null 2>&1 || die "no python3 (apt-get install python3)"

NAME=retry-tool-$VERSION-x86_64-pc-windows-gnu
ZIP=$OUT/$NAME.zip

# What goes in: one line each, NAME-relative path, a tab, the file it is made from.
entries=("retry.exe	$EXE" "complete/_retry.ps1	$ROOT/completions/_retry.ps1")
for file in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE; do
    entries+=("$file	$ROOT/$file")
done
shopt -s nullglob
docs=("$ROOT"/docs/*.md "$ROOT"/docs/*.svg)
shopt -u nullglob
[ "${#docs[@]}" -gt 0 ] || die "no guide in $ROOT/docs/"
for doc in "${docs[@]}"; do entries+=("docs/$(basename "$doc")	$doc"); done
for entry in "${entries[@]}"; do
    [ -f "${entry#*	}" ] || die "no ${entry#*	}"
done

rm -f "$ZIP" "$ZIP.sha256"
printf '%s\n' "${entries[@]}" | python3 -c '
import struct, sys, time, zipfile

top, zip_path, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])

def windows_x86_64(path):
    # MZ, then at e_lfanew the PE signature, machine AMD64 (0x8664) and PE32+ (0x20b).
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:2] != b"MZ" or len(head) < 64:
        return False
    pe = struct.unpack_from("<I", head, 0x3C)[0]
    if pe + 26 > len(head) or head[pe:pe + 4] != b"PE\0\0":
        return False
    machine = struct.unpack_from("<H", head, pe + 4)[0]
    magic = struct.unpack_from("<H", head, pe + 24)[0]
    return machine == 0x8664 and magic == 0x20B

files = {}
for line in sys.stdin.read().splitlines():
    name, source = line.split("\t", 1)
    files[name] = source
if not windows_x86_64(files["retry.exe"]):
    sys.exit("windows-zip.sh: %s is not an x86-64 Windows program (PE32+)" % files["retry.exe"])

# Every directory has its entry, and the names go in byte order: a directory before its files.
names = set(files)
for name in files:
    parts = name.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        names.add("/".join(parts[:i]) + "/")
order = sorted([""] + sorted(names), key=lambda n: n.encode())

when = max(time.gmtime(epoch)[:6], (1980, 1, 1, 0, 0, 0))
when = when[:5] + (when[5] - when[5] % 2,)
with zipfile.ZipFile(zip_path, "w") as z:
    for name in order:
        arc = top + "/" + name
        parts = arc.rstrip("/").split("/")
        if arc.startswith("/") or "\\" in arc or ".." in parts or "." in parts or "" in parts:
            sys.exit("windows-zip.sh: refusing the entry name %r" % arc)
        info = zipfile.ZipInfo(arc, date_time=when)
        info.create_system = 3  # Unix: the modes below apply
        if name.endswith("/") or name == "":
            info.external_attr = (0o40755 << 16) | 0x10  # a directory, and MS-DOS says so
            z.writestr(info, b"", compress_type=zipfile.ZIP_STORED)
        else:
            mode = 0o755 if name == "retry.exe" else 0o644
            info.external_attr = (0o100000 | mode) << 16
            with open(files[name], "rb") as f:
                data = f.read()
            z.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
' "$NAME" "$ZIP" "$SOURCE_DATE_EPOCH" || { rm -f "$ZIP"; die "packing $ZIP failed"; }

(cd "$OUT" && sha256sum "$NAME.zip" > "$NAME.zip.sha256")
echo "$ZIP"
