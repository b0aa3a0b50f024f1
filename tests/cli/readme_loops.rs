//! The examples of the guide's page on loops (`docs/loops.md`), run as written by the helpers
//! of [`crate::readme`]: each transcript prints what the page shows (stdout and stderr together,
//! elapsed times aside), and the crontab line takes its lock.

use std::path::Path;

use crate::readme::{example, sh};

/// Runs the transcript `name` (`$ ` lines are commands, run in one shell with `XDG_RUNTIME_DIR`
/// in a scratch directory; the other lines are what they print) and checks that it prints what
/// the page shows, but for the elapsed time in `after 0.412s`.
fn prints_what_the_page_shows(name: &str) {
    let block = example(name);
    let mut script = String::from("exec 2>&1\n");
    let mut shown = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => script.push_str(&format!("{command}\n")),
            None => shown.push(line.to_string()),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        &script,
        dir.path(),
        &[("XDG_RUNTIME_DIR", dir.path().display().to_string())],
    );
    assert!(out.status.success(), "{name}: {out:?}");
    let printed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(elapsed_aside(&printed), elapsed_aside(&shown), "{name}");
    assert_eq!(
        std::fs::read_dir(dir.path().join("retry")).map_or(0, Iterator::count),
        0,
        "{name}: RETRY_ENV_FILE removed"
    );
}

/// `lines` with each elapsed time (`after 412ms`, `after 1m 3s:`, `gave up after 3 runs (2
/// restarts) in 4ms:`) as `after ...` (`in ...`).
fn elapsed_aside(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|line| match line.split_once(" after ") {
            Some((head, rest)) if head.ends_with("gave up") => {
                let (made, rest) = rest.split_once(" in ").unwrap();
                let (took, tail) = rest.split_once(':').unwrap();
                assert!(crate::helpers::human_secs(took) >= 0.0, "{line}");
                format!("{head} after {made} in ...:{tail}")
            }
            Some((head, rest)) => {
                let end = rest.find([',', ':']).unwrap_or(rest.len());
                let (took, tail) = rest.split_at(end);
                assert!(crate::helpers::human_secs(took) >= 0.0, "{line}");
                format!("{head} after ...{tail}")
            }
            None => line.clone(),
        })
        .collect()
}

#[test]
fn the_delay_list_is_the_schedule_the_page_shows() {
    prints_what_the_page_shows("loops-delays");
}

#[test]
fn the_streak_example_prints_what_the_page_shows() {
    prints_what_the_page_shows("loops-successes");
}

#[test]
fn the_until_fail_example_prints_what_the_page_shows() {
    prints_what_the_page_shows("loops-until-fail");
}

#[test]
fn forever_restarts_and_a_crash_loop_ends_it_as_the_page_shows() {
    prints_what_the_page_shows("loops-forever");
}

#[test]
fn the_token_handed_on_by_a_hook_is_what_the_page_shows() {
    prints_what_the_page_shows("loops-env-file");
}

#[test]
fn the_cron_line_with_a_lock_runs_one_at_a_time_as_written() {
    let line = example("loops-lock");
    let command = line.trim().splitn(6, ' ').nth(5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A sync stand-in that says it started, then waits until it is told to end.
    let (started, release) = (dir.path().join("started"), dir.path().join("release"));
    let sync = bin.join("sync");
    std::fs::write(
        &sync,
        format!(
            "#!/bin/sh\necho $$ >> {}\nwhile [ ! -e {} ]; do sleep 0.01; done\n",
            started.display(),
            release.display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&sync).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&sync, perm).unwrap();
    let command = command.replace("/usr/local/bin/sync", "sync");
    let run = |wait: &str| {
        let script = format!(
            "PATH={}:$PATH; {}",
            bin.display(),
            command.replace("--lock-wait 1m", wait)
        );
        let home = dir.path().display().to_string();
        let dir = dir.path().to_path_buf();
        std::thread::spawn(move || sh(&script, &dir, &[("HOME", home)]))
    };
    let first = run("--lock-wait 1m");
    crate::helpers::wait_for_lines(&started, 1);
    // Another run that does not wait finds it held.
    let second = run("--lock-wait 0").join().unwrap();
    assert_eq!(second.status.code(), Some(75), "{second:?}");
    let lock = Path::new(&dir.path()).join(".sync.lock");
    assert!(
        String::from_utf8_lossy(&second.stderr)
            .contains(&format!("--lock {} is held by pid", lock.display())),
        "{second:?}"
    );
    std::fs::write(&release, "").unwrap();
    assert!(first.join().unwrap().status.success());
    assert_eq!(
        std::fs::read_to_string(&started).unwrap().lines().count(),
        1
    );
}
