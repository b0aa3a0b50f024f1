//! Prometheus's own tools for the `--metrics-file` tests: `promtool check metrics` (Debian
//! package `prometheus`) and a real node_exporter (`prometheus-node-exporter`) with only its
//! textfile collector, on a free loopback port; `.ci/run` installs both.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::HANG_LIMIT;

/// `promtool check metrics` on `text`: its output when it finds a problem (lint included).
pub fn promtool(text: &str) -> Result<(), String> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus: .ci/run installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A running node_exporter with only its textfile collector, reading `dir`.
pub struct NodeExporter {
    child: Child,
    port: u16,
}

impl NodeExporter {
    /// Starts node_exporter reading the `*.prom` files of `dir`.
    pub fn start(dir: &Path) -> NodeExporter {
        // A free loopback port: taken, noted, released for node_exporter.
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus-node-exporter (.ci/run installs it)");
        NodeExporter { child, port }
    }

    /// `GET /metrics`, once node_exporter listens (within the hang limit).
    pub fn scrape(&mut self) -> String {
        let start = Instant::now();
        loop {
            if let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)) {
                stream.set_read_timeout(Some(HANG_LIMIT)).unwrap();
                stream
                    .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    .unwrap();
                let mut answer = String::new();
                stream.read_to_string(&mut answer).unwrap();
                assert!(answer.starts_with("HTTP/1.0 200"), "{answer}");
                return answer;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("node_exporter ended: {status}");
            }
            assert!(start.elapsed() < HANG_LIMIT, "node_exporter never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
