# The GitHub Action's step on Windows runners (action.yml runs it with pwsh): what install.sh
# beside it does on Linux and macOS, for the Windows release archive,
# retry-tool-VERSION-x86_64-pc-windows-gnu.zip (dist/windows-zip.sh), whose retry.exe it keeps in
# $RUNNER_TOOL_CACHE\retry\VERSION\x64\bin (x64.complete beside the x64 directory once whole), puts
# on GITHUB_PATH and names in GITHUB_OUTPUT (`path=`). The same inputs: INPUT_VERSION (empty:
# this checkout's Cargo.toml), ACTION_REPOSITORY, else GITHUB_REPOSITORY; RETRY_INSTALL_FROM (an
# http://, https:// or file:/// URL of a directory holding the .zip and its .sha256) instead of
# the GitHub release; RETRY_INSTALL_STALL_TIMEOUT. It downloads with curl.exe (part of Windows
# since Windows 10 1803), with the flags dist/install.sh gives curl, checks the SHA-256, and
# takes retry.exe alone out of the .zip, after checking that every name in it lies under its
# one directory. A failure is one `::error::` line and exit status 1, leaving nothing in the
# tool cache nor on the path. Tested by the release workflow on windows-latest (.ci/run has no
# PowerShell).
Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'

# The one line of a failure, escaped as the actions toolkit escapes a command's message.
function Fail([string] $Message) {
    $text = "retry action: $Message" -replace '%', '%25' -replace "`r", '%0D' -replace "`n", '%0A'
    Write-Output "::error::$text"
    exit 1
}

foreach ($var in 'RUNNER_OS', 'RUNNER_ARCH', 'RUNNER_TOOL_CACHE', 'GITHUB_PATH', 'GITHUB_OUTPUT') {
    if (-not [Environment]::GetEnvironmentVariable($var)) {
        Fail "$var is not set (this runs on a GitHub Actions runner)"
    }
}
if ($env:RUNNER_OS -cne 'Windows' -or $env:RUNNER_ARCH -cne 'X64') {
    Fail ("no retry release for this runner (RUNNER_OS $env:RUNNER_OS, RUNNER_ARCH " +
        "$env:RUNNER_ARCH); there are Linux X64 and ARM64, macOS X64 and ARM64, Windows X64")
}
$target = 'x86_64-pc-windows-gnu'
$root = (Resolve-Path -LiteralPath (Join-Path $PSScriptRoot '..\..')).Path

$version = "$env:INPUT_VERSION"
$versionFrom = 'the version input'
if (-not $version) {
    $cargo = Join-Path $root 'Cargo.toml'
    $found = Select-String -LiteralPath $cargo -Pattern '^version = "(.*)"$' | Select-Object -First 1
    if ($found) { $version = $found.Matches[0].Groups[1].Value }
    $versionFrom = $cargo
}
if ($version.StartsWith('v')) { $version = $version.Substring(1) }
if ($version -cnotmatch '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?\z') {
    Fail "${versionFrom}: '$version' is not a release version (like 1.2.3)"
}

$stall = "$env:RETRY_INSTALL_STALL_TIMEOUT"
if (-not $stall) { $stall = '30' }
if ($stall -cnotmatch '^[1-9][0-9]{0,3}\z' -or [int]$stall -gt 3600) {
    Fail "RETRY_INSTALL_STALL_TIMEOUT '$stall' is not a number of seconds (1 to 3600)"
}

$from = "$env:RETRY_INSTALL_FROM"
$fromName = 'RETRY_INSTALL_FROM'
if (-not $from) {
    $repository = "$env:ACTION_REPOSITORY"
    if (-not $repository) { $repository = "$env:GITHUB_REPOSITORY" }
    if (-not $repository) {
        Fail 'neither github.action_repository nor GITHUB_REPOSITORY names the repository of the release files; set RETRY_INSTALL_FROM'
    }
    $server = "$env:GITHUB_SERVER_URL"
    if (-not $server) { $server = 'https://github.com' }
    $from = "$server/$repository/releases/download/v$version"
    $fromName = 'the release URL'
}
if ($from -cnotmatch '^(https?://[^\s]+|file:///[^\r\n]+)\z') {
    Fail "$fromName '$from' is not an http://, https:// or file:/// URL of a directory"
}
$from = $from.TrimEnd('/')

$dir = Join-Path $env:RUNNER_TOOL_CACHE "retry\$version\x64"
$bin = Join-Path $dir 'bin'
$exe = Join-Path $bin 'retry.exe'

# Removes what an install that failed made in the tool cache.
function Remove-Partial {
    Remove-Item -LiteralPath $dir, "$dir.complete" -Recurse -Force -ErrorAction SilentlyContinue
    foreach ($d in (Join-Path $env:RUNNER_TOOL_CACHE "retry\$version"), (Join-Path $env:RUNNER_TOOL_CACHE 'retry')) {
        if ((Test-Path -LiteralPath $d) -and -not (Get-ChildItem -LiteralPath $d -Force)) {
            Remove-Item -LiteralPath $d -Force -ErrorAction SilentlyContinue
        }
    }
}

# The file at $Url into $Path: a file:/// URL is a local path; else curl.exe, as install.sh
# runs curl (an https source is never left for http on a redirect).
function Get-ReleaseFile([string] $Url, [string] $Path, [string] $Scratch) {
    if ($Url.StartsWith('file:///')) {
        Copy-Item -LiteralPath ([Uri]::new($Url).LocalPath) -Destination $Path
        return
    }
    $redirects = if ($Url.StartsWith('https://')) { '=https' } else { '=http,https' }
    $said = Join-Path $Scratch 'curl.err'
    & curl.exe --fail --silent --show-error --location --globoff --max-redirs 10 `
        --proto '=http,https' --proto-redir $redirects --connect-timeout $stall `
        --speed-limit 1024 --speed-time $stall --max-filesize 268435456 `
        --stderr $said --output $Path $Url
    if ($LASTEXITCODE -ne 0) {
        $line = Get-Content -LiteralPath $said -ErrorAction SilentlyContinue | Select-Object -Last 1
        throw "cannot download '$Url': $line"
    }
}

if ((Test-Path -LiteralPath "$dir.complete") -and (Test-Path -LiteralPath $exe)) {
    Write-Output "retry $version from the tool cache: $bin"
} else {
    Remove-Item -LiteralPath $dir, "$dir.complete" -Recurse -Force -ErrorAction SilentlyContinue
    $name = "retry-tool-$version-$target"
    $zip = "$name.zip"
    $scratch = Join-Path ([IO.Path]::GetTempPath()) ("retry-action-" + [Guid]::NewGuid())
    $failure = $null
    try {
        New-Item -ItemType Directory -Path $scratch | Out-Null
        Get-ReleaseFile "$from/$zip.sha256" (Join-Path $scratch "$zip.sha256") $scratch
        $first = Get-Content -LiteralPath (Join-Path $scratch "$zip.sha256") -TotalCount 1
        $expected = ("$first".Trim() -split '\s+')[0].ToLowerInvariant()
        if ($expected -cnotmatch '^[0-9a-f]{64}\z') {
            throw "'$from/$zip.sha256' is not a SHA-256 checksum file"
        }
        Get-ReleaseFile "$from/$zip" (Join-Path $scratch $zip) $scratch
        $actual = (Get-FileHash -LiteralPath (Join-Path $scratch $zip) -Algorithm SHA256).Hash.ToLowerInvariant()
        if ($actual -cne $expected) {
            throw "checksum mismatch: $zip has SHA-256 $actual, its .sha256 says $expected"
        }
        # ZipFile: loaded already in PowerShell 7; Windows PowerShell needs the assembly.
        try { Add-Type -AssemblyName System.IO.Compression.FileSystem } catch { }
        $archive = [IO.Compression.ZipFile]::OpenRead((Join-Path $scratch $zip))
        try {
            foreach ($entry in $archive.Entries) {
                $n = $entry.FullName
                if (-not $n.StartsWith("$name/", [StringComparison]::Ordinal) -or
                    $n -match '(^|[/\\])\.\.([/\\]|$)' -or $n.Contains('\') -or $n.Contains(':')) {
                    throw "$zip holds a path outside $name/ or with '..': refused"
                }
            }
            $entry = $archive.GetEntry("$name/retry.exe")
            if (-not $entry) { throw "$zip has no file $name/retry.exe" }
            New-Item -ItemType Directory -Force -Path $bin | Out-Null
            [IO.Compression.ZipFileExtensions]::ExtractToFile($entry, "$exe.part", $true)
        } finally {
            $archive.Dispose()
        }
        Move-Item -LiteralPath "$exe.part" -Destination $exe
        $said = & $exe --version
        if ($LASTEXITCODE -ne 0) { throw "the retry $version of $target does not run on this runner: $said" }
        New-Item -ItemType File -Path "$dir.complete" | Out-Null
    } catch {
        $failure = $_.Exception.Message
    }
    Remove-Item -LiteralPath $scratch -Recurse -Force -ErrorAction SilentlyContinue
    if ($null -ne $failure) {
        Remove-Partial
        Fail $failure
    }
}

Add-Content -LiteralPath $env:GITHUB_PATH -Value $bin -Encoding utf8
Add-Content -LiteralPath $env:GITHUB_OUTPUT -Value "path=$exe" -Encoding utf8
Write-Output "retry $version is on the path: $exe"
