//! The README's and the guide's CI and scheduling recipes, run as written with stand-ins: the
//! GitHub Actions step, the cron lines (plain, `--chronic`, fleet, metrics), the Makefile target,
//! the healthchecks pings and the CI trace recipe (markers and helpers in `readme.rs`).

use std::path::{Path, PathBuf};

use crate::readme::{example, file_of, marked, server, sh};
use crate::tools::{self, require};

#[test]
fn the_github_actions_step_runs_as_written() {
    if !require(&[tools::CURL]) {
        return;
    }
    let server = server(|_, n, _| match n {
        0 => (502, Vec::new()),
        _ => (200, br#"{"version": "1.2.3"}"#.to_vec()),
    });
    let step = example("github-actions");
    // The step's `env:` entries and its `run:` line, as a runner would use them.
    let mut env: Vec<(String, String)> = Vec::new();
    let mut run = None;
    let mut in_env = false;
    for line in step.lines() {
        let t = line.trim();
        if t == "env:" {
            in_env = true;
        } else if let Some(cmd) = t.strip_prefix("run:") {
            run = Some(cmd.trim().to_string());
            in_env = false;
        } else if in_env && let Some((k, v)) = t.split_once(':') {
            env.push((k.trim().into(), v.trim().trim_matches('"').into()));
        }
    }
    assert!(env.iter().any(|(k, _)| k == "RETRY_PRESET"), "{env:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<(&str, String)> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    all.push(("MANIFEST_URL", format!("{}/manifest.json", server.url())));
    // The preset's 1 s base would make the test slow: RETRY_BASE beats RETRY_PRESET.
    all.push(("RETRY_BASE", "10ms".into()));
    // As on a runner: GitHub Actions, with a step-output file.
    let outputs = dir.path().join("github_output");
    all.push(("GITHUB_ACTIONS", "true".into()));
    all.push(("GITHUB_OUTPUT", outputs.display().to_string()));
    let out = sh(&run.unwrap(), dir.path(), &all);
    assert!(out.status.success(), "{out:?}");
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    assert!(manifest.contains("1.2.3"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    // retry's events, between curl's own error lines.
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(stderr.contains("curl: (22)"), "{stderr}");
    assert_eq!(events.last().unwrap()["event"], "success");
    // RETRY_MAX_RETRIES=4 from the step's env beats the aws preset's 2.
    assert_eq!(events[0]["max_attempts"], 5);
    // The README's annotation, and the outputs `steps.manifest.outputs.attempts` reads.
    let warning: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("::") && !l.contains("group::"))
        .collect();
    assert_eq!(
        warning,
        [
            "::warning title=retry%3A curl::curl succeeded on attempt 2 after failures \
          (statuses: 22, 0)"
        ]
    );
    let page = file_of("github-actions");
    assert!(
        page.replace('\n', " ")
            .contains(&format!("(`{}`)", warning[0])),
        "{} shows another annotation than {}",
        marked("readme-test", "github-actions").file,
        warning[0]
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "attempts=2\nstatus=0\n"
    );
}

#[test]
fn the_cron_line_runs_as_written() {
    let line = example("cron");
    let line = line.trim();
    // The five schedule fields, then the command cron hands to sh.
    let command = line.splitn(6, ' ').nth(5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // Stand-ins on PATH: a backup that fails with status 3, and a logger that records.
    let log = dir.path().join("logged");
    let write = |name: &str, body: String| {
        let p = bin.join(name);
        std::fs::write(&p, body).unwrap();
        let mut perm = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&p, perm).unwrap();
    };
    write("backup", "#!/bin/sh\nexit 3\n".into());
    write(
        "logger",
        format!("#!/bin/sh\necho \"$*\" >> {}\n", log.display()),
    );
    let command = command.replace("/usr/local/bin/backup", "backup");
    let out = sh(
        &format!("PATH={}:$PATH; {command}", bin.display()),
        dir.path(),
        &[
            ("RETRY_BASE", "0".into()),
            ("RETRY_MAX_RETRIES", "2".into()),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "-t backup backup failed: status 3\n"
    );
}

#[test]
fn the_chronic_cron_line_prints_nothing_after_a_late_success_and_everything_after_giving_up() {
    let line = example("cron-chronic");
    let line = line.trim();
    let command = line.splitn(6, ' ').nth(5).unwrap();
    assert!(command.contains("retry --chronic "), "{command}");
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A stand-in that prints on both streams and fails until attempt $OK.
    let stub = bin.join("sync-mirror");
    std::fs::write(
        &stub,
        "#!/bin/sh\necho \"synced $RETRY_ATTEMPT\"\necho \"error $RETRY_ATTEMPT\" >&2\n\
         [ \"$RETRY_ATTEMPT\" -ge \"$OK\" ]\n",
    )
    .unwrap();
    let mut perm = std::fs::metadata(&stub).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&stub, perm).unwrap();
    let command = command.replace("/usr/local/bin/sync-mirror", "sync-mirror");
    let script = format!("PATH={}:$PATH; {command}", bin.display());
    let env = |ok: &str| {
        [
            ("RETRY_BASE", "0".to_string()),
            ("RETRY_MAX_RETRIES", "2".to_string()),
            ("OK", ok.to_string()),
        ]
    };
    // Success on attempt 3: not one byte, so cron sends no mail.
    let out = sh(&script, dir.path(), &env("3"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // Never: all of it, in order, then the give-up line.
    let out = sh(&script, dir.path(), &env("9"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "synced 1\nsynced 2\nsynced 3\n"
    );
    let stderr = crate::helpers::timeless(&String::from_utf8(out.stderr).unwrap());
    assert_eq!(
        stderr,
        "error 1\nretry: attempt 1 of 3: sync-mirror exited with status 1; retrying in 0s\n\
         error 2\nretry: attempt 2 of 3: sync-mirror exited with status 1; retrying in 0s\n\
         error 3\nretry: attempt 3 of 3: sync-mirror exited with status 1\n\
         retry: gave up after 3 attempts in T: no retries left\n"
    );
}

#[test]
fn the_makefile_target_runs_as_written() {
    if !require(&[tools::MAKE]) {
        return;
    }
    let target = example("makefile");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Makefile"), &target).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A pg_isready stand-in that is ready on its third call.
    let stub = bin.join("pg_isready");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\necho \"$*\" >> {0}/calls\ntest $(wc -l < {0}/calls) -ge 3\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&stub).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&stub, perm).unwrap();
    let out = sh(
        &format!(
            "PATH={}:$PATH make -s wait-for-db DB_HOST=db.internal",
            bin.display()
        ),
        dir.path(),
        &[("RETRY_BASE", "0".into())],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("calls")).unwrap(),
        "-h db.internal\n-h db.internal\n-h db.internal\n"
    );
}

#[test]
fn the_fleet_cron_line_runs_as_written_but_for_a_shorter_splay() {
    let line = example("cron-budget");
    let line = line.trim();
    // The five schedule fields, then the command cron hands to sh.
    let command = line.splitn(6, ' ').nth(5).unwrap();
    assert!(
        command.contains("--splay 5m") && command.contains("--breaker 3"),
        "{command}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A stand-in for the job that fails with status 3 and counts its calls.
    let calls = dir.path().join("calls");
    let stub = bin.join("sync-inventory");
    std::fs::write(
        &stub,
        format!("#!/bin/sh\necho x >> {}\nexit 3\n", calls.display()),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&stub).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&stub, perm).unwrap();
    // The default store, in a runtime directory of the test's own.
    let runtime = dir.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    let env = [
        ("XDG_RUNTIME_DIR", runtime.display().to_string()),
        // The default 1 s base would make the test slow; nothing on the line sets it.
        ("RETRY_BASE", "0".to_string()),
    ];
    // The line's flags plan a splay of up to 5 minutes.
    let flags = command.split(" -- ").next().unwrap();
    let out = sh(&format!("{flags} --dry-run"), dir.path(), &env);
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    let rows = crate::helpers::dry_run_cells(&table);
    assert_eq!(rows[0].0, "splay", "{table}");
    let splay = crate::helpers::human_secs(&rows[0].1);
    assert!((0.0..=300.0).contains(&splay), "{table}");
    // Run as written, but for a splay of 50ms instead of up to 5 minutes.
    let command = command
        .replace("/usr/local/bin/sync-inventory", "sync-inventory")
        .replace("--splay 5m", "--splay 50ms");
    let script = format!("PATH={}:$PATH; {command}", bin.display());
    let count = || std::fs::read_to_string(&calls).map_or(0, |t| t.lines().count());
    // The first run gets the 4 retries a full bucket grants, then the budget is spent.
    let out = sh(&script, dir.path(), &env);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(count(), 5);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        crate::helpers::timeless(&stderr)
            .contains("gave up after 5 attempts in T: retry budget for inventory-api is spent"),
        "{stderr}"
    );
    // Two more runs give up after their first attempt: three in a row open the breaker.
    for _ in 0..2 {
        assert_eq!(sh(&script, dir.path(), &env).status.code(), Some(3));
    }
    assert_eq!(count(), 7);
    let out = sh(&script, dir.path(), &env);
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert_eq!(count(), 7, "a refused run ran the job");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("retry: circuit breaker for inventory-api is open until ")
            && stderr.ends_with(": not running sync-inventory (status 75)\n"),
        "{stderr}"
    );
    assert!(runtime.join("retry/inventory-api.json").exists());
}

/// Writes an executable script `name` with `body` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// A stand-in that fails with status 3 the first time it runs in `dir`, then succeeds; or
/// always fails, with `always`.
fn flaky(dir: &Path, always: bool) -> String {
    let flag = dir.join("ran-once");
    if always {
        "#!/bin/sh\nexit 3\n".to_string()
    } else {
        format!(
            "#!/bin/sh\n[ -e '{0}' ] && exit 0\n: > '{0}'\nexit 3\n",
            flag.display()
        )
    }
}

#[test]
fn the_metrics_cron_line_leaves_a_file_node_exporter_serves() {
    if !require(&[tools::PROMTOOL, tools::NODE_EXPORTER]) {
        return;
    }
    let line = example("metrics-cron");
    let command = line.trim().splitn(6, ' ').nth(5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let textfiles = dir.path().join("node-exporter");
    std::fs::create_dir(&textfiles).unwrap();
    let backup = script(dir.path(), "backup", &flaky(dir.path(), false));
    let command = command
        .replace(
            "/var/lib/prometheus/node-exporter",
            textfiles.to_str().unwrap(),
        )
        .replace("/usr/local/bin/backup", backup.to_str().unwrap());
    assert_ne!(command, line.trim());
    let out = sh(&command, dir.path(), &[("RETRY_BASE", "0".into())]);
    assert!(out.status.success(), "{out:?}");
    let file = std::fs::read_to_string(textfiles.join("backup.prom")).unwrap();
    crate::helpers::prometheus::promtool(&file).unwrap();
    let scraped = crate::helpers::prometheus::NodeExporter::start(&textfiles).scrape();
    for series in [
        "node_textfile_scrape_error 0",
        "retry_runs_total{job=\"backup\",result=\"success\"} 1",
        "retry_last_attempts{job=\"backup\"} 2",
        "retry_attempts_total{job=\"backup\"} 2",
    ] {
        assert!(scraped.contains(series), "{series} not in {scraped}");
    }
}

#[test]
fn the_healthchecks_pings_carry_one_run_id_for_start_log_success_and_fail() {
    if !require(&[tools::CURL]) {
        return;
    }
    let example = example("healthchecks");
    for always in [false, true] {
        let server = server(|_, _, _| (200, b"OK".to_vec()));
        let dir = tempfile::tempdir().unwrap();
        let backup = script(dir.path(), "backup", &flaky(dir.path(), always));
        let ping = format!("{}/ping/check-uuid", server.url());
        let text = example
            .replace("https://hc-ping.com/your-check-uuid", &ping)
            .replace("/usr/local/bin/backup", backup.to_str().unwrap());
        let out = sh(
            &text,
            dir.path(),
            &[
                ("RETRY_BASE", "0".into()),
                ("RETRY_MAX_RETRIES", "1".into()),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(if always { 3 } else { 0 }),
            "{out:?}"
        );
        let seen = server.requests();
        let paths: Vec<String> = seen.iter().map(|r| r.path.clone()).collect();
        let rid = paths[0]
            .split_once("rid=")
            .map(|(_, r)| r.to_string())
            .unwrap_or_else(|| panic!("{paths:?}"));
        assert_eq!(rid.len(), 36, "{rid}");
        let last = if always { "/fail" } else { "" };
        assert_eq!(
            paths,
            [
                format!("/ping/check-uuid/start?rid={rid}"),
                format!("/ping/check-uuid/log?rid={rid}"),
                format!("/ping/check-uuid/start?rid={rid}"),
                format!("/ping/check-uuid{last}?rid={rid}"),
            ],
            "{out:?}"
        );
        assert_eq!(seen[1].body, b"attempt 1: status 3");
    }
}

#[test]
fn the_ci_trace_recipe_sends_the_run_and_its_attempts_in_the_pipelines_trace() {
    if !require(&[crate::helpers::otlp::RECEIVER]) {
        return;
    }
    use crate::helpers::otlp::{Receiver, attr_in};
    let receiver = Receiver::start("answer");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("traceparents");
    script(
        dir.path(),
        "deploy.sh",
        &format!(
            "#!/bin/sh\necho \"$TRACEPARENT\" >> '{}'\n{}",
            log.display(),
            flaky(dir.path(), false).trim_start_matches("#!/bin/sh\n")
        ),
    );
    let recipe = example("ci-traces");
    let text = recipe.replace("http://127.0.0.1:4318", &receiver.endpoint());
    assert_ne!(text, recipe);
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let out = sh(
        &text,
        dir.path(),
        &[("RETRY_BASE", "0".into()), ("TRACEPARENT", parent.into())],
    );
    assert!(out.status.success(), "{out:?}");
    let requests = receiver.requests(1);
    let resource = &requests[0]["request"]["resourceSpans"][0]["resource"]["attributes"];
    let string = |v: Option<serde_json::Value>| v.unwrap()["stringValue"].clone();
    assert_eq!(string(attr_in(resource, "service.name")), "deploy");
    assert_eq!(
        string(attr_in(resource, "deployment.environment")),
        "staging"
    );
    let spans = Receiver::spans(&requests[0]);
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert_eq!(
        spans[0].field("traceId"),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(spans[0].field("parentSpanId"), "00f067aa0ba902b7");
    let seen: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let sent: Vec<String> = spans[1..]
        .iter()
        .map(|s| format!("00-{}-{}-01", s.field("traceId"), s.field("spanId")))
        .collect();
    assert_eq!(seen, sent);
}
