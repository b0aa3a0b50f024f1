//! The one reader of `/proc/PID/stat` (proc(5)): a process's state, parent, process group and
//! its terminal's foreground group; and the processes found by a token on their command line
//! ([`token`] makes one, [`wait_none_running`] waits until none is left).

use std::path::Path;
use std::time::{Duration, Instant};

use super::HANG_LIMIT;

/// The fields of a `/proc/PID/stat` line that the tests read (proc(5), fields 3, 4, 5, 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// `R`, `S`, `D`, `T` (stopped), `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// The parent's pid.
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
    /// The foreground process group of its controlling terminal (-1 without one).
    pub tpgid: i32,
}

impl Stat {
    /// Parses a stat line: the fields after the command name, which ends at the last `)` (a
    /// command name may hold spaces and parentheses).
    pub fn parse(line: &str) -> Option<Stat> {
        let fields: Vec<&str> = line.rsplit_once(')')?.1.split_whitespace().collect();
        Some(Stat {
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgrp: fields.get(2)?.parse().ok()?,
            tpgid: fields.get(5)?.parse().ok()?,
        })
    }

    /// Alive: neither a zombie nor dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// The stat file at `path` (`/proc/PID/stat`, `/proc/PID/task/TID/stat`); `None` once gone.
pub fn stat_at(path: &Path) -> Option<Stat> {
    Stat::parse(&std::fs::read_to_string(path).ok()?)
}

/// `/proc/PID/stat`; `None` once the process is gone (reaped).
pub fn stat(pid: i32) -> Option<Stat> {
    stat_at(Path::new(&format!("/proc/{pid}/stat")))
}

/// Whether a process with this pid is alive (and not a zombie).
pub fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| s.is_live())
}

/// Waits (within [`HANG_LIMIT`]) until process `pid` is in state `want`.
pub fn wait_state(pid: i32, want: char) {
    let start = Instant::now();
    while stat(pid).map(|s| s.state) != Some(want) {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "{pid} never reached state {want}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every pid under `/proc`.
pub fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Live (non-zombie) processes whose command line contains `token`.
pub fn running_with(token: &str) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|&p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
                && alive(p)
        })
        .collect()
}

/// A token of digits unique to this test run, to find its processes by command line (pids
/// are reused); `sleep 100.TOKEN` is a 100-second sleep that carries it.
pub fn token(tag: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{tag}{}{nanos:09}", std::process::id())
}

/// Waits (up to 10 s) until no live process has `token` on its command line; panics with
/// what is left.
pub fn wait_none_running(token: &str) {
    let start = Instant::now();
    loop {
        let left = running_with(token);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "processes left running: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn parses_a_command_name_with_spaces_and_parentheses() {
    let line = "42 (a) b (c)) S 7 42 42 34816 42 4194304 0 0";
    assert_eq!(
        Stat::parse(line),
        Some(Stat {
            state: 'S',
            ppid: 7,
            pgrp: 42,
            tpgid: 42
        })
    );
    assert_eq!(Stat::parse("42 (x) Z"), None);
}
