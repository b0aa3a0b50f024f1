//! Robustness: security properties. The command runs directly (no shell unless the user
//! writes `sh -c`), as retry's own child; its arguments never appear in retry's messages by
//! default, nor when a signal ends retry; the temporary files of `--replay-stdin` and
//! `--stdout-on-success` are 0600, unlinked, in TMPDIR, whatever the umask; `--on-retry` and
//! `--on-give-up` hooks see the inherited environment plus only the variables their help
//! documents.
//!
//! Not here: what the hooks and attempts leave running (`robust_trees.rs`); a newline in an
//! argument that cannot forge a line (`robust_terminal.rs`); a missing or full TMPDIR
//! (`robust_stdin.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::proc::Stat;
use crate::helpers::{HANG_LIMIT, retry, retry_std, send, wait_for_lines, wait_with_limit};

/// Stands for a token or password on the command's command line.
const SECRET: &str = "s3cr3t-T0KEN-4242";

#[test]
fn the_command_is_executed_directly_not_through_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let words = [
        "$HOME",
        "`id`",
        "$(id)",
        "; echo pwned",
        "*",
        "|",
        "&& true",
        "a b",
        "'q'",
        "\"dq\"",
        "~",
        "$0",
    ];
    let mut want = words.join("\n");
    want.push('\n');
    retry()
        .current_dir(dir.path())
        .args(["-n", "0", "--", "printf", "%s\\n"])
        .args(words)
        .assert()
        .success()
        .stdout(want);
    // A command line in one word is a program name, not a shell command.
    retry()
        .args(["-n", "0", "--", "echo hi; true"])
        .assert()
        .code(127)
        .stdout("");
}

#[test]
fn the_attempt_is_a_child_of_retry_itself() {
    // `cat /proc/self/stat` shows cat's own parent: retry, with no shell in between.
    let mut child = retry_std()
        .args(["-n", "0", "--", "cat", "/proc/self/stat"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_with_limit(&mut child);
    assert!(status.success());
    let mut stat = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stat).unwrap();
    assert!(stat.contains(" (cat) "), "{stat}");
    let ppid = Stat::parse(&stat).unwrap().ppid;
    assert_eq!(
        ppid,
        child.id() as i32,
        "the attempt's parent is not retry: {stat}"
    );
}

/// retry's stderr for `flags` and a command holding [`SECRET`] in several arguments (the
/// script itself, a bare word, an `--option=value`), which runs `script`.
fn stderr_of(flags: &[&str], script: &str) -> (String, Option<i32>) {
    let out = retry()
        .args(flags)
        .args(["--", "sh", "-c"])
        .arg(format!(": {SECRET}; {script}"))
        .args(["sh", SECRET, &format!("--password={SECRET}")])
        .output()
        .unwrap();
    // A death by signal N (retry dies of KILL after KILL at a timeout) as a shell sees it.
    let code = out.status.code().or(out.status.signal().map(|n| 128 + n));
    (String::from_utf8_lossy(&out.stderr).into_owned(), code)
}

#[test]
fn no_argument_of_the_command_appears_in_retrys_messages() {
    let cases: &[(&[&str], &str, i32)] = &[
        // Retried failures, then giving up.
        (&["-b", "0", "-n", "2"], "exit 3", 3),
        // A status that is not retried.
        (&["-b", "0"], "exit 127", 127),
        // A timeout, then one that needs KILL.
        (&["-b", "0", "-n", "1", "-t", "100ms"], "sleep 100", 124),
        (
            &["-n", "0", "-t", "100ms", "--kill-after", "100ms"],
            "trap '' TERM; while :; do sleep 0.01; done",
            137,
        ),
        // The deadline, and a delay that would pass it.
        (
            &["-b", "0", "-d", "200ms", "-n", "unlimited"],
            "sleep 100",
            124,
        ),
        (&["-b", "60s", "-j", "none", "-d", "5s"], "exit 4", 4),
        // Output conditions and held output.
        (
            &["-b", "0", "-n", "1", "--retry-if-output", "x"],
            "echo x",
            1,
        ),
        (&["-b", "0", "--stop-if-output", "x"], "echo x; exit 5", 5),
        (
            &["-b", "0", "-n", "1", "--stdout-on-success"],
            "echo out; exit 6",
            6,
        ),
        (&["-b", "0", "-n", "1", "--replay-stdin"], "exit 7", 7),
    ];
    let json: &[(&[&str], &str, i32)] = &[(&["-n", "0", "--log-format", "json"], "exit 8", 8)];
    let help = retry().arg("--help").output().unwrap().stdout;
    let has_json = String::from_utf8_lossy(&help).contains("--log-format");
    for (flags, script, code) in cases.iter().chain(json.iter().filter(|_| has_json)) {
        let (stderr, got) = stderr_of(flags, script);
        assert_eq!(got, Some(*code), "{flags:?} {script}: {stderr}");
        assert!(!stderr.is_empty(), "{flags:?}: retry said nothing");
        assert!(
            !stderr.contains(SECRET),
            "{flags:?} {script}: an argument leaked: {stderr}"
        );
    }
    // A launch failure names the program, not its arguments.
    retry()
        .args(["--", "/nonexistent/program", SECRET])
        .assert()
        .code(127)
        .stderr(predicate::str::contains("/nonexistent/program"))
        .stderr(predicate::str::contains(SECRET).not());
    // --verbose is the documented way to see them (so the check above is not vacuous).
    let (stderr, _) = stderr_of(&["-v", "-n", "0"], "exit 3");
    assert!(stderr.contains(SECRET), "{stderr}");
}

#[test]
fn a_signal_to_retry_does_not_leak_arguments_either() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let mut child = retry_std()
        .args(["-b", "0", "--", "sh", "-c"])
        .arg(format!(
            ": {SECRET}; echo >> {}; while :; do sleep 0.05; done",
            ready.display()
        ))
        .args(["sh", SECRET])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 1);
    send(child.id(), libc::SIGTERM);
    wait_with_limit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
}

/// The files under `tmpdir` that process `pid` holds open, with their mode, as
/// `(link target, mode)`.
fn open_files_in(pid: u32, tmpdir: &Path) -> Vec<(String, u32)> {
    let tmpdir = tmpdir.canonicalize().unwrap();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.path()).ok()?;
            // Files only: retry's own directory (RETRY_ENV_FILE's) may be open too.
            let meta = std::fs::metadata(fd.path()).ok()?;
            if !target.starts_with(&tmpdir) || meta.is_dir() {
                return None;
            }
            let mode = meta.permissions().mode();
            Some((target.to_string_lossy().into_owned(), mode & 0o7777))
        })
        .collect()
}

/// retry with umask 000 (the most permissive), TMPDIR `tmpdir`, and `args`.
fn retry_with_open_umask(tmpdir: &Path) -> Command {
    let mut cmd = retry_std();
    cmd.env("TMPDIR", tmpdir);
    // SAFETY: umask(2) is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    cmd
}

/// Waits (within the hang limit) until `pid` holds a file under `tmpdir`; returns them.
fn wait_for_spill(pid: u32, tmpdir: &Path) -> Vec<(String, u32)> {
    let start = Instant::now();
    loop {
        let files = open_files_in(pid, tmpdir);
        if !files.is_empty() {
            return files;
        }
        assert!(start.elapsed() < HANG_LIMIT, "no temporary file in TMPDIR");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_private_and_unlinked(files: &[(String, u32)], tmpdir: &Path) {
    for (target, mode) in files {
        assert_eq!(*mode, 0o600, "{target} has mode {mode:o}");
        assert!(target.ends_with(" (deleted)"), "{target} is not unlinked");
    }
    let left = crate::helpers::tmp_left(tmpdir);
    assert!(left.is_empty(), "files left in TMPDIR: {left:?}");
}

#[test]
fn the_replay_stdin_copy_is_0600_and_unlinked_in_tmpdir_even_with_umask_000() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ready = scratch.path().join("ready");
    let mut child = retry_with_open_umask(tmp.path())
        .args(["--replay-stdin", "-q", "--", "sh", "-c"])
        .arg(format!(
            "cat > /dev/null; echo x > {}; sleep 100",
            ready.display()
        ))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&vec![b'x'; 9 << 20]).unwrap();
    drop(stdin);
    wait_for_lines(&ready, 1);
    let files = wait_for_spill(child.id(), tmp.path());
    assert_private_and_unlinked(&files, tmp.path());
    send(child.id(), libc::SIGTERM);
    wait_with_limit(&mut child);
    assert_private_and_unlinked(&[], tmp.path());
}

#[test]
fn the_held_stdout_copy_is_0600_and_unlinked_in_tmpdir_even_with_umask_000() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ready = scratch.path().join("ready");
    // 9 MiB of stdout: more than the 8 MiB kept in memory.
    let mut child = retry_with_open_umask(tmp.path())
        .args(["--stdout-on-success", "-q", "--", "sh", "-c"])
        .arg(format!(
            "head -c 9437184 /dev/zero; echo x > {}; sleep 100",
            ready.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 1);
    let files = wait_for_spill(child.id(), tmp.path());
    assert_private_and_unlinked(&files, tmp.path());
    send(child.id(), libc::SIGTERM);
    wait_with_limit(&mut child);
    assert_private_and_unlinked(&[], tmp.path());
}

/// The `RETRY_*` names that the `--help` text of `flag` mentions.
fn documented_variables(flag: &str) -> BTreeSet<String> {
    let out = retry().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let mut lines = help
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(flag));
    let heading = lines
        .next()
        .unwrap_or_else(|| panic!("{flag} is not in --help"));
    let mut text = heading.to_string();
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        // The next flag (indented up to 6) or the next heading (not indented) ends the block.
        if (indent <= 6 && line.trim_start().starts_with('-')) || (indent == 0 && !line.is_empty())
        {
            break;
        }
        text.push(' ');
        text.push_str(line);
    }
    let mut names = BTreeSet::new();
    for (i, _) in text.match_indices("RETRY_") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        names.insert(name);
    }
    names
}

/// `NAME=value` lines of an `env` dump (values hold no newline here).
fn env_dump(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Variables a POSIX shell may add by itself (dash exports PWD).
const SHELL_NOISE: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];

#[test]
fn hooks_see_the_inherited_environment_and_only_the_documented_variables() {
    let dir = tempfile::tempdir().unwrap();
    let inherited: BTreeMap<String, String> = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", dir.path().display().to_string()),
        ("INHERITED_TOKEN", "kept as it is".to_string()),
        ("LANG", "C".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let hook = |name: &str| format!("env > {}/{name}.$RETRY_ATTEMPT", dir.path().display());
    let mut cmd = retry();
    cmd.env_clear()
        .envs(&inherited)
        .args(["-q", "-b", "0", "-n", "2"])
        .args(["--on-retry", &hook("on-retry")])
        .args(["--on-give-up", &hook("on-give-up")])
        .args(["--", "sh", "-c"])
        .arg(format!(": {SECRET}; exit 3"))
        .args(["sh", SECRET]);
    cmd.assert().code(3);

    let runs: &[(&str, &str, &[&str])] = &[
        ("--on-retry", "on-retry.1", &["1"]),
        ("--on-retry", "on-retry.2", &["2"]),
        ("--on-give-up", "on-give-up.3", &["3"]),
    ];
    for (flag, file, attempt) in runs {
        let documented = documented_variables(flag);
        assert!(
            documented.contains("RETRY_ATTEMPT") && documented.contains("RETRY_LAST_STATUS"),
            "{flag}: {documented:?}"
        );
        let seen = env_dump(&dir.path().join(file));
        // The inherited environment, unchanged.
        for (k, v) in &inherited {
            assert_eq!(seen.get(k), Some(v), "{flag} ({file}): {k}");
        }
        // Beyond it: the documented variables, all of them, and nothing else.
        let added: BTreeSet<String> = seen
            .keys()
            .filter(|k| !inherited.contains_key(*k) && !SHELL_NOISE.contains(&k.as_str()))
            .cloned()
            .collect();
        assert_eq!(added, documented, "{flag} ({file}): {seen:?}");
        assert_eq!(seen["RETRY_LAST_STATUS"], "3", "{flag}");
        assert!(
            attempt.contains(&seen["RETRY_ATTEMPT"].as_str()),
            "{flag}: {seen:?}"
        );
        for (k, v) in &seen {
            assert!(!v.contains(SECRET), "{flag}: the command's argument in {k}");
        }
        if let Some(delay) = seen.get("RETRY_DELAY") {
            assert!(delay.parse::<f64>().is_ok(), "{flag}: RETRY_DELAY={delay}");
        }
    }
    let extra: Vec<OsString> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| !runs.iter().any(|(_, f, _)| n == f))
        .collect();
    assert!(
        extra.is_empty(),
        "hooks ran more often than expected: {extra:?}"
    );
}
