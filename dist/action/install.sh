#!/usr/bin/env bash
# The GitHub Action's step on Linux and macOS runners (action.yml runs it with bash; Windows
# runners run install.ps1 beside it): puts retry on the job's PATH.
#
# From the runner's variables: RUNNER_OS and RUNNER_ARCH pick the release archive (Linux X64
# and ARM64, macOS X64 and ARM64), RUNNER_TOOL_CACHE is where it is kept
# ($RUNNER_TOOL_CACHE/retry/VERSION/ARCH, with ARCH.complete beside it once whole, as the
# actions toolkit's tool-cache lays it out, so that a second use in a job downloads nothing),
# GITHUB_PATH gets its bin directory and GITHUB_OUTPUT `path=` the binary's path. From
# action.yml: INPUT_VERSION (the `version` input; empty: the version in this checkout's
# Cargo.toml, which at a release tag is that release) and ACTION_REPOSITORY (github.action_repository;
# empty when the workflow uses the action from its own checkout, `uses: ./`, and then
# GITHUB_REPOSITORY). The files come from RETRY_INSTALL_FROM when set, else from that
# repository's GitHub release vVERSION; dist/install.sh downloads, checks and unpacks them.
#
# A failure is one `::error::` line on stdout (where the runner reads workflow commands) and
# exit status 1, and leaves nothing in the tool cache nor on the path.
# Written for bash 3.2 (macOS's /bin/bash) as much as for bash 5.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

# The one line of a failure: a workflow command, its message escaped as the actions toolkit
# escapes one (`%`, CR, LF; https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts).
fail() {
    local message="retry action: $*"
    message=${message//%/%25}
    message=${message//$'\r'/%0D}
    message=${message//$'\n'/%0A}
    printf '::error::%s\n' "$message"
    exit 1
}

# The variables a runner sets.
for var in RUNNER_OS RUNNER_ARCH RUNNER_TOOL_CACHE GITHUB_PATH GITHUB_OUTPUT; do
    [ -n "${!var:-}" ] || fail "$var is not set (this runs on a GitHub Actions runner)"
done

case "$RUNNER_OS/$RUNNER_ARCH" in
    Linux/X64) target=x86_64-unknown-linux-gnu ;;
    Linux/ARM64) target=aarch64-unknown-linux-gnu ;;
    macOS/X64) target=x86_64-apple-darwin ;;
    macOS/ARM64) target=aarch64-apple-darwin ;;
    *)
        fail "no retry release for this runner (RUNNER_OS $(printf %q "$RUNNER_OS"), RUNNER_ARCH" \
            "$(printf %q "$RUNNER_ARCH")); there are Linux X64 and ARM64, macOS X64 and ARM64," \
            "Windows X64"
        ;;
esac
case $RUNNER_ARCH in X64) arch=x64 ;; ARM64) arch=arm64 ;; esac

version=${INPUT_VERSION:-}
version_from="the version input"
if [ -z "$version" ]; then
    # This checkout's own: the package's version, the first `version = "..."` of Cargo.toml.
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
    version_from="$root/Cargo.toml"
fi
version=${version#v}
# As dist/install.sh takes it; checked here too, since it names a directory of the tool cache.
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
    fail "$version_from: $(printf %q "$version") is not a release version (like 1.2.3)"

dir="$RUNNER_TOOL_CACHE/retry/$version/$arch"
bin="$dir/bin"
case $bin in
    *$'\n'* | *$'\r'*) fail "RUNNER_TOOL_CACHE $(printf %q "$RUNNER_TOOL_CACHE") has a line break in it" ;;
esac

# Removes what an install that failed made in the tool cache (the directories it made too, when
# they are empty).
discard() {
    rm -rf -- "$dir" "$dir.complete"
    rmdir -- "$RUNNER_TOOL_CACHE/retry/$version" 2>/dev/null || true
    rmdir -- "$RUNNER_TOOL_CACHE/retry" 2>/dev/null || true
}

if [ -f "$dir.complete" ] && [ -x "$bin/retry" ]; then
    echo "retry $version from the tool cache: $bin"
else
    # A directory without its .complete marker is an earlier install that did not finish.
    rm -rf -- "$dir" "$dir.complete"
    mkdir -p -- "$dir" || { discard; fail "cannot make $(printf %q "$dir") in RUNNER_TOOL_CACHE"; }
    args=(--target "$target" --version "$version" --to "$bin")
    if [ -z "${RETRY_INSTALL_FROM:-}" ]; then
        repository=${ACTION_REPOSITORY:-${GITHUB_REPOSITORY:-}}
        [ -n "$repository" ] || {
            discard
            fail "neither github.action_repository nor GITHUB_REPOSITORY names the repository of the release files; set RETRY_INSTALL_FROM"
        }
        args+=(--from "${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version")
    fi
    said=$(mktemp)
    status=0
    sh "$root/dist/install.sh" "${args[@]}" >/dev/null 2>"$said" || status=$?
    if [ "$status" -ne 0 ]; then
        line=$(tail -n 1 "$said")
        rm -f -- "$said"
        discard
        fail "${line#install.sh: }"
    fi
    rm -f -- "$said"
    # Runs here before it goes on the path (a binary for another system would not).
    if ! "$bin/retry" --version >/dev/null 2>&1; then
        discard
        fail "the retry $version of $target does not run on this runner"
    fi
    touch -- "$dir.complete"
fi

echo "$bin" >>"$GITHUB_PATH"
echo "path=$bin/retry" >>"$GITHUB_OUTPUT"
echo "retry $version is on the path: $bin/retry"
