#!/usr/bin/env bash
# Prints dist/install.sh as a release attaches it: with the release's repository and version
# written into its `release_repository=''` and `release_version=''` lines, so that
#
#   curl -fsSL https://github.com/OWNER/REPO/releases/download/vVERSION/install.sh | sh
#
# installs VERSION from that release, and .../releases/latest/download/install.sh the latest.
# The release workflow runs it after dist/release.sh, into target/dist/install.sh.
#
# Usage: dist/stamp-install.sh OWNER/REPO VERSION > target/dist/install.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { printf 'stamp-install.sh: %s\n' "$*" >&2; exit 1; }

[ "$#" -eq 2 ] || die "usage: dist/stamp-install.sh OWNER/REPO VERSION"
repository=$1 version=$2
# GitHub's names: letters, digits, `-`, `_` and `.`; the version as install.sh takes it.
[[ $repository =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
    die "the repository '$repository' is not OWNER/REPO"
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
    die "the version '$version' is not a release version (like 1.2.3)"

stamped=$(sed -e "s|^release_repository=''\$|release_repository='$repository'|" \
    -e "s|^release_version=''\$|release_version='$version'|" dist/install.sh)
# Each line once, as written in dist/install.sh.
if [ "$(grep -cFx "release_repository='$repository'" <<<"$stamped")" -ne 1 ] ||
    [ "$(grep -cFx "release_version='$version'" <<<"$stamped")" -ne 1 ]; then
    die "dist/install.sh has not one line release_repository='' and one release_version=''"
fi
printf '%s\n' "$stamped"
