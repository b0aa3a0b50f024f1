#!/bin/sh
# Installs retry (crates.io package retry-tool, command `retry`) from its release files, in one
# line (docs/install.md, "The install script"):
#
#   curl -fsSL https://github.com/OWNER/retry/releases/latest/download/install.sh | sh -s -- --to ~/.local/bin
#
# Picks the archive dist/release.sh makes for this platform (uname -s, uname -m):
# retry-tool-VERSION-TARGET.tar.gz, checks it against its .sha256 (sha256sum or shasum -a 256),
# and installs, with --to DIR (default ~/.local/bin):
#
#   DIR/retry                                                the binary
#   and when DIR is a PREFIX/bin directory, under PREFIX/share:
#   man/man1/retry.1                                         the man page
#   bash-completion/completions/retry                        bash completion
#   zsh/site-functions/_retry                                zsh completion
#   fish/vendor_completions.d/retry.fish                     fish completion
#
# and nothing else (a DIR not named bin gets the binary alone). Everything is downloaded,
# checked and unpacked in a temporary directory first; then each file is copied beside its
# place and renamed into it, so a failure leaves no file of a half install, and no directory
# this script made. Any failure is one line on stderr, `install.sh: ...`, and exit status 1.
#
# The release files come from --from URL, else RETRY_INSTALL_FROM, else the GitHub release this
# copy of the script is attached to (the release workflow stamps its repository and version into
# the two variables below, with dist/stamp-install.sh; in the repository they are empty, and
# --from and --version are needed). A file:// URL is read as a local path. The GitHub Action
# (action.yml) runs this script too, with --target.
#
# POSIX sh: runs under dash, bash, busybox ash and zsh's sh mode. Needs curl or wget (for http
# and https), sha256sum or shasum, tar with gzip, mktemp, uname. RETRY_INSTALL_STALL_TIMEOUT
# (seconds, default 30): a download that connects no faster, or moves under 1 KiB/s for that
# long, is abandoned (with curl; wget gets it as its read timeout).
set -eu

# The release this copy belongs to (dist/stamp-install.sh writes them into the attached copy).
release_repository=''
release_version=''

# The targets that have a .tar.gz (dist/release.sh), and what this script says about them.
targets='x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin x86_64-unknown-freebsd'
platforms='Linux x86_64 and aarch64, macOS x86_64 and arm64, FreeBSD amd64 (Windows x86_64: the .zip)'

usage() {
    if [ -n "$release_repository" ]; then
        default_from="https://github.com/$release_repository/releases/download/vVERSION"
    else
        default_from='none in this copy'
    fi
    cat <<EOF
install.sh: installs retry from its release files.

Usage: sh install.sh [--to DIR] [--version VERSION] [--from URL] [--target TARGET]
       curl -fsSL .../install.sh | sh -s -- [OPTIONS]

  --to DIR          where the binary goes (default: ~/.local/bin, made if missing); when DIR
                    is PREFIX/bin, the man page and the completions go under PREFIX/share
                    (man/man1, bash-completion/completions, zsh/site-functions,
                    fish/vendor_completions.d); otherwise the binary alone
  --version VERSION the release to install (default: ${release_version:-none in this copy})
  --from URL        a directory (http://, https:// or file://) holding the release files
                    retry-tool-VERSION-TARGET.tar.gz and its .sha256 (default:
                    RETRY_INSTALL_FROM, else $default_from)
  --target TARGET   another platform's archive (default: this one's, from uname), one of
                    $targets
  -h, --help        this help

RETRY_INSTALL_STALL_TIMEOUT=SECONDS (default 30): a download that moves under 1 KiB/s for that
long is abandoned.
EOF
}

# State that cleanup() undoes: the temporary directory, the files copied beside their places
# (not yet renamed), the directories this script made (newest first).
tmp=''
staged=''
created=''

cleanup() {
    set -f
    old_ifs=$IFS
    IFS='
'
    for f in $staged; do rm -f -- "$f"; done
    for d in $created; do rmdir -- "$d" 2>/dev/null || true; done
    IFS=$old_ifs
    set +f
    staged=''
    created=''
    if [ -n "$tmp" ]; then rm -rf -- "$tmp"; fi
    tmp=''
}

# The one line of a failure.
die() {
    printf 'install.sh: %s\n' "$*" >&2
    exit 1
}

# '$1', quoted, with anything unprintable shown as `?` (so that a message stays one line).
shown() {
    shown_text=$(printf '%s\n' "$1" | LC_ALL=C sed 's/[^[:print:]]/?/g' | tr '\n' '?')
    printf "'%s'" "${shown_text%?}"
}

# The last line of file $1, unprintable characters as `?` (a tool's error message).
last_line() {
    sed -n '$p' "$1" 2>/dev/null | LC_ALL=C sed 's/[^[:print:]]/?/g' | tr -d '\n'
}

# What a tool's error message in file $1 says is wrong: its last line after the last `: `
# (`mkdir: cannot create directory '/x': Read-only file system`: Read-only file system).
reason_of() {
    last_line "$1" | sed 's/.*: //'
}

have() { command -v "$1" >/dev/null 2>&1; }

# Whether $1 is a version of the release files: 1.2.3, with a pre-release or build part.
valid_version() {
    case $1 in '' | *[!0-9A-Za-z.+-]*) return 1 ;; esac
    printf '%s\n' "$1" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
}

# The target of this machine, from uname.
detect_target() {
    os=$(uname -s 2>/dev/null || echo unknown)
    arch=$(uname -m 2>/dev/null || echo unknown)
    case "$os/$arch" in
        Linux/x86_64 | Linux/amd64) echo x86_64-unknown-linux-gnu ;;
        Linux/aarch64 | Linux/arm64) echo aarch64-unknown-linux-gnu ;;
        Darwin/x86_64) echo x86_64-apple-darwin ;;
        Darwin/arm64 | Darwin/aarch64) echo aarch64-apple-darwin ;;
        FreeBSD/amd64 | FreeBSD/x86_64) echo x86_64-unknown-freebsd ;;
        *) die "no retry release for this platform (uname -s $(shown "$os"), uname -m $(shown "$arch")); there are: $platforms" ;;
    esac
}

# download URL FILE: the file at URL into FILE, or one line saying why not.
download() {
    case $1 in
        file://*)
            LC_ALL=C cp -- "${1#file://}" "$2" 2>"$tmp/download.err" ||
                die "cannot read $(shown "$1"): $(reason_of "$tmp/download.err")"
            return 0
            ;;
    esac
    if [ "$downloader" = curl ]; then
        # An https source is never left for http on a redirect.
        case $1 in https://*) redirects='=https' ;; *) redirects='=http,https' ;; esac
        curl --fail --silent --show-error --location --globoff --max-redirs 10 \
            --proto '=http,https' --proto-redir "$redirects" \
            --connect-timeout "$stall" --speed-limit 1024 --speed-time "$stall" \
            --max-filesize 268435456 --output "$2" "$1" 2>"$tmp/download.err" ||
            die "cannot download $(shown "$1"): $(last_line "$tmp/download.err")"
    else
        # GNU wget's -T is its read timeout; BusyBox's wget has none, and the BusyBox of
        # Debian 12 crashes on -T (built without FEATURE_WGET_TIMEOUT; see
        # https://github.com/docker-easyconnect/docker-easyconnect/pull/369).
        status=0
        if [ "$wget_is_gnu" = yes ]; then
            wget -q -T "$stall" -O "$2" "$1" 2>"$tmp/download.err" || status=$?
        else
            wget -q -O "$2" "$1" 2>"$tmp/download.err" || status=$?
        fi
        if [ "$status" -ne 0 ]; then
            said=$(last_line "$tmp/download.err")
            die "cannot download $(shown "$1"): ${said:-wget exited with status $status}"
        fi
    fi
}

# The SHA-256 of file $1, in lower-case hex.
sha256_of() {
    if [ "$hasher" = sha256sum ]; then
        sha256sum <"$1"
    else
        shasum -a 256 <"$1"
    fi | sed 's/[[:space:]].*//' | tr 'A-F' 'a-f'
}

# make_dir DIR: DIR and its missing parents, each noted in $created for cleanup().
make_dir() {
    if [ -d "$1" ]; then return 0; fi
    make_dir "$(dirname -- "$1")"
    LC_ALL=C mkdir -- "$1" 2>"$tmp/mkdir.err" ||
        die "cannot make the directory $(shown "$1"): $(reason_of "$tmp/mkdir.err")"
    created="$1
$created"
}

# The name a file is copied to beside its place, before the rename.
staged_name() {
    echo "$(dirname -- "$1")/.$(basename -- "$1").install-$$"
}

# stage SOURCE DESTINATION MODE: SOURCE copied beside DESTINATION, with MODE.
stage() {
    if [ -d "$2" ]; then die "cannot install $(shown "$2"): it is a directory"; fi
    temp=$(staged_name "$2")
    staged="$temp
$staged"
    LC_ALL=C cp -- "$1" "$temp" 2>"$tmp/cp.err" ||
        die "cannot write to $(shown "$(dirname -- "$2")"): $(reason_of "$tmp/cp.err")"
    LC_ALL=C chmod "$3" "$temp" 2>"$tmp/cp.err" ||
        die "cannot write to $(shown "$(dirname -- "$2")"): $(reason_of "$tmp/cp.err")"
}

main() {
    to=''
    version=''
    from=''
    target=''
    while [ "$#" -gt 0 ]; do
        case $1 in
            -h | --help)
                usage
                exit 0
                ;;
            --to | --version | --from | --target)
                [ "$#" -ge 2 ] || die "$1 needs a value (install.sh --help)"
                case $1 in
                    --to) to=$2 ;;
                    --version) version=$2 ;;
                    --from) from=$2 ;;
                    --target) target=$2 ;;
                esac
                [ -n "$2" ] || die "$1 is empty"
                shift 2
                ;;
            --to=* | --version=* | --from=* | --target=*)
                value=${1#*=}
                [ -n "$value" ] || die "${1%%=*} is empty"
                case $1 in
                    --to=*) to=$value ;;
                    --version=*) version=$value ;;
                    --from=*) from=$value ;;
                    --target=*) target=$value ;;
                esac
                shift
                ;;
            *) die "unknown argument $(shown "$1") (install.sh --help lists the options)" ;;
        esac
    done

    # Where from: --from, RETRY_INSTALL_FROM, the release of this copy.
    from_name=--from
    if [ -z "$from" ] && [ -n "${RETRY_INSTALL_FROM:-}" ]; then
        from=$RETRY_INSTALL_FROM
        from_name=RETRY_INSTALL_FROM
    fi

    if [ -n "$version" ]; then
        case $version in v[0-9]*) version=${version#v} ;; esac
        valid_version "$version" ||
            die "--version $(shown "$version") is not a release version (like 1.2.3 or 1.2.3-rc.1)"
    elif [ -n "$release_version" ]; then
        version=$release_version
    else
        die "no --version given, and this copy of install.sh belongs to no release (use the one attached to a release, or give --version)"
    fi

    if [ -n "$from" ]; then
        case $from in
            *'
'*) die "$from_name $(shown "$from") is not a URL" ;;
            http://?* | https://?* | file:///*) ;;
            *) die "$from_name $(shown "$from") is not an http://, https:// or file:/// URL of a directory" ;;
        esac
        # One slash between the directory and a file's name.
        while :; do
            case $from in */) from=${from%/} ;; *) break ;; esac
        done
    elif [ -n "$release_repository" ]; then
        from="https://github.com/$release_repository/releases/download/v$version"
    else
        die "no --from given (nor RETRY_INSTALL_FROM), and this copy of install.sh belongs to no release (use the one attached to a release, or give --from)"
    fi

    if [ -n "$target" ]; then
        case " $targets " in
            *" $target "*) ;;
            *) die "--target $(shown "$target") has no .tar.gz; there are: $targets" ;;
        esac
    else
        target=$(detect_target) || exit 1
    fi

    if [ -z "$to" ]; then
        [ -n "${HOME:-}" ] || die "no --to given, and HOME is not set for the default ~/.local/bin"
        to=$HOME/.local/bin
    fi
    case $to in
        *'
'*) die "--to $(shown "$to") has a line break in it" ;;
    esac
    while :; do
        case $to in ?*/) to=${to%/} ;; *) break ;; esac
    done

    stall=${RETRY_INSTALL_STALL_TIMEOUT:-30}
    case $stall in
        '' | *[!0-9]* | 0 | 0*) die "RETRY_INSTALL_STALL_TIMEOUT $(shown "$stall") is not a number of seconds (1 to 3600)" ;;
    esac
    [ "$stall" -le 3600 ] ||
        die "RETRY_INSTALL_STALL_TIMEOUT $(shown "$stall") is not a number of seconds (1 to 3600)"

    # The tools, before anything is downloaded.
    case $from in
        file://*) downloader=none ;;
        *)
            if have curl; then
                downloader=curl
            elif have wget; then
                downloader=wget
                wget_is_gnu=no
                if wget --version 2>/dev/null | grep -q 'GNU Wget'; then wget_is_gnu=yes; fi
            else
                die "needs curl or wget to download, and finds neither on PATH"
            fi
            ;;
    esac
    if have sha256sum; then
        hasher=sha256sum
    elif have shasum; then
        hasher=shasum
    else
        die "needs sha256sum or shasum to check the download, and finds neither on PATH"
    fi
    for tool in tar gzip mktemp; do
        have "$tool" || die "needs $tool, and does not find it on PATH"
    done

    trap cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/retry-install.XXXXXX") ||
        die "cannot make a temporary directory in $(shown "${TMPDIR:-/tmp}")"

    name="retry-tool-$version-$target"
    archive="$name.tar.gz"
    download "$from/$archive.sha256" "$tmp/$archive.sha256"
    expected=$(awk 'NR == 1 { print $1 }' "$tmp/$archive.sha256" | tr 'A-F' 'a-f')
    printf '%s\n' "$expected" | grep -Eq '^[0-9a-f]{64}$' ||
        die "$(shown "$from/$archive.sha256") is not a SHA-256 checksum file"
    download "$from/$archive" "$tmp/$archive"
    actual=$(sha256_of "$tmp/$archive")
    [ "$actual" = "$expected" ] ||
        die "checksum mismatch: $archive has SHA-256 $actual, its .sha256 says $expected"

    # Only files and directories, all under $name/, none with a `..`: no member can land
    # outside the unpacking directory, nor write through a link.
    LC_ALL=C tar -tzf "$tmp/$archive" >"$tmp/names" 2>"$tmp/tar.err" ||
        die "cannot read $archive: $(last_line "$tmp/tar.err")"
    awk -v top="$name/" 'index($0, top) != 1 || $0 ~ /(^|\/)\.\.(\/|$)/ { bad = 1 } END { exit bad }' \
        "$tmp/names" || die "$archive holds a path outside $name/ or with '..': refused"
    LC_ALL=C tar -tvzf "$tmp/$archive" >"$tmp/listing" 2>"$tmp/tar.err" ||
        die "cannot read $archive: $(last_line "$tmp/tar.err")"
    # (BusyBox's tar lists a hard link as `-rw-r--r-- ... NAME -> TARGET`, GNU's and bsdtar's as
    # `hrw-r--r-- ... NAME link to TARGET`.)
    awk '{ c = substr($0, 1, 1) } (c != "-" && c != "d") || / -> / || / link to / { bad = 1 }
        END { exit bad }' "$tmp/listing" ||
        die "$archive holds a link or a special file: refused"
    mkdir "$tmp/unpacked"
    files="retry doc/retry.1 complete/retry.bash complete/_retry complete/retry.fish"
    # Only the files installed.
    (
        cd "$tmp/unpacked" || exit 1
        set --
        for f in $files; do set -- "$@" "$name/$f"; done
        LC_ALL=C tar -xzf "../$archive" "$@"
    ) 2>"$tmp/tar.err" || die "cannot unpack $archive: $(last_line "$tmp/tar.err")"
    for f in $files; do
        if [ ! -f "$tmp/unpacked/$name/$f" ] || [ -h "$tmp/unpacked/$name/$f" ]; then
            die "$archive has no file $name/$f"
        fi
    done

    # Where each file goes: --to, and PREFIX/share when --to is PREFIX/bin.
    extras=no
    prefix=''
    case $to in
        bin) prefix=. ;;
        /bin) ;;
        */bin) prefix=${to%/bin} ;;
    esac
    if [ -n "$prefix" ]; then extras=yes; fi
    src="$tmp/unpacked/$name"
    make_dir "$to"
    stage "$src/retry" "$to/retry" 755
    places="$to/retry"
    if [ "$extras" = yes ]; then
        share=$prefix/share
        for pair in doc/retry.1:man/man1/retry.1 complete/retry.bash:bash-completion/completions/retry \
            complete/_retry:zsh/site-functions/_retry complete/retry.fish:fish/vendor_completions.d/retry.fish; do
            dest="$share/${pair#*:}"
            make_dir "$(dirname -- "$dest")"
            stage "$src/${pair%%:*}" "$dest" 644
            places="$places
$dest"
        done
    fi
    # Every file is beside its place: now the renames, each atomic.
    set -f
    old_ifs=$IFS
    IFS='
'
    for dest in $places; do
        LC_ALL=C mv -f -- "$(staged_name "$dest")" "$dest" 2>"$tmp/mv.err" ||
            die "cannot install $(shown "$dest"): $(reason_of "$tmp/mv.err")"
    done
    IFS=$old_ifs
    set +f
    staged=''
    created=''

    echo "installed retry $version ($target) as $to/retry"
    if [ "$extras" = yes ]; then
        echo "with its man page and bash, zsh and fish completions under $share"
    else
        echo "(the man page and completions go under PREFIX/share with --to PREFIX/bin; retry --generate man|bash|zsh|fish prints them)"
    fi
    case ":${PATH:-}:" in
        *":$to:"*) ;;
        *) echo "note: $to is not on PATH; add it, e.g. export PATH=\"$to:\$PATH\"" ;;
    esac
}

# Everything runs from here, so that a script cut short in a pipe to sh runs nothing.
main "$@"
