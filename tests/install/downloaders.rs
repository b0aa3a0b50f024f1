//! The three downloaders `dist/install.sh` uses, each as it is found: curl (under dash), GNU
//! wget with no curl on PATH (under dash), BusyBox's wget (under BusyBox's ash, its applets
//! alone on PATH, and openssl, through which it speaks TLS); and an https:// server for them:
//! `tls_relay.py` (python3's ssl) in front of a [`Server`], with a self-signed certificate for
//! `localhost` that openssl makes once, which each downloader is told to trust the way it reads
//! one from its environment: curl `CURL_CA_BUNDLE`, GNU wget a `WGETRC` with `ca_certificate`,
//! `openssl s_client` (BusyBox) `SSL_CERT_FILE`. Nothing in the script knows of it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use crate::release::repository;
use crate::server::Server;
use crate::support::{Shell, shell_path, which};
use crate::tools::{self, Tool, require};

/// The tools `dist/install.sh` needs beside a downloader.
pub const SCRIPT_TOOLS: &[&str] = &[
    "uname",
    "sed",
    "tr",
    "grep",
    "awk",
    "cp",
    "mv",
    "ln",
    "rm",
    "rmdir",
    "mkdir",
    "chmod",
    "dirname",
    "basename",
    "mktemp",
    "tar",
    "gzip",
    "sha256sum",
    "cat",
];

/// A directory under cargo's scratch directory for tests named `name`, holding a link to each
/// of `programs` (made once, beside it, then renamed into place).
pub fn linked_tools(name: &str, programs: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if dir.join(programs[programs.len() - 1]).exists() {
        return dir;
    }
    let made = dir.with_extension(format!(
        "{}.{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&made);
    std::fs::create_dir_all(&made).unwrap();
    for program in programs {
        std::os::unix::fs::symlink(which(program), made.join(program)).unwrap();
    }
    if std::fs::rename(&made, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&made);
    }
    dir
}

/// A downloader `dist/install.sh` finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Downloader {
    /// curl, under dash.
    Curl,
    /// GNU wget, and no curl on PATH, under dash.
    GnuWget,
    /// BusyBox's wget, under BusyBox's ash.
    Busybox,
}

impl Downloader {
    /// Every downloader.
    pub const ALL: [Downloader; 3] = [Downloader::Curl, Downloader::GnuWget, Downloader::Busybox];

    /// Whether the tools of every downloader and of the https:// server are here.
    pub fn all_here() -> bool {
        let needed: [Tool; 5] = [
            tools::DASH,
            tools::BUSYBOX,
            tools::WGET,
            tools::OPENSSL,
            tools::PYTHON3,
        ];
        require(&needed) && require(&[tools::CURL])
    }

    /// The shell the script runs under.
    pub fn shell(self) -> Shell {
        match self {
            Downloader::Curl | Downloader::GnuWget => Shell::Dash,
            Downloader::Busybox => Shell::Busybox,
        }
    }

    /// The environment of a run: PATH, and the trust of the https:// server's certificate.
    pub fn env(self) -> Vec<(&'static str, String)> {
        let trust = trust();
        let path = match self {
            Downloader::Curl => std::env::var("PATH").unwrap(),
            Downloader::GnuWget => {
                let mut programs = SCRIPT_TOOLS.to_vec();
                programs.push("wget");
                linked_tools("install-tools-gnu-wget", &programs)
                    .display()
                    .to_string()
            }
            Downloader::Busybox => format!(
                "{}:{}",
                shell_path(Shell::Busybox),
                linked_tools("install-tools-openssl", &["openssl"]).display()
            ),
        };
        vec![
            ("PATH", path),
            ("CURL_CA_BUNDLE", trust.cert.display().to_string()),
            ("WGETRC", trust.wgetrc.display().to_string()),
            ("SSL_CERT_FILE", trust.cert.display().to_string()),
        ]
    }
}

/// The certificate of the https:// server, its key, and a wgetrc trusting it.
pub struct Trust {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub wgetrc: PathBuf,
}

/// The certificate, made once (for `localhost`, valid for 100 years) and kept.
pub fn trust() -> &'static Trust {
    static TRUST: OnceLock<Trust> = OnceLock::new();
    TRUST.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install-tls");
        let trust = |dir: &Path| Trust {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
            wgetrc: dir.join("wgetrc"),
        };
        if dir.join("wgetrc").exists() {
            return trust(&dir);
        }
        let made = dir.with_extension(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&made);
        std::fs::create_dir_all(&made).unwrap();
        let out = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "36500",
            ])
            .args([
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
            ])
            .arg("-keyout")
            .arg(made.join("key.pem"))
            .arg("-out")
            .arg(made.join("cert.pem"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "openssl req: {out:?}");
        std::fs::write(
            made.join("wgetrc"),
            format!("ca_certificate = {}\n", dir.join("cert.pem").display()),
        )
        .unwrap();
        if std::fs::rename(&made, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&made);
        }
        trust(&dir)
    })
}

/// The https:// server: TLS on 127.0.0.1, relayed to a [`Server`]; stops when dropped.
pub struct Tls {
    relay: Child,
    port: u16,
}

impl Tls {
    /// TLS in front of `backend`.
    pub fn start(backend: &Server) -> Tls {
        let trust = trust();
        let backend_port = backend.url().rsplit(':').next().unwrap().to_string();
        let mut relay = Command::new("python3")
            .arg(repository().join("tests/install/tls_relay.py"))
            .arg(&trust.cert)
            .arg(&trust.key)
            .arg(backend_port)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(relay.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| {
            let _ = relay.kill();
            panic!("tls_relay.py printed {line:?}, not its port")
        });
        Tls { relay, port }
    }

    /// `https://localhost:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("https://localhost:{}", self.port)
    }
}

impl Drop for Tls {
    fn drop(&mut self) {
        drop(self.relay.stdin.take());
        let _ = self.relay.kill();
        let _ = self.relay.wait();
    }
}
