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
# checked and unpacked in a temporary directory first; then every file is copied beside its
# place, every file already in a place is kept beside it under another name (a hard link), and
# only then is each new file renamed into its place. A failure (or a signal) at any step puts
# back what was there: no file of a half install is left, nor any directory this script made (a
# directory another install makes meanwhile is not a failure). Any failure is one line on
# stderr, `install.sh: ...`, and exit status 1.
#
# The release files come from --from URL, else RETRY_INSTALL_FROM, else the GitHub release this
# copy of the script is attached to (the release workflow stamps its repository and version into
# the two variables below, with dist/stamp-install.sh; in the repository they are empty, and
# --from and --version are needed). A file:// URL is read as a local path. The GitHub Action
# (action.yml) runs this script too, with --target. A user name and password in the URL
# (https://USER:PASSWORD@HOST/...) are shown as *** in every message, and reach curl or GNU
# wget on their standard input, not on their command line, where ps would show them (BusyBox's
# wget takes a URL on its command line only: refused there). Give them in RETRY_INSTALL_FROM
# rather than --from, whose value ps shows on this script's own command line.
#
# Redirects: at most 10, and from an https:// source only to https:// URLs: curl is told so;
# GNU wget is told to follow none (--max-redirect=0) and each is followed here, its Location
# checked before it is requested; BusyBox's wget, which cannot be told, follows its own few
# and its file is refused when one of them left https:// (its -S lines say where it went).
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

# State that cleanup() undoes, each list newest first, one path a line: the temporary
# directory; the places whose file was replaced (each put back from its kept copy, or removed
# when there was none); the kept copies of the files that were in place; the new files copied
# beside their places (not yet renamed); the directories this script made.
tmp=''
replaced=''
kept=''
staged=''
created=''

cleanup() {
    # A second Ctrl-C (or TERM) must not cut the putting back short.
    trap '' HUP INT TERM
    set -f
    old_ifs=$IFS
    IFS='
'
    for f in $replaced; do
        old=$(kept_name "$f")
        if [ -e "$old" ] || [ -h "$old" ]; then
            mv -f -- "$old" "$f" 2>/dev/null || true
        else
            rm -f -- "$f" 2>/dev/null || true
        fi
    done
    for f in $kept $staged; do rm -f -- "$f" 2>/dev/null || true; done
    for d in $created; do rmdir -- "$d" 2>/dev/null || true; done
    IFS=$old_ifs
    set +f
    replaced=''
    kept=''
    staged=''
    created=''
    if [ -n "$tmp" ]; then rm -rf -- "$tmp"; fi
    tmp=''
}

# The one line of a failure, with the user and password of any URL in it shown as ***.
die() {
    printf 'install.sh: %s\n' "$*" | LC_ALL=C sed 's|\(://\)[^/?#]*@|\1***@|g' >&2
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

# What a failed tar says in file $1: its first line that is not blank, the cause (GNU tar's
# last ones sum up: `tar: Error is not recoverable: exiting now` after a blank line and
# `gzip: stdin: not in gzip format`).
first_line() {
    sed -n '/[^[:space:]]/{p;q;}' "$1" 2>/dev/null | LC_ALL=C sed 's/[^[:print:]]/?/g' | tr -d '\n'
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
    case $1 in https://*) secure=yes ;; *) secure=no ;; esac
    if [ "$downloader" = curl ]; then
        curl_get "$1" "$2"
    elif [ "$wget_is_gnu" = yes ]; then
        gnu_wget_get "$1" "$2"
    else
        busybox_wget_get "$1" "$2"
    fi
}

# $1 quoted for a curl configuration file (in double quotes, `\` and `"` escaped).
config_quoted() {
    printf '%s' "$1" | sed 's/[\\"]/\\&/g'
}

curl_get() {
    # An https source is never left for http on a redirect. The URL goes in curl's
    # configuration, read from its standard input, not on its command line (ps).
    if [ "$secure" = yes ]; then redirects='=https'; else redirects='=http,https'; fi
    printf 'url = "%s"\n' "$(config_quoted "$1")" |
        curl --fail --silent --show-error --location --globoff --max-redirs 10 \
            --proto '=http,https' --proto-redir "$redirects" \
            --connect-timeout "$stall" --speed-limit 1024 --speed-time "$stall" \
            --max-filesize 268435456 --output "$2" --config - 2>"$tmp/download.err" ||
        die "cannot download $(shown "$1"): $(last_line "$tmp/download.err")"
}

# What wget said in file $1 (with -S, the heads of the responses, indented, then its own
# lines): its last line of its own (without GNU wget's date and time), else the last
# response's status line.
wget_said() {
    awk '/^  / { if ($1 ~ /^HTTP\//) { sub(/^ +/, ""); status = $0 } next }
        { said = $0 } END { print (said != "" ? said : status) }' "$1" |
        LC_ALL=C sed 's/[^[:print:]]/?/g; s/^[0-9][0-9-]* [0-9][0-9:]* //' | tr -d '\n'
}

# The URL a Location $2 names, read against the URL $1 (RFC 3986, section 5.2, without
# removing dot segments: wget does that): the scheme lower-cased, the fragment dropped.
resolved() {
    base_scheme=${1%%://*}
    base_rest=${1#*://}
    base_authority=${base_rest%%[/?#]*}
    base_path=${base_rest#"$base_authority"}
    base_path=${base_path%%[?#]*}
    ref=${2%%#*}
    case $ref in
        //*) printf '%s:%s\n' "$base_scheme" "$ref" ;;
        /*) printf '%s://%s%s\n' "$base_scheme" "$base_authority" "$ref" ;;
        \?*) printf '%s://%s%s%s\n' "$base_scheme" "$base_authority" "$base_path" "$ref" ;;
        *)
            case ${ref%%[/?#]*} in
                *:*) printf '%s:%s\n' "$(printf '%s' "${ref%%:*}" | LC_ALL=C tr '[:upper:]' '[:lower:]')" "${ref#*:}" ;;
                *) printf '%s://%s%s/%s\n' "$base_scheme" "$base_authority" "${base_path%/*}" "$ref" ;;
            esac
            ;;
    esac
}

# GNU wget follows no redirect (--max-redirect=0): each is followed here, at most 10, and a
# Location that leaves https:// (or http and https) is refused before it is requested. The
# URL goes on wget's standard input (-i -), not on its command line (ps). -T is its read
# timeout; -nv leaves its errors ("failed: Connection refused.") and little else.
gnu_wget_get() {
    url=$1
    hops=0
    while :; do
        status=0
        printf '%s\n' "$url" |
            LC_ALL=C wget -nv -S --max-redirect=0 -T "$stall" -O "$2" -i - 2>"$tmp/download.err" ||
            status=$?
        # The last response's status and Location.
        answer=$(awk '/^  HTTP\// { code = $2; location = ""; next }
            tolower($0) ~ /^  location:/ && location == "" {
                sub(/^  [^:]*:[ \t]*/, ""); sub(/[ \t\r]+$/, ""); location = $0 }
            END { print code " " location }' "$tmp/download.err")
        case ${answer%% *} in
            301 | 302 | 303 | 307 | 308) ;;
            *)
                [ "$status" -eq 0 ] && return 0
                said=$(wget_said "$tmp/download.err")
                die "cannot download $(shown "$1"): ${said:-wget exited with status $status}"
                ;;
        esac
        location=${answer#* }
        [ -n "$location" ] || die "cannot download $(shown "$1"): a redirect without a Location"
        hops=$((hops + 1))
        [ "$hops" -le 10 ] || die "cannot download $(shown "$1"): more than 10 redirects"
        url=$(resolved "$url" "$location")
        case $url in
            https://*) ;;
            http://*)
                [ "$secure" = no ] ||
                    die "cannot download $(shown "$1"): it redirects to $(shown "$url"), not https://: refused"
                ;;
            *) die "cannot download $(shown "$1"): it redirects to $(shown "$url"), not http:// or https://: refused" ;;
        esac
    done
}

# BusyBox's wget follows redirects itself (at most 5) and cannot be told not to: its -S lines
# say where it went, and its file is refused when a Location left https:// (or http and
# https). A Location not starting with `/` or a scheme it knows is taken by it as http://HOST.
# It has no read timeout (the BusyBox of Debian 12 crashes on -T, being built without it; see
# https://github.com/docker-easyconnect/docker-easyconnect/pull/369).
busybox_wget_get() {
    status=0
    LC_ALL=C wget -q -S -O "$2" "$1" 2>"$tmp/download.err" || status=$?
    left=$(awk -v secure="$secure" 'tolower($0) ~ /^  location:/ {
            sub(/^  [^:]*:[ \t]*/, ""); sub(/[ \t\r]+$/, "")
            if ($0 ~ /^\// || $0 ~ /^https:\/\// || (secure == "no" && $0 ~ /^http:\/\//)) next
            print; exit }' "$tmp/download.err")
    if [ -n "$left" ]; then
        if [ "$secure" = yes ]; then
            die "cannot download $(shown "$1"): it redirects to $(shown "$left"), not https://: refused"
        fi
        die "cannot download $(shown "$1"): it redirects to $(shown "$left"), not http:// or https://: refused"
    fi
    if [ "$status" -ne 0 ]; then
        said=$(wget_said "$tmp/download.err")
        die "cannot download $(shown "$1"): ${said:-wget exited with status $status}"
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
    if ! LC_ALL=C mkdir -- "$1" 2>"$tmp/mkdir.err"; then
        # Made meanwhile by another install (or anything else): there, and not this one's.
        if [ -d "$1" ]; then return 0; fi
        die "cannot make the directory $(shown "$1"): $(reason_of "$tmp/mkdir.err")"
    fi
    created="$1
$created"
}

# The name a file is copied to beside its place, before the rename.
staged_name() {
    echo "$(dirname -- "$1")/.$(basename -- "$1").install-$$"
}

# The name the file in a place is kept under beside it, until the new one is in every place.
kept_name() {
    echo "$(dirname -- "$1")/.$(basename -- "$1").install-old-$$"
}

# stage SOURCE DESTINATION MODE: SOURCE copied beside DESTINATION, with MODE.
stage() {
    if [ -d "$2" ]; then die "cannot install $(shown "$2"): it is a directory"; fi
    temp=$(staged_name "$2")
    staged="$temp
$staged"
    LC_ALL=C cp -- "$1" "$temp" 2>"$tmp/cp.err" ||
        die "cannot write to $(shown "$(dirname -- "$2")"): $(reason_of "$tmp/cp.err")"
    LC_ALL=C chmod -- "$3" "$temp" 2>"$tmp/cp.err" ||
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
    if [ "$downloader" = wget ] && [ "$wget_is_gnu" = no ]; then
        from_rest=${from#*://}
        case ${from_rest%%[/?#]*} in
            *@*) die "$from_name $(shown "$from") has a user or password in it, which BusyBox's wget would show to ps on its command line: install curl or GNU wget" ;;
        esac
    fi
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
    # mktemp's own message, kept for the one line (it is not in $tmp, which is not there).
    made=$(LC_ALL=C mktemp -d "${TMPDIR:-/tmp}/retry-install.XXXXXX" 2>&1) ||
        die "cannot make a temporary directory in $(shown "${TMPDIR:-/tmp}"): $(printf '%s\n' "$made" |
            sed -n '$p' | LC_ALL=C sed 's/[^[:print:]]/?/g; s/.*: //')"
    tmp=$made

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
        die "cannot read $archive: $(first_line "$tmp/tar.err")"
    awk -v top="$name/" 'index($0, top) != 1 || $0 ~ /(^|\/)\.\.(\/|$)/ { bad = 1 } END { exit bad }' \
        "$tmp/names" || die "$archive holds a path outside $name/ or with '..': refused"
    LC_ALL=C tar -tvzf "$tmp/$archive" >"$tmp/listing" 2>"$tmp/tar.err" ||
        die "cannot read $archive: $(first_line "$tmp/tar.err")"
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
    ) 2>"$tmp/tar.err" || die "cannot unpack $archive: $(first_line "$tmp/tar.err")"
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
    # Every new file is beside its place. Each file in a place is kept beside it (a hard link,
    # else a copy), then each new one renamed over it, each rename atomic: a failure from here
    # on puts every kept file back (cleanup).
    set -f
    old_ifs=$IFS
    IFS='
'
    for dest in $places; do
        if [ -e "$dest" ] || [ -h "$dest" ]; then
            old=$(kept_name "$dest")
            kept="$old
$kept"
            { LC_ALL=C ln -- "$dest" "$old" || LC_ALL=C cp -p -- "$dest" "$old"; } 2>"$tmp/ln.err" ||
                die "cannot install $(shown "$dest"): $(reason_of "$tmp/ln.err")"
        fi
    done
    for dest in $places; do
        replaced="$dest
$replaced"
        LC_ALL=C mv -f -- "$(staged_name "$dest")" "$dest" 2>"$tmp/mv.err" ||
            die "cannot install $(shown "$dest"): $(reason_of "$tmp/mv.err")"
    done
    # Installed: nothing to put back (the list emptied first, so that a signal now undoes
    # nothing), then the kept files go.
    replaced=''
    staged=''
    created=''
    for old in $kept; do rm -f -- "$old" 2>/dev/null || true; done
    kept=''
    IFS=$old_ifs
    set +f

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
