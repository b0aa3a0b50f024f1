//! The release files the tests serve: small archives of the layout `dist/release.sh` makes
//! (`retry-tool-VERSION-TARGET.tar.gz` holding `retry-tool-VERSION-TARGET/` with `retry`,
//! `doc/retry.1`, `complete/` and the top-level documents), each with its `.sha256` written as
//! `sha256sum` writes it, made here rather than by a whole `dist/release.sh` run (minutes of
//! release builds). The archive holds the real retry, the binary users run
//! (`RETRY_TESTS_RELEASE_BINARY`, as `.ci/run` sets it, else the one cargo built for the
//! tests), the repository's man page and completions. The tar is written here (ustar, so that
//! the adversarial archives, with `..`, links and other kinds, are as easy to make), then packed
//! by the system's gzip; the checksums are the system's sha256sum (or `shasum -a 256`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

/// One member of an archive.
pub enum Entry {
    /// A regular file with its bytes and mode.
    File(String, Vec<u8>, u32),
    /// A directory (the name without its trailing `/`).
    Dir(String),
    /// A symbolic link to the target.
    Symlink(String, String),
    /// A hard link to the target.
    Hardlink(String, String),
}

/// The repository's root.
pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// This machine's release target, and the runner's `RUNNER_OS` and `RUNNER_ARCH` for it (None
/// where no GitHub runner is of this platform).
pub fn host() -> (&'static str, Option<(&'static str, &'static str)>) {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("x86_64-unknown-linux-gnu", Some(("Linux", "X64"))),
        ("linux", "aarch64") => ("aarch64-unknown-linux-gnu", Some(("Linux", "ARM64"))),
        ("macos", "x86_64") => ("x86_64-apple-darwin", Some(("macOS", "X64"))),
        ("macos", "aarch64") => ("aarch64-apple-darwin", Some(("macOS", "ARM64"))),
        ("freebsd", "x86_64") => ("x86_64-unknown-freebsd", None),
        (os, arch) => panic!("no release target for {os} {arch}"),
    }
}

/// The binary users run: `RETRY_TESTS_RELEASE_BINARY` (relative to the package's root, as
/// `.ci/run` names `target/release/retry`), else the one cargo built for these tests.
pub fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("RETRY_TESTS_RELEASE_BINARY") {
        Some(path) => repository().join(path),
        None => assert_cmd::cargo::cargo_bin!("retry").to_path_buf(),
    })
}

/// `bytes` as a tar archive of `entries` (ustar; the members owned by root, dated 2023-11-14).
pub fn tar(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in entries {
        let (name, kind, link, data, mode): (String, u8, &str, &[u8], u32) = match entry {
            Entry::File(name, bytes, mode) => (name.clone(), b'0', "", bytes, *mode),
            Entry::Dir(name) => (format!("{name}/"), b'5', "", &[], 0o755),
            Entry::Symlink(name, target) => (name.clone(), b'2', target, &[], 0o777),
            Entry::Hardlink(name, target) => (name.clone(), b'1', target, &[], 0o644),
        };
        assert!(
            name.len() < 100 && link.len() < 100,
            "{name}: too long for ustar"
        );
        let mut header = [0u8; 512];
        let mut put = |at: usize, field: &[u8]| header[at..at + field.len()].copy_from_slice(field);
        put(0, name.as_bytes());
        put(100, format!("{mode:07o}\0").as_bytes());
        put(108, b"0000000\0");
        put(116, b"0000000\0");
        put(124, format!("{:011o}\0", data.len()).as_bytes());
        put(136, format!("{:011o}\0", 1_700_000_000u64).as_bytes());
        put(148, b"        ");
        put(156, &[kind]);
        put(157, link.as_bytes());
        put(257, b"ustar\0");
        put(263, b"00");
        put(265, b"root");
        put(297, b"root");
        let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// `bytes` through the system's `gzip -1`.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    filter(Command::new("gzip").arg("-1").arg("-c"), bytes)
}

/// `bytes` through `command`'s stdin and stdout.
fn filter(command: &mut Command, bytes: &[u8]) -> Vec<u8> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the filter");
    let mut stdin = child.stdin.take().unwrap();
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{command:?}");
    out.stdout
}

/// The SHA-256 of `bytes` in lower-case hex (sha256sum, else `shasum -a 256`).
pub fn sha256(bytes: &[u8]) -> String {
    let out = if crate::tools::on_path("sha256sum") {
        filter(&mut Command::new("sha256sum"), bytes)
    } else {
        filter(Command::new("shasum").args(["-a", "256"]), bytes)
    };
    String::from_utf8(out).unwrap()[..64].to_string()
}

/// The `.sha256` of `bytes` named `name`, as `sha256sum NAME` writes it (dist/release.sh).
pub fn checksum_file(name: &str, bytes: &[u8]) -> Vec<u8> {
    format!("{}  {name}\n", sha256(bytes)).into_bytes()
}

/// The members of a release archive named `name` (`retry-tool-VERSION-TARGET`), with `binary`
/// as its `retry`.
pub fn members(name: &str, binary: Vec<u8>) -> Vec<Entry> {
    let root = repository();
    let read = |path: &str| std::fs::read(root.join(path)).unwrap();
    let mut entries = vec![
        Entry::Dir(name.to_string()),
        Entry::File(format!("{name}/retry"), binary, 0o755),
        Entry::Dir(format!("{name}/doc")),
        Entry::File(format!("{name}/doc/retry.1"), read("man/retry.1"), 0o644),
        Entry::Dir(format!("{name}/complete")),
    ];
    for file in [
        "retry.bash",
        "_retry",
        "retry.fish",
        "retry.elv",
        "_retry.ps1",
    ] {
        let text = read(&format!("completions/{file}"));
        entries.push(Entry::File(format!("{name}/complete/{file}"), text, 0o644));
    }
    for file in ["README.md", "CHANGELOG.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        entries.push(Entry::File(format!("{name}/{file}"), read(file), 0o644));
    }
    entries
}

/// A release's two files for one target: the archive and its `.sha256`.
#[derive(Clone)]
pub struct Release {
    /// The version, as in the names (`0.1.0`).
    pub version: String,
    /// The target (`x86_64-unknown-linux-gnu`).
    pub target: String,
    /// `retry-tool-VERSION-TARGET.tar.gz`'s bytes.
    pub archive: Arc<Vec<u8>>,
    /// Its `.sha256`'s bytes.
    pub checksum: Arc<Vec<u8>>,
}

impl Release {
    /// A release of `entries` (its checksum right).
    pub fn of(version: &str, target: &str, entries: &[Entry]) -> Release {
        let archive = gzip(&tar(entries));
        let name = format!("retry-tool-{version}-{target}.tar.gz");
        Release {
            version: version.into(),
            target: target.into(),
            checksum: Arc::new(checksum_file(&name, &archive)),
            archive: Arc::new(archive),
        }
    }

    /// `retry-tool-VERSION-TARGET`.
    pub fn name(&self) -> String {
        format!("retry-tool-{}-{}", self.version, self.target)
    }

    /// `retry-tool-VERSION-TARGET.tar.gz`.
    pub fn archive_name(&self) -> String {
        format!("{}.tar.gz", self.name())
    }

    /// The file of this release called `file` (the archive or its `.sha256`), if it is one.
    pub fn file(&self, file: &str) -> Option<Arc<Vec<u8>>> {
        let archive = self.archive_name();
        if file == archive {
            Some(Arc::clone(&self.archive))
        } else if file == format!("{archive}.sha256") {
            Some(Arc::clone(&self.checksum))
        } else {
            None
        }
    }

    /// Writes both files into `dir` (for a `file://` source).
    pub fn write_to(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(self.archive_name()), &*self.archive).unwrap();
        std::fs::write(
            dir.join(format!("{}.sha256", self.archive_name())),
            &*self.checksum,
        )
        .unwrap();
    }
}

/// This version's release for this machine, with the real binary: made once per test run.
pub fn release() -> &'static Release {
    static RELEASE: OnceLock<Release> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let version = env!("CARGO_PKG_VERSION");
        let target = host().0;
        let name = format!("retry-tool-{version}-{target}");
        let binary = std::fs::read(binary()).expect("read the retry binary");
        Release::of(version, target, &members(&name, binary))
    })
}

/// The same release with a small stand-in for the binary (a script that says `retry VERSION`
/// to `--version`), for the tests whose archive is refused, cut or never run: each run of
/// install.sh then handles kilobytes, not the megabytes of the real binary.
pub fn small() -> &'static Release {
    static RELEASE: OnceLock<Release> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let version = env!("CARGO_PKG_VERSION");
        let target = host().0;
        let name = format!("retry-tool-{version}-{target}");
        let binary = format!("#!/bin/sh\necho 'retry {version}'\n").into_bytes();
        Release::of(version, target, &members(&name, binary))
    })
}
