//! The invariants ARCHITECTURE.md states, checked on the tree as rust-analyzer's `tidy` tests
//! check theirs (<https://github.com/rust-lang/rust-analyzer/blob/master/xtask/src/tidy.rs>):
//! no Rust file over 500 lines and no `#[path]` but for the tests' shared helpers, no vendor,
//! sink or observer named under `src/supervise/`, no import from a lower module to a higher one
//! (the code map's order), every path ARCHITECTURE.md names exists, and every file under `src/`
//! is named there.

use std::path::{Path, PathBuf};

/// The repository's root.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, outside build output (`target`).
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The Rust files of the project: the binary and library, the crates, the tests, the benches
/// and the fuzz targets.
fn project_files() -> Vec<PathBuf> {
    ["src", "crates", "tests", "benches", "fuzz", "build.rs"]
        .iter()
        .flat_map(|d| {
            let path = root().join(d);
            if path.is_file() {
                vec![path]
            } else {
                rust_files(&path)
            }
        })
        .collect()
}

pub(crate) fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn no_rust_file_is_over_500_lines() {
    let long: Vec<String> = project_files()
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).ok()?.lines().count();
            (lines > 500).then(|| format!("{} ({lines} lines)", relative(p)))
        })
        .collect();
    assert!(
        long.is_empty(),
        "one concern per file, under 500 lines: split {long:?}"
    );
}

#[test]
fn path_attributes_only_share_the_tests_helpers() {
    let tricks: Vec<String> = project_files()
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            text.lines()
                .filter(|l| l.trim_start().starts_with("#[path") && !l.contains("\"../common/"))
                .map(|l| format!("{}: {}", relative(p), l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        tricks.is_empty(),
        "a module's file is where its name says (a directory for its parts), not a #[path]: \
         {tricks:?}"
    );
}

#[test]
fn the_supervisor_names_no_vendor_sink_or_observer() {
    const NAMES: [&str; 10] = [
        "github",
        "gitlab",
        "buildkite",
        "prometheus",
        "otlp",
        "opentelemetry",
        "ci::",
        "telemetry::",
        "chronic::",
        "metrics_file",
    ];
    // The reporter is an observer like the others: no call on it, no `report::` path.
    let reporter = regex::Regex::new(r"\b(report::|[Rr]eporter\b)").unwrap();
    let mut found = Vec::new();
    for path in rust_files(&root().join("src/supervise")) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for name in NAMES {
                if lower.contains(name) {
                    found.push(format!("{}:{}: {name}", relative(&path), n + 1));
                }
            }
            if let Some(m) = reporter.find(line) {
                found.push(format!("{}:{}: {}", relative(&path), n + 1, m.as_str()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/supervise/ emits events; the observers name themselves: {found:?}"
    );
}

#[test]
fn the_loop_shapes_are_matched_only_in_their_strategies() {
    let shapes = root().join("src/supervise/decide/shapes");
    let tests = root().join("src/supervise/decide/tests");
    let matched = regex::Regex::new(r"\bShape::").unwrap();
    let mut found = Vec::new();
    for path in rust_files(&root().join("src/supervise")) {
        if path.starts_with(&shapes)
            || path.starts_with(&tests)
            || path.ends_with("decide/tests.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if matched.is_match(line) {
                found.push(format!("{}:{}", relative(&path), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/supervise/ asks the loop's shape (decide/shapes/), never matches on Shape: {found:?}"
    );
}

/// ARCHITECTURE.md's sections (`### ` headings) with their text.
fn sections() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut sections = vec![(String::new(), String::new())];
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            sections.push((heading.to_string(), String::new()));
        } else {
            let body = &mut sections.last_mut().unwrap().1;
            body.push_str(line);
            body.push('\n');
        }
    }
    sections
}

/// The `code spans` of `text` that look like paths of the tree (`supervise/decide.rs`,
/// `src/lib.rs`, `pipeline/`).
fn named_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| {
            !span.contains(' ')
                && !span.contains("::")
                && !span.starts_with('-')
                && !span.contains('*')
                && (span.ends_with(".rs") || (span.ends_with('/') && span.len() > 1))
        })
        .map(String::from)
        .collect()
}

/// The directories a heading names (`` `supervise/` ``), under `src/` unless already rooted.
fn heading_dirs(heading: &str) -> Vec<String> {
    named_paths(heading)
        .into_iter()
        .filter(|p| p.ends_with('/'))
        .map(|p| p.trim_start_matches("src/").to_string())
        .collect()
}

/// Whether `name`, as ARCHITECTURE.md names it in the section about `dirs`, is a path of the
/// tree: from the root, from `src/`, or from one of the section's directories (or a parent
/// directory the file's own path spells out).
fn exists(name: &str, dirs: &[String]) -> bool {
    let root = root();
    let bare = name.trim_end_matches('/');
    if root.join(bare).exists() || root.join("src").join(bare).exists() {
        return true;
    }
    dirs.iter()
        .any(|d| root.join("src").join(d).join(bare).exists())
        || rust_files(&root.join("src"))
            .iter()
            .any(|p| relative(p).ends_with(&format!("/{bare}")))
}

#[test]
fn every_path_architecture_md_names_exists() {
    let mut missing = Vec::new();
    for (heading, body) in sections() {
        let dirs = heading_dirs(&heading);
        for name in named_paths(&heading).into_iter().chain(named_paths(&body)) {
            if !exists(&name, &dirs) {
                missing.push(format!("{name} (in \"### {heading}\")"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths the tree does not have: {missing:?}"
    );
}

/// Whether ARCHITECTURE.md names the file at `in_src` (its path under `src/`): by that path,
/// or by its name in the section about its directory, or (a module's `mod.rs`, the tests
/// beside a module) by its directory.
fn is_named(sections: &[(String, String)], in_src: &str) -> bool {
    let (dir, file) = match in_src.rsplit_once('/') {
        Some((d, f)) => (format!("{d}/"), f.to_string()),
        None => (String::new(), in_src.to_string()),
    };
    let top = format!("{}/", in_src.split('/').next().unwrap_or_default());
    sections.iter().any(|(heading, body)| {
        let section_dirs = heading_dirs(heading);
        named_paths(heading)
            .into_iter()
            .chain(named_paths(body))
            .any(|span| {
                let span = span.trim_start_matches("src/");
                span == in_src
                    || (file == "mod.rs" && span == dir)
                    || ((dir.contains("/tests/") || file == "tests.rs") && span == top)
                    || (span == file
                        && (section_dirs.contains(&dir)
                            || (dir.is_empty() && section_dirs.is_empty())))
            })
    })
}

#[test]
fn architecture_md_s_file_lists_match_the_tree() {
    // Where ARCHITECTURE.md lists a directory's files (it names at least half of them), and
    // for the files at the top of src/, it names them all.
    let sections = sections();
    let mut by_dir: std::collections::BTreeMap<String, Vec<(String, bool)>> = Default::default();
    for path in rust_files(&root().join("src")) {
        let rel = relative(&path);
        let in_src = rel.trim_start_matches("src/").to_string();
        let dir = in_src
            .rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_default();
        // A module's own file and its unit tests are its directory's, not items of a list.
        if path
            .file_name()
            .is_some_and(|f| f == "mod.rs" || f == "tests.rs")
            || in_src.contains("/tests/")
        {
            continue;
        }
        let named = is_named(&sections, &in_src);
        by_dir.entry(dir).or_default().push((rel, named));
    }
    let mut unnamed = Vec::new();
    for (dir, files) in &by_dir {
        let named = files.iter().filter(|f| f.1).count();
        if dir.is_empty() || named * 2 >= files.len() {
            unnamed.extend(files.iter().filter(|f| !f.1).map(|f| f.0.clone()));
        }
    }
    assert!(
        unnamed.is_empty(),
        "ARCHITECTURE.md lists these directories' files but not these (name each in the \
         section of its directory): {unnamed:?}"
    );
}
