//! The start-up order of the release binary: `link/startup.order` lists every function of the
//! binary that a plain run executes (found with valgrind's callgrind), and build.rs hands it to
//! LLD, which lays those functions out first in `.text`, so that the kernel's 64 KiB
//! fault-around windows map the start-up path and little else (docs/performance.md). One test
//! says when the list is out of date (rewrite it with `RETRY_REGENERATE=1 cargo test
//! startup_order` and commit the result), the other that the linker placed it.
//!
//! Native x86_64 glibc builds only, where build.rs can know the linker is LLD; the portable
//! supervision runs other functions and is not ordered.

use crate::helpers::release::release_bin;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

const ORDER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/link/startup.order");

const HEADER: &str = "\
# The functions a run of retry executes, laid out first in .text by LLD (--symbol-ordering-file,
# passed by build.rs for native x86_64-unknown-linux-gnu builds), so that start-up maps few of
# the binary's pages. Found with valgrind's callgrind on the release build; the names carry
# rustc's hashes, so a new toolchain or dependency needs a new list:
#     RETRY_REGENERATE=1 cargo test startup_order
";

/// A run profiled: its arguments and the exit status it must end with.
struct Run {
    args: &'static [&'static str],
    status: i32,
}

/// The plain success: its functions come first.
const PLAIN: Run = Run {
    args: &["--", "true"],
    status: 0,
};

/// A failure given up after waits (the options parsed, the backoff, the timer, the closing
/// line), and an attempt that cannot start: valgrind writes no profile for an attempt's
/// process that execs, so this one's gives the functions the attempt's process runs before
/// its exec, which the plain run runs too.
const OTHERS: [Run; 2] = [
    Run {
        args: &["-n", "2", "-b", "1ms", "--", "false"],
        status: 1,
    },
    Run {
        args: &["-n", "1", "--", "/nonexistent/command"],
        status: 127,
    },
];

/// Functions of the C start-up files that every run executes and callgrind does not name: the
/// entry point, and crtbegin.o's (`frame_dummy`, run from `.init_array`).
const ENTRY: [&str; 2] = ["_start", "frame_dummy"];

/// Functions a run may execute or not with its timing (a vector grown when two events come
/// together): the check allows this many of them, of at most [`TIMING_SLACK_BYTES`] together,
/// missing from the list.
const TIMING_SLACK: usize = 2;
const TIMING_SLACK_BYTES: u64 = 4 * 1024;

/// Text symbols (functions) defined in `bin`, with their addresses and sizes, from `nm`.
fn functions(bin: &Path) -> Vec<(u64, u64, String)> {
    let out = Command::new("nm")
        .args(["--defined-only", "--print-size"])
        .arg(bin)
        .output()
        .expect("nm (binutils) runs");
    assert!(out.status.success(), "nm {}", bin.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let address = u64::from_str_radix(fields.next()?, 16).ok()?;
            let size = u64::from_str_radix(fields.next()?, 16).ok()?;
            let kind = fields.next()?;
            let name = fields.next()?;
            matches!(kind, "t" | "T" | "w" | "W").then(|| (address, size, name.to_string()))
        })
        .collect()
}

/// The functions of `bin` that a run executed, in the run's own process and in the processes
/// it started (attempts before their exec), from callgrind's profiles.
fn profile(
    bin: &Path,
    run: &Run,
    defined: &BTreeSet<String>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let child = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--demangle=no",
            "--compress-strings=no",
            "--quiet",
            "--trace-children=no",
        ])
        .arg(format!(
            "--callgrind-out-file={}/profile.%p",
            tmp.path().display()
        ))
        .arg(bin)
        .args(run.args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", tmp.path())
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("valgrind runs (.ci/run installs it)");
    let own = tmp.path().join(format!("profile.{}", child.id()));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(run.status), "retry {:?}", run.args);
    let (mut parent, mut children) = (BTreeSet::new(), BTreeSet::new());
    for entry in std::fs::read_dir(tmp.path()).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !name.starts_with("profile.") {
            continue;
        }
        let into = if path == own {
            &mut parent
        } else {
            &mut children
        };
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let Some(rest) = line.strip_prefix("fn=").or(line.strip_prefix("cfn=")) else {
                continue;
            };
            // "(12) name", and "name'2" for a recursion level.
            let name = rest.split_once(") ").map_or(rest, |(_, name)| name);
            let name = name.split_once('\'').map_or(name, |(name, _)| name);
            if defined.contains(name) {
                into.insert(name.to_string());
            }
        }
    }
    assert!(!parent.is_empty(), "no profile of retry {:?}", run.args);
    (parent, children)
}

/// What the list should be: the plain run's functions (with those an attempt's process runs
/// before its exec, and the entry point), then those the other runs add.
fn executed(bin: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let defined: BTreeSet<String> = functions(bin)
        .into_iter()
        .map(|(_, _, name)| name)
        .collect();
    let (mut plain, _) = profile(bin, &PLAIN, &defined);
    plain.extend(ENTRY.map(str::to_string));
    let mut others = BTreeSet::new();
    for run in &OTHERS {
        let (parent, children) = profile(bin, run, &defined);
        plain.extend(children.difference(&parent).cloned());
        others.extend(parent);
    }
    let others = others.difference(&plain).cloned().collect();
    (plain, others)
}

fn listed() -> BTreeSet<String> {
    std::fs::read_to_string(ORDER)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_function_a_plain_run_executes_is_in_the_start_up_order() {
    let bin = release_bin();
    let (plain, others) = executed(bin);
    assert!(
        plain.len() > 50,
        "callgrind saw {} of retry's functions in `retry -- true`",
        plain.len()
    );
    if std::env::var_os("RETRY_REGENERATE").is_some_and(|v| v == "1") {
        let mut text = HEADER.to_string();
        text.push_str("# retry -- true\n");
        for name in &plain {
            text.push_str(name);
            text.push('\n');
        }
        text.push_str(
            "# what a failure given up after waits and an attempt that cannot start add\n",
        );
        for name in &others {
            text.push_str(name);
            text.push('\n');
        }
        std::fs::write(ORDER, text).unwrap();
        return;
    }
    let listed = listed();
    let sizes: std::collections::BTreeMap<String, u64> = functions(bin)
        .into_iter()
        .map(|(_, size, name)| (name, size))
        .collect();
    let missing: Vec<&String> = plain
        .iter()
        .chain(&others)
        .filter(|name| !listed.contains(*name))
        .collect();
    let missing_bytes: u64 = missing.iter().map(|name| sizes[*name]).sum();
    assert!(
        missing.len() <= TIMING_SLACK && missing_bytes <= TIMING_SLACK_BYTES,
        "{} functions ({missing_bytes} bytes) that runs execute are not in link/startup.order \
         (first: {:?}); rewrite it with `RETRY_REGENERATE=1 cargo test startup_order` and rebuild",
        missing.len(),
        missing.iter().take(5).collect::<Vec<_>>()
    );
}

#[test]
fn the_linker_lays_the_listed_functions_out_first() {
    let listed = listed();
    let mut functions = functions(release_bin());
    functions.sort();
    let ordered: Vec<u64> = functions
        .iter()
        .filter(|(_, _, name)| listed.contains(name))
        .map(|(address, _, _)| *address)
        .collect();
    assert!(
        ordered.len() * 10 >= listed.len() * 9,
        "only {} of the {} listed functions are in the binary: rewrite link/startup.order with \
         `RETRY_REGENERATE=1 cargo test startup_order`",
        ordered.len(),
        listed.len()
    );
    let last_listed = *ordered.iter().max().unwrap();
    // Another name at the address of a listed function is an alias of it, not a misplacement.
    let misplaced: Vec<&String> = functions
        .iter()
        .filter(|(address, _, name)| {
            *address < last_listed && !listed.contains(name) && !ordered.contains(address)
        })
        .map(|(_, _, name)| name)
        .collect();
    assert!(
        misplaced.is_empty(),
        "{} functions not listed lie among the listed ones (first: {:?}): the linker did not \
         take link/startup.order (build.rs)",
        misplaced.len(),
        misplaced.iter().take(5).collect::<Vec<_>>()
    );
}
