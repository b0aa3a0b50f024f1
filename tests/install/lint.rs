//! The linters over what issue 35 added, and the rest of `dist/`: shellcheck on the scripts
//! (`dist/install.sh` as POSIX sh), actionlint on the workflows (which checks the release
//! workflow's `uses: ./` against `action.yml`'s inputs, and, with shellcheck on PATH, the `run:`
//! scripts); and the shape of `action.yml` (a composite action whose steps run the scripts the
//! tests run) and of every file it added (a first comment saying what it is for).

use std::path::PathBuf;
use std::process::Command;

use crate::release::repository;
use crate::support::run;
use crate::tools::{self, require};

/// The scripts of `dist/`, relative to the repository.
fn scripts() -> Vec<PathBuf> {
    let root = repository();
    let mut out = Vec::new();
    for dir in ["dist", "dist/action"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sh") {
                out.push(path.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn shellcheck_finds_nothing_in_the_scripts() {
    if !require(&[tools::SHELLCHECK]) {
        return;
    }
    let scripts = scripts();
    assert!(scripts.contains(&PathBuf::from("dist/install.sh")));
    assert!(scripts.contains(&PathBuf::from("dist/action/install.sh")));
    // install.sh as POSIX sh, whatever its #! says; the others by their #!.
    let mut posix = Command::new("shellcheck");
    posix
        .args(["--shell", "sh", "dist/install.sh"])
        .current_dir(repository());
    let run_posix = run(posix);
    assert_eq!(
        run_posix.status,
        Some(0),
        "{}{}",
        run_posix.stdout,
        run_posix.stderr
    );
    let mut all = Command::new("shellcheck");
    all.args(&scripts).current_dir(repository());
    let run_all = run(all);
    assert_eq!(
        run_all.status,
        Some(0),
        "{}{}",
        run_all.stdout,
        run_all.stderr
    );
}

#[test]
fn actionlint_finds_nothing_in_the_workflows() {
    if !require(&[tools::ACTIONLINT, tools::SHELLCHECK]) {
        return;
    }
    let actionlint = tools::actionlint().unwrap();
    let mut cmd = Command::new(&actionlint);
    cmd.arg("-no-color").current_dir(repository());
    let run = run(cmd);
    assert_eq!(run.status, Some(0), "{}{}", run.stdout, run.stderr);
    // It did read the workflow that uses the action.
    let workflow =
        std::fs::read_to_string(repository().join(".github/workflows/release.yml")).unwrap();
    assert!(
        workflow.contains("uses: ./"),
        "the release workflow tests the action"
    );
}

#[test]
fn action_yml_is_a_composite_action_running_the_tested_scripts() {
    let text = std::fs::read_to_string(repository().join("action.yml")).unwrap();
    assert!(text.contains("\n  using: composite\n"), "{text}");
    assert!(!text.contains("node"), "no Node runtime");
    let (unix, env) = crate::action::step("unix");
    assert_eq!(unix, r#"bash "$GITHUB_ACTION_PATH/dist/action/install.sh""#);
    assert!(env.iter().any(|(k, _)| k == "INPUT_VERSION"));
    let (windows, env) = crate::action::step("windows");
    assert_eq!(
        windows,
        r#"'& "$env:GITHUB_ACTION_PATH\dist\action\install.ps1"'"#
    );
    assert!(env.iter().any(|(k, _)| k == "INPUT_VERSION"));
    assert!(repository().join("dist/action/install.ps1").is_file());
    // The input and the output the documentation names.
    assert!(text.contains("\ninputs:\n  version:\n"), "{text}");
    assert!(text.contains("\noutputs:\n  path:\n"), "{text}");
    assert!(text.contains("value: ${{ steps.unix.outputs.path || steps.windows.outputs.path }}"));
}

#[test]
fn every_file_of_the_one_line_installs_starts_with_a_comment_saying_what_it_is_for() {
    let root = repository();
    for (file, comment) in [
        ("action.yml", "# "),
        ("dist/Dockerfile", "# "),
        ("dist/install.sh", "#!/bin/sh\n# "),
        ("dist/action/install.sh", "#!/usr/bin/env bash\n# "),
        ("dist/action/install.ps1", "# "),
        ("dist/stamp-install.sh", "#!/usr/bin/env bash\n# "),
        ("dist/actionlint.sh", "#!/usr/bin/env bash\n# "),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            text.starts_with(comment),
            "{file} does not start with {comment:?}"
        );
    }
    // Rust with a //! comment, python (the https relay) with a docstring.
    for entry in std::fs::read_dir(root.join("tests/install")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let first = if path.extension().is_some_and(|e| e == "py") {
            "\"\"\"The "
        } else {
            "//! "
        };
        assert!(
            text.starts_with(first),
            "{} does not start with {first:?}",
            path.display()
        );
    }
}
