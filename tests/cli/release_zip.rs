//! The Windows release archive: `dist/windows-zip.sh`, the part of `dist/release.sh` that packs
//! retry.exe into `retry-tool-VERSION-x86_64-pc-windows-gnu.zip` and writes its `.sha256`, run
//! on small inputs in a scratch directory: a tiny Windows program linked by MinGW-w64's gcc
//! standing in for retry.exe (the script refuses anything that is not an x86-64 PE32+ program),
//! and a small tree of the repository's shape, or the repository's own files. The archive is
//! read back by the zip format's central directory (PKWARE's APPNOTE.TXT, 4.3.12 and 4.3.16),
//! parsed here, and its compressed data checked by python3's zipfile. `dist/test-release.sh`
//! checks the archive a whole `dist/release.sh` made.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::helpers::clear_outside_env;
use crate::tools::{self, require};

const SCRIPT: &str = "dist/windows-zip.sh";
/// A version with a pre-release part, as a tag may carry.
const VERSION: &str = "1.2.3-rc.1";
const NAME: &str = "retry-tool-1.2.3-rc.1-x86_64-pc-windows-gnu";
/// 2023-11-14 22:13:21 UTC: an odd second, which a DOS time cannot hold.
const EPOCH: &str = "1700000001";

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A small Windows program (`int main(void) { return 0; }`), linked by MinGW-w64's gcc into
/// `dir`, or `None` (the test is skipped) without gcc or python3.
fn windows_exe(dir: &Path) -> Option<PathBuf> {
    if !require(&[tools::MINGW_GCC, tools::PYTHON3]) {
        return None;
    }
    let source = dir.join("tiny.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let exe = dir.join("tiny.exe");
    let out = Command::new(tools::MINGW_GCC.name)
        .args(["-O2", "-s", "-o"])
        .arg(&exe)
        .arg(&source)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// A tree of the repository's shape with small files, and what must stay out of the archive
/// (the Unix completions, the man page, a file of docs/ that is neither Markdown nor SVG).
fn small_tree(root: &Path) {
    let files = [
        ("README.md", "# retry\n[guide](docs/usage.md)\n"),
        ("CHANGELOG.md", "## [1.2.3-rc.1]\n"),
        ("LICENSE-MIT", "MIT\n"),
        ("LICENSE-APACHE", "Apache-2.0\n"),
        ("docs/usage.md", "# Usage\n"),
        ("docs/chart.svg", "<svg/>\n"),
        ("docs/notes.txt", "not shipped\n"),
        (
            "completions/_retry.ps1",
            "Register-ArgumentCompleter -Native -CommandName 'retry'\n",
        ),
        ("completions/retry.bash", "complete -F _retry retry\n"),
        ("man/retry.1", ".TH RETRY 1\n"),
    ];
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// `dist/windows-zip.sh VERSION EXE OUT ROOT` (no ROOT: the repository) with SOURCE_DATE_EPOCH
/// and TZ as given, hermetic.
fn pack(exe: &Path, out: &Path, root: Option<&Path>, epoch: &str, tz: &str) -> Output {
    let mut cmd = Command::new(repository().join(SCRIPT));
    clear_outside_env(&mut cmd);
    cmd.arg(VERSION)
        .arg(exe)
        .arg(out)
        .args(root)
        .env("SOURCE_DATE_EPOCH", epoch)
        .env("TZ", tz)
        .current_dir(out)
        .stdin(Stdio::null());
    cmd.output().unwrap()
}

/// [`pack`], which must succeed and print the archive's path.
fn packed(exe: &Path, out: &Path, root: Option<&Path>, tz: &str) -> Vec<u8> {
    let run = pack(exe, out, root, EPOCH, tz);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{SCRIPT} failed: {stderr}");
    let zip = out.join(format!("{NAME}.zip"));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim_end(),
        zip.display().to_string(),
        "the last line names the archive"
    );
    std::fs::read(zip).unwrap()
}

/// One entry of a zip's central directory.
#[derive(Debug)]
struct Entry {
    name: String,
    /// The high byte of "version made by": 3 is Unix (APPNOTE 4.4.2).
    made_by: u8,
    method: u16,
    dos_time: u16,
    dos_date: u16,
    crc: u32,
    size: u32,
    /// The Unix mode, in the high 16 bits of the external attributes.
    mode: u32,
    /// The lengths of the extra fields, in the central directory and the local header.
    extra: (u16, u16),
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The entries of a zip without an archive comment, in their order.
fn entries(zip: &[u8]) -> Vec<Entry> {
    let end = zip.len() - 22;
    assert_eq!(u32_at(zip, end), 0x0605_4b50, "end of central directory");
    let count = usize::from(u16_at(zip, end + 10));
    let mut at = u32_at(zip, end + 16) as usize;
    let mut list = Vec::new();
    for _ in 0..count {
        assert_eq!(
            u32_at(zip, at),
            0x0201_4b50,
            "central directory header at {at}"
        );
        let name_len = usize::from(u16_at(zip, at + 28));
        let extra_len = u16_at(zip, at + 30);
        let comment_len = usize::from(u16_at(zip, at + 32));
        let local = u32_at(zip, at + 42) as usize;
        let name = String::from_utf8(zip[at + 46..at + 46 + name_len].to_vec()).unwrap();
        assert_eq!(u32_at(zip, local), 0x0403_4b50, "local header of {name}");
        let local_name = &zip[local + 30..local + 30 + usize::from(u16_at(zip, local + 26))];
        assert_eq!(local_name, name.as_bytes(), "local and central names");
        list.push(Entry {
            made_by: zip[at + 5],
            method: u16_at(zip, at + 10),
            dos_time: u16_at(zip, at + 12),
            dos_date: u16_at(zip, at + 14),
            crc: u32_at(zip, at + 16),
            size: u32_at(zip, at + 24),
            mode: u32_at(zip, at + 38) >> 16,
            extra: (extra_len, u16_at(zip, local + 28)),
            name,
        });
        at += 46 + name_len + usize::from(extra_len) + comment_len;
    }
    list
}

/// CRC-32 (ISO-HDLC, the zip format's: reflected 0xEDB88320, inverted in and out).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// python3's zipfile inflates every entry and checks its CRC: `None` when all are right.
fn python_testzip(zip: &Path) -> String {
    let out = Command::new(tools::PYTHON3.name)
        .args([
            "-c",
            "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).testzip())",
        ])
        .arg(zip)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `sha256sum FILE`'s hash.
fn sha256(file: &Path) -> String {
    let out = Command::new("sha256sum").arg(file).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

/// Where each archived file came from, in `root`, with `exe` as retry.exe.
fn source_of(name: &str, root: &Path, exe: &Path) -> PathBuf {
    let inside = name.strip_prefix(&format!("{NAME}/")).unwrap();
    match inside {
        "retry.exe" => exe.to_path_buf(),
        "complete/_retry.ps1" => root.join("completions/_retry.ps1"),
        _ => root.join(inside),
    }
}

#[test]
fn the_windows_zip_holds_retry_exe_the_docs_and_the_powershell_completion_under_one_directory() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(exe) = windows_exe(scratch.path()) else {
        return;
    };
    let root = scratch.path().join("root");
    small_tree(&root);
    let out = scratch.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let zip = packed(&exe, &out, Some(&root), "UTC");

    let list = entries(&zip);
    let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
    let expected: Vec<String> = [
        "",
        "CHANGELOG.md",
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "README.md",
        "complete/",
        "complete/_retry.ps1",
        "docs/",
        "docs/chart.svg",
        "docs/usage.md",
        "retry.exe",
    ]
    .iter()
    .map(|n| format!("{NAME}/{n}"))
    .collect();
    assert_eq!(names, expected, "every entry, in this order");

    // 2023-11-14 22:13:21 UTC as a DOS time: 22:13:20, the second rounded down to an even one.
    let (date, time) = (
        ((2023 - 1980) << 9) | (11 << 5) | 14,
        (22 << 11) | (13 << 5) | (20 / 2),
    );
    for e in &list {
        assert!(
            !e.name.starts_with('/')
                && !e.name.contains('\\')
                && !e.name.split('/').any(|part| part == ".." || part == "."),
            "{e:?}"
        );
        assert_eq!((e.dos_date, e.dos_time), (date, time), "{e:?}");
        assert_eq!(e.made_by, 3, "made by Unix, so that its modes apply: {e:?}");
        assert_eq!(
            e.extra,
            (0, 0),
            "no extra field (a file's own times): {e:?}"
        );
        if e.name.ends_with('/') {
            assert_eq!((e.mode, e.size, e.method), (0o40755, 0, 0), "{e:?}");
            continue;
        }
        let bytes = std::fs::read(source_of(&e.name, &root, &exe)).unwrap();
        assert_eq!(
            (e.crc, e.size as usize),
            (crc32(&bytes), bytes.len()),
            "{e:?}"
        );
        assert_eq!(e.method, 8, "deflated: {e:?}");
        let mode = if e.name.ends_with("/retry.exe") {
            0o100755
        } else {
            0o100644
        };
        assert_eq!(e.mode, mode, "{e:?}");
    }
    let zip_path = out.join(format!("{NAME}.zip"));
    assert_eq!(
        python_testzip(&zip_path),
        "None",
        "every entry inflates to its CRC"
    );

    // The .sha256 as sha256sum writes it, as for the .tar.gz archives: `sha256sum -c` in OUT
    // checks it.
    let line = std::fs::read_to_string(out.join(format!("{NAME}.zip.sha256"))).unwrap();
    assert_eq!(line, format!("{}  {NAME}.zip\n", sha256(&zip_path)));
    let check = Command::new("sha256sum")
        .args(["--quiet", "-c", &format!("{NAME}.zip.sha256")])
        .current_dir(&out)
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
}

#[test]
fn the_windows_zip_is_the_same_bytes_whatever_the_files_times_modes_and_the_time_zone() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let Some(exe) = windows_exe(scratch.path()) else {
        return;
    };
    let root = scratch.path().join("root");
    small_tree(&root);
    let (first, second) = (scratch.path().join("first"), scratch.path().join("second"));
    std::fs::create_dir(&first).unwrap();
    std::fs::create_dir(&second).unwrap();
    let before = packed(&exe, &first, Some(&root), "UTC");
    // Other times and modes on the inputs, and a zone 14 hours from UTC.
    let readme = root.join("README.md");
    std::fs::write(&readme, std::fs::read(&readme).unwrap()).unwrap();
    std::fs::set_permissions(&readme, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o700)).unwrap();
    let after = packed(&exe, &second, Some(&root), "Pacific/Kiritimati");
    assert!(before == after, "two runs on the same inputs differ");
    // Another SOURCE_DATE_EPOCH gives other bytes: the time is the epoch's.
    let run = pack(&exe, &second, Some(&root), "1800000000", "UTC");
    assert!(run.status.success());
    assert!(std::fs::read(second.join(format!("{NAME}.zip"))).unwrap() != before);
}

#[test]
fn the_windows_zip_of_this_repository_carries_the_whole_guide_the_readme_links_to() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(exe) = windows_exe(scratch.path()) else {
        return;
    };
    let zip = packed(&exe, scratch.path(), None, "UTC");
    let names: Vec<String> = entries(&zip).into_iter().map(|e| e.name).collect();
    let root = repository();
    let mut guide = 0;
    for file in std::fs::read_dir(root.join("docs")).unwrap() {
        let file = file.unwrap().file_name().into_string().unwrap();
        if file.ends_with(".md") || file.ends_with(".svg") {
            guide += 1;
            assert!(
                names.contains(&format!("{NAME}/docs/{file}")),
                "docs/{file}"
            );
        }
    }
    // The directories, retry.exe, the four files at the top, the completion, and the guide.
    assert_eq!(names.len(), 3 + 1 + 4 + 1 + guide, "{names:#?}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for link in readme.split("](docs/").skip(1) {
        let page = link.split([')', '#']).next().unwrap();
        assert!(
            names.contains(&format!("{NAME}/docs/{page}")),
            "README links docs/{page}"
        );
    }
    let ps1 = names.iter().find(|n| n.ends_with("/complete/_retry.ps1"));
    assert!(ps1.is_some(), "{names:#?}");
}

#[test]
fn the_windows_zip_refuses_a_program_that_is_not_for_windows_and_leaves_no_archive() {
    if !require(&[tools::PYTHON3]) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    small_tree(&root);
    // This test program: ELF, not PE.
    let elf = std::env::current_exe().unwrap();
    let run = pack(&elf, scratch.path(), Some(&root), EPOCH, "UTC");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not an x86-64 Windows program (PE32+)"),
        "{stderr}"
    );
    assert!(!scratch.path().join(format!("{NAME}.zip")).exists());
    assert!(!scratch.path().join(format!("{NAME}.zip.sha256")).exists());
    // And without SOURCE_DATE_EPOCH it refuses to pick a time itself.
    let run = pack(&elf, scratch.path(), Some(&root), "", "UTC");
    assert!(String::from_utf8_lossy(&run.stderr).contains("SOURCE_DATE_EPOCH"));
}
