//! `RETRY_ENV_FILE` through the binary: one-line and heredoc values seen by the next attempt and
//! hook, `RETRY_*` names refused and malformed lines reported with their numbers, the file
//! private and removed at the end (after giving up, and after a stop by TERM), and a hostile
//! attempt that puts a FIFO, a symlink or too much in its place.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use crate::helpers::{retry, retry_std, send, wait_for_lines, wait_with_limit};

/// retry with `TMPDIR` in `dir` and no `XDG_RUNTIME_DIR`, so the file is made under `dir`.
fn retry_in(dir: &Path) -> assert_cmd::Command {
    let mut cmd = retry();
    cmd.env("TMPDIR", dir).env_remove("XDG_RUNTIME_DIR");
    cmd
}

/// The files left in retry's own directory under `dir`.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    // SAFETY: geteuid has no preconditions and cannot fail (POSIX).
    let uid = unsafe { libc::geteuid() };
    let own = dir.join(format!("retry-{uid}"));
    std::fs::read_dir(own)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn values_written_by_an_attempt_and_a_hook_reach_the_next_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = r#"echo "$RETRY_ATTEMPT TOKEN=$TOKEN MULTI=$MULTI HOOK=$HOOK";
        test "$RETRY_ATTEMPT" = 3 && exit 0;
        echo "TOKEN=t$RETRY_ATTEMPT=x" >> "$RETRY_ENV_FILE";
        printf 'MULTI<<EOF\nline 1\n\nline 3\nEOF\n' >> "$RETRY_ENV_FILE";
        exit 1"#;
    let out = retry_in(dir.path())
        .args(["-b", "0", "-n", "5", "--on-retry"])
        .arg(r#"echo "HOOK=h$RETRY_ATTEMPT $TOKEN" >> "$RETRY_ENV_FILE""#)
        .args(["--", "sh", "-c", attempt])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "1 TOKEN= MULTI= HOOK=\n\
         2 TOKEN=t1=x MULTI=line 1\n\nline 3 HOOK=h1 t1=x\n\
         3 TOKEN=t2=x MULTI=line 1\n\nline 3 HOOK=h2 t2=x\n"
    );
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new(), "removed");
}

#[test]
fn retry_names_are_refused_and_malformed_lines_reported_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = r#"echo "$RETRY_MAX_ATTEMPTS $OK";
        test "$RETRY_ATTEMPT" = 2 && exit 0;
        printf 'OK=1\nRETRY_MAX_ATTEMPTS=99\nnot a line\n1X=2\n' >> "$RETRY_ENV_FILE"; exit 1"#;
    let out = retry_in(dir.path())
        .args(["-b", "0", "-n", "1", "--", "sh", "-c", attempt])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "2 \n2 1\n");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(
        warnings[0].contains("line 2: RETRY_MAX_ATTEMPTS is refused"),
        "{stderr}"
    );
    assert!(
        warnings[1].contains("line 3 is neither NAME=VALUE"),
        "{stderr}"
    );
    assert!(
        warnings[2].contains("line 4: the name is not a variable name"),
        "{stderr}"
    );
    assert!(!stderr.contains("=99"), "no value quoted: {stderr}");
}

#[test]
fn the_file_is_private_and_removed_after_giving_up() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = r#"test "$RETRY_ATTEMPT" -gt 1 && stat -c %a "$RETRY_ENV_FILE";
        echo "$RETRY_ENV_FILE"; echo A=1 >> "$RETRY_ENV_FILE"; exit 3"#;
    let out = retry_in(dir.path())
        .args(["-b", "0", "-n", "1", "-q", "--", "sh", "-c", attempt])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[1], "600");
    assert!(
        lines[0].starts_with(dir.path().to_str().unwrap()),
        "{stdout}"
    );
    assert!(!Path::new(lines[0]).exists());
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn the_file_is_removed_when_term_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (seen, err) = (dir.path().join("seen"), dir.path().join("err"));
    let mut child = retry_std()
        .env("TMPDIR", dir.path())
        .env_remove("XDG_RUNTIME_DIR")
        .args(["-b", "1h", "-c", "1h", "-j", "none", "--", "sh", "-c"])
        .arg(format!(
            "echo A=1 >> \"$RETRY_ENV_FILE\"; echo \"$RETRY_ENV_FILE\" > {}; exit 1",
            seen.display()
        ))
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let path = wait_for_lines(&seen, 1);
    assert!(Path::new(path.trim()).exists());
    // Now in the hour's wait: the attempt has ended.
    let line = wait_for_lines(&err, 1);
    assert!(line.contains("retrying in 1h"), "{line}");
    send(child.id(), libc::SIGTERM);
    assert_eq!(wait_with_limit(&mut child).signal(), Some(libc::SIGTERM));
    assert!(!Path::new(path.trim()).exists(), "{path}");
}

#[test]
fn a_fifo_a_symlink_or_a_flood_in_its_place_is_refused_without_hanging() {
    for (name, hostile) in [
        (
            "fifo",
            r#"rm -f "$RETRY_ENV_FILE"; mkfifo "$RETRY_ENV_FILE""#,
        ),
        ("symlink", r#"ln -sf /etc/passwd "$RETRY_ENV_FILE""#),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let attempt = format!("test \"$RETRY_ATTEMPT\" = 2 && exit 0; {hostile}; exit 1");
        let out = retry_in(dir.path())
            .args(["-b", "0", "-n", "1", "--", "sh", "-c", &attempt])
            .assert()
            .success()
            .get_output()
            .clone();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("; refused; it is not read again"),
            "{name}: {stderr}"
        );
        assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new(), "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let attempt = r#"test "$RETRY_ATTEMPT" = 2 && { echo "${#BIG}"; exit 0; };
        head -c 3000000 /dev/zero | tr '\0' x | sed 's/^/BIG=/' >> "$RETRY_ENV_FILE";
        exit 1"#;
    let out = retry_in(dir.path())
        .args(["-b", "0", "-n", "1", "--", "sh", "-c", attempt])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("holds more than 1024 KiB"), "{stderr}");
    // One line of 3 MB: longer than a program can be given, so not set.
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "0\n");
}

#[test]
fn a_flood_of_bad_lines_is_a_few_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = r#"test "$RETRY_ATTEMPT" = 2 && exit 0;
        i=0; while [ $i -lt 1000 ]; do echo "bad line $i"; i=$((i+1)); done >> "$RETRY_ENV_FILE";
        exit 1"#;
    let out = retry_in(dir.path())
        .args(["-b", "0", "-n", "1", "-q", "--", "sh", "-c", attempt])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 6, "{stderr}");
    assert!(
        stderr.ends_with("RETRY_ENV_FILE: 995 more problems after attempt 1 not shown\n"),
        "{stderr}"
    );
}

#[test]
fn a_run_where_the_file_cannot_be_offered_goes_on_as_before() {
    let dir = tempfile::tempdir().unwrap();
    // $TMPDIR a regular file: retry's own directory cannot be made in it.
    let not_dir = dir.path().join("file");
    std::fs::write(&not_dir, "").unwrap();
    let cmd = r#"echo "[${RETRY_ENV_FILE-unset}]"; test "$RETRY_ATTEMPT" = 2"#;
    retry()
        .env("TMPDIR", &not_dir)
        .env_remove("XDG_RUNTIME_DIR")
        .args(["-b", "0", "-n", "1", "-q", "--", "sh", "-c", cmd])
        .assert()
        .success()
        .stdout("[unset]\n[unset]\n")
        .stderr("");
    let out = retry()
        .env("TMPDIR", &not_dir)
        .env_remove("XDG_RUNTIME_DIR")
        .args(["-v", "--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("RETRY_ENV_FILE is not offered to the attempts"),
        "{stderr}"
    );
}

#[test]
fn an_outer_runs_file_never_reaches_an_inner_runs_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let not_dir = dir.path().join("file");
    std::fs::write(&not_dir, "").unwrap();
    // Inherited, and this run cannot offer its own: the attempts run without the variable.
    retry()
        .env("TMPDIR", &not_dir)
        .env_remove("XDG_RUNTIME_DIR")
        .env("RETRY_ENV_FILE", dir.path().join("outer.env"))
        .args([
            "-n",
            "0",
            "-q",
            "--",
            "sh",
            "-c",
            r#"echo "[${RETRY_ENV_FILE-unset}]""#,
        ])
        .assert()
        .success()
        .stdout("[unset]\n");
    // Nested: what the inner run's attempt writes does not reach the outer run's next attempt.
    let inner = format!(
        r#"echo "outer $RETRY_ATTEMPT LEAK=$LEAK";
        TMPDIR={} retry -q -n 0 -- sh -c 'echo LEAK=inner >> "${{RETRY_ENV_FILE:-/dev/null}}"';
        test "$RETRY_ATTEMPT" = 2"#,
        not_dir.display()
    );
    let bin_dir = crate::helpers::bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    retry_in(dir.path())
        .env("PATH", path)
        .args(["-b", "0", "-n", "1", "-q", "--", "sh", "-c", &inner])
        .assert()
        .success()
        .stdout("outer 1 LEAK=\nouter 2 LEAK=\n");
}
