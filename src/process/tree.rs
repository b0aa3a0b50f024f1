//! The processes retry is responsible for: its live descendants, read from `/proc` (Linux),
//! less the children it already had when it started (`sh -c 'job & exec retry ...'`).
//!
//! retry is a child subreaper (`PR_SET_CHILD_SUBREAPER`, see prctl(2)), so a process orphaned
//! inside an attempt is re-parented to retry, not to init: whatever an attempt started stays
//! among retry's descendants, even after `setsid` or `set -m` moved it to another process group
//! or session. retry runs one attempt or hook at a time and stops what is left of each one that
//! did not succeed (see the supervisor), so its descendants are the running step's processes.

use std::sync::OnceLock;

use nix::unistd::{Pid, getpid};

/// One live process: pid, parent pid, start time (clock ticks after boot, field 22 of
/// `/proc/PID/stat`, see proc_pid_stat(5)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Row {
    pid: i32,
    ppid: i32,
    start: u64,
}

/// retry's children when supervision began, as (pid, start time): not retry's to stop.
static INHERITED: OnceLock<Vec<(i32, u64)>> = OnceLock::new();

/// Notes the children retry already had (inherited through `exec`), so that they and their
/// descendants are never taken for an attempt's processes. Call once, before the first attempt.
/// `any_children`: whether retry has any child at all; without one (the usual case) the process
/// table is not read, which would cost a look at every process on the machine at start-up.
pub fn record_inherited(any_children: bool) {
    let me = getpid().as_raw();
    INHERITED.get_or_init(|| {
        if !any_children {
            return Vec::new();
        }
        table()
            .into_iter()
            .filter(|r| r.ppid == me)
            .map(|r| (r.pid, r.start))
            .collect()
    });
}

/// retry's live (not zombie) descendants, less those it inherited (see [`record_inherited`]).
pub fn descendants() -> Vec<Pid> {
    let inherited = INHERITED.get().map(Vec::as_slice).unwrap_or(&[]);
    walk(getpid().as_raw(), &table(), inherited)
        .into_iter()
        .map(Pid::from_raw)
        .collect()
}

/// The descendants of `root` in `table`, breadth first, skipping `root`'s children listed in
/// `inherited` (with the same start time: a pid may have been reused) and their descendants.
fn walk(root: i32, table: &[Row], inherited: &[(i32, u64)]) -> Vec<i32> {
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            table
                .iter()
                .filter(|r| r.ppid == parent && r.pid != root)
                .filter(|r| parent != root || !inherited.contains(&(r.pid, r.start)))
                .map(|r| r.pid),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Every live process the system shows under `/proc` (zombies and dead ones left out).
fn table() -> Vec<Row> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .collect()
}

/// The row of `pid` from its `/proc/PID/stat` text; `None` for a zombie or a dead process.
fn parse_stat(pid: i32, stat: &str) -> Option<Row> {
    // The command name, field 2, is in parentheses and may hold anything: split after the
    // last ')'. Field 3 (state) is then the first, field 4 (ppid) the second and field 22
    // (starttime) the twentieth.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
    let (state, ppid, start) = (fields.first()?, fields.get(1)?, fields.get(19)?);
    if *state == "Z" || *state == "X" {
        return None;
    }
    Some(Row {
        pid,
        ppid: ppid.parse().ok()?,
        start: start.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: i32, ppid: i32, start: u64) -> Row {
        Row { pid, ppid, start }
    }

    #[test]
    fn parses_a_stat_line_whose_name_holds_parentheses_and_spaces() {
        let stat = "42 (a) b (c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 9876 1 2";
        assert_eq!(parse_stat(42, stat), Some(row(42, 7, 9876)));
        let zombie = "43 (sh) Z 7 43 43 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 9877 0 0";
        assert_eq!(parse_stat(43, zombie), None);
        assert_eq!(parse_stat(44, "44 (truncated"), None);
    }

    #[test]
    fn walks_the_whole_tree_but_not_what_was_inherited() {
        let table = [
            row(10, 1, 0),  // retry
            row(11, 10, 5), // inherited job
            row(12, 11, 6), // its child
            row(13, 10, 9), // the attempt
            row(14, 13, 9), // its child
            row(15, 10, 9), // an orphan re-parented to retry (setsid)
            row(16, 15, 9),
            row(20, 1, 9), // someone else's
        ];
        let mut found = walk(10, &table, &[(11, 5)]);
        found.sort_unstable();
        assert_eq!(found, vec![13, 14, 15, 16]);
        // A reused pid (another start time) is not the inherited process.
        let mut found = walk(10, &table, &[(11, 4)]);
        found.sort_unstable();
        assert_eq!(found, vec![11, 12, 13, 14, 15, 16]);
    }
}
