//! The committed man page and completion scripts are what `retry --generate` prints from the
//! current clap definition. After changing a flag, rewrite them with
//! `RETRY_REGENERATE=1 cargo test generated` and commit the result.

use std::path::PathBuf;

use clap::ValueEnum;
use retry::cli::generate::Target;
use retry::cli::value_name;

use crate::helpers::{refuses, retry};

/// `--generate` values and the files they are committed to, relative to the repository root.
fn generated() -> impl Iterator<Item = (String, &'static str)> {
    Target::value_variants()
        .iter()
        .map(|t| (value_name(t), t.path()))
}

/// `retry --generate what`'s stdout, with `vars` set and no other `RETRY_*` variable.
fn generate(what: &str, vars: &[(&str, &str)]) -> Vec<u8> {
    let out = retry()
        .envs(vars.iter().copied())
        .args(["--generate", what])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    assert!(!out.is_empty(), "--generate {what} printed nothing");
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_man_page_and_completions_are_up_to_date() {
    let rewrite = std::env::var_os("RETRY_REGENERATE").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (what, path) in generated() {
        let generated = generate(&what, &[]);
        let file = root().join(path);
        if rewrite {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &generated).unwrap();
        } else if std::fs::read(&file).ok().as_deref() != Some(&generated[..]) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "out of date: {stale:?}; rewrite them with `RETRY_REGENERATE=1 cargo test generated`"
    );
}

#[test]
fn generate_needs_no_command_and_ignores_the_environment() {
    for (what, _) in generated() {
        let plain = generate(&what, &[]);
        // Variables neither change the output (no values shown) nor stop it when bad.
        let with_vars = generate(
            &what,
            &[
                ("RETRY_BASE", "5s"),
                ("RETRY_PRESET", "aws"),
                ("RETRY_MAX_RETRIES", "lots"),
            ],
        );
        assert_eq!(plain, with_vars, "{what}");
    }
}

#[test]
fn generate_refuses_unknown_targets() {
    refuses(&["--generate", "tcsh"], &["--generate", "'tcsh'"]);
}

#[test]
fn man_page_has_the_extra_sections() {
    let man = String::from_utf8(generate("man", &[])).unwrap();
    let mut at = 0;
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH BACKOFF",
        ".SH STOPPING",
        ".SH CONDITIONS",
        ".SH OUTPUT",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH SIGNALS",
        ".SH EXAMPLES",
    ] {
        let found = man[at..]
            .find(section)
            .unwrap_or_else(|| panic!("{section} missing or out of order"));
        at += found;
    }
    // Every RETRY_<FLAG> variable, the attempt's own variables, the presets' sources.
    for needle in [
        "RETRY_BASE",
        "RETRY_CAP",
        "RETRY_JITTER",
        "RETRY_MAX_RETRIES",
        "RETRY_DEADLINE",
        "RETRY_TIMEOUT",
        "RETRY_PRESET",
        "RETRY_ATTEMPT",
        "RETRY_MAX_ATTEMPTS",
        "NO_COLOR",
        "connection\\-backoff.md",
        "google\\-api\\-core",
        "AWS SDK standard retry mode",
        "Google Cloud retry guides",
    ] {
        assert!(man.contains(needle), "man page lacks {needle:?}");
    }
    assert_eq!(man.matches(".TH ").count(), 1);
}

#[test]
fn completions_know_the_flags_and_their_values() {
    let completions = |w: &String| w != "man" && w != "transient-table";
    for (what, _) in generated().filter(|(w, _)| completions(w)) {
        let what = what.as_str();
        let text = String::from_utf8(generate(what, &[])).unwrap();
        for needle in ["max-retries", "preset", "kill-after"] {
            assert!(text.contains(needle), "{what} completions lack {needle:?}");
        }
        // clap_complete's elvish and PowerShell scripts complete flags only, not their values.
        if !["elvish", "powershell"].contains(&what) {
            for needle in ["api-core", "proportional"] {
                assert!(text.contains(needle), "{what} completions lack {needle:?}");
            }
        }
        assert!(
            !text.contains("--generate"),
            "{what} offers --generate, which is not for completing a run"
        );
        // `no-backoff` and lists of modes are for --simulate: a run refuses them.
        assert!(!text.contains("no-backoff"), "{what} offers no-backoff");
    }
}

#[test]
fn bash_zsh_and_fish_completions_hand_the_command_to_the_shell() {
    // The glue that completes the wrapped command as the shell would without retry
    // (tests/cli/completions.rs runs it), and where it learnt which flags take a value.
    for (what, needles) in [
        (
            "bash",
            &[
                "_command_offset",
                "complete -F _retry_line retry",
                "|--cap|",
            ][..],
        ),
        ("zsh", &[":_retry_command' \\", "_normal -p retry"][..]),
        (
            "fish",
            &[
                "-n 'not __fish_retry_command >/dev/null' -s c -l cap",
                "complete -C",
            ][..],
        ),
    ] {
        let text = String::from_utf8(generate(what, &[])).unwrap();
        for needle in needles {
            assert!(text.contains(needle), "{what} completions lack {needle:?}");
        }
        assert!(!text.contains("@VALUE_"), "{what}: a placeholder is left");
    }
}

#[test]
fn the_transient_table_names_every_class_and_its_sources() {
    let text = String::from_utf8(generate("transient-table", &[])).unwrap();
    for class in [
        "timeout",
        "dns",
        "connect",
        "reset",
        "tls",
        "http",
        "rate-limit",
        "busy",
    ] {
        assert!(
            text.contains(&format!("class:    {class}\n")),
            "no row of {class}"
        );
    }
    assert!(text.contains("curl 7: connect"), "{text}");
    assert!(
        text.lines()
            .filter(|l| l.starts_with("source:"))
            .all(|l| l.contains("https://"))
    );
}
