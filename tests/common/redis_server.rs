//! A real `redis-server` on a free loopback port, started by a test and killed when dropped;
//! shared by the `budget` and `cli` test targets (each includes this file with `#[path]`).
//! Needs the Debian package `redis-server`; `.ci/run` installs it when missing.

// Each test target uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of our own, killed on drop.
pub struct RedisServer {
    child: Child,
    port: u16,
    password: Option<String>,
    _dir: tempfile::TempDir,
}

/// A port nobody listens on right now (bound to 127.0.0.1:0, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

fn answers_ping(port: u16, password: Option<&str>) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut request = String::new();
    if let Some(pw) = password {
        request.push_str(&format!("AUTH {pw}\r\n"));
    }
    request.push_str("PING\r\n");
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    if password.is_some() && (reader.read_line(&mut line).is_err() || line != "+OK\r\n") {
        return false;
    }
    line.clear();
    reader.read_line(&mut line).is_ok() && line == "+PONG\r\n"
}

impl RedisServer {
    /// Starts `redis-server` without persistence on a free loopback port and waits until it
    /// answers PING. Panics with a clear message when the program is missing.
    pub fn start() -> RedisServer {
        RedisServer::start_with(None)
    }

    /// As [`RedisServer::start`], requiring `password` (`requirepass`).
    pub fn start_with(password: Option<&str>) -> RedisServer {
        let mut last = String::new();
        // A port picked free may be taken before the server binds it: try a few.
        for _ in 0..5 {
            let port = free_port();
            let dir = tempfile::tempdir().unwrap();
            let mut cmd = Command::new("redis-server");
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .args(["--loglevel", "warning", "--maxclients", "1000"])
                .arg("--dir")
                .arg(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(pw) = password {
                cmd.args(["--requirepass", pw]);
            }
            let child = cmd.spawn().unwrap_or_else(|e| {
                panic!(
                    "cannot run redis-server ({e}): install the Debian package redis-server \
                     (apt-get install -y redis-server)"
                )
            });
            let mut server = RedisServer {
                child,
                port,
                password: password.map(str::to_string),
                _dir: dir,
            };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if answers_ping(port, password) {
                    return server;
                }
                if let Ok(Some(_)) = server.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = server.child.kill();
            let _ = server.child.wait();
            let mut out = String::new();
            if let Some(mut so) = server.child.stdout.take() {
                let _ = so.read_to_string(&mut out);
            }
            last = out;
        }
        panic!("redis-server did not start: {last}");
    }

    /// Gives the server a higher priority (nice -10) where this process may (as root); does
    /// nothing elsewhere. For tests that start hundreds of clients on the server's own cores.
    pub fn prefer(&self) {
        let pid = self.child.id();
        // `who` is an id_t (u32) on Linux and macOS, an int on FreeBSD.
        #[allow(clippy::useless_conversion)]
        let who = pid.try_into().unwrap_or_default();
        // SAFETY: setpriority on a process of our own; failing is harmless.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, who, -10) };
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://[:password@]127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        match &self.password {
            Some(pw) => format!("redis://:{pw}@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    /// Stops the server now (KILL) and waits for it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
