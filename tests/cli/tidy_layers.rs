//! The layers of ARCHITECTURE.md's code map, checked on the tree: no module of the crate
//! imports one above it, and every module has a layer (the tidy tests' other half, beside
//! `tidy.rs`).

use crate::tidy::{relative, root, rust_files};

/// ARCHITECTURE.md's code map, top to bottom: each layer's name and the top-level modules of
/// `src/` in it (a file at `src/NAME.rs` or under `src/NAME/`; `lib` and `main` are those two
/// files, whose own items, `crate::finish`, are the entry's). A module imports only its own
/// layer and those below it. `simulate`, which the code map leaves out, sits where `lib.rs`
/// sends it: beside the entry, reading what `cli` parsed (not a `Config`), above `cli`.
const LAYERS: [(&str, &[&str]); 9] = [
    (
        "the entry",
        &["lib", "main", "start", "math_symbols", "observers"],
    ),
    ("--simulate", &["simulate"]),
    ("the command line", &["cli"]),
    ("the run", &["supervise"]),
    ("the validated settings", &["config"]),
    (
        "the events and the observers",
        &["observe", "report", "ci", "chronic", "telemetry"],
    ),
    (
        "what the supervisor uses",
        &[
            "process",
            "signals",
            "pipeline",
            "budget",
            "net",
            "outlet",
            "lock",
            "env_file",
            "hints",
            "transient",
        ],
    ),
    (
        "the bottom",
        &[
            "status",
            "codes",
            "http_status",
            "preset",
            "held",
            "spool",
            "duration",
            "size",
            "stop_signal",
            "types",
            "escape",
            "entropy",
            "signal_names",
        ],
    ),
    // lib.rs's re-export of the workspace's `retry-tool-backoff`.
    ("the crates", &["backoff"]),
];

/// The arrows that look upward by design (from, to): `config` reads the struct `cli` parsed.
const UPWARD_BY_DESIGN: [(&str, &str); 1] = [("config", "cli")];

/// The layer of a top-level module (`None`: not in the table).
fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, m)| m.contains(&module))
}

/// The top-level module a file under `src/` belongs to (`src/cli/read.rs`: `cli`).
fn module_of(in_src: &str) -> String {
    let first = in_src.split('/').next().unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// `text` without its `//` comments (doc comments' intra-doc links are no imports), line by
/// line, so that line numbers stay.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `text` reaches through `crate::`, with the line (from 1) of each:
/// a path (`crate::status::Exit`, `use crate::cli;`) or a group (`use crate::{cli, config::X};`,
/// over as many lines as rustfmt gives it).
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code = without_comments(text);
    let bytes = code.as_bytes();
    let line_at = |i: usize| code[..i].matches('\n').count() + 1;
    let ident_at = |i: usize| {
        let end = code[i..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(code.len(), |n| i + n);
        &code[i..end]
    };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        // `pub(in crate::supervise)` and such are visibilities, not imports; a longer name
        // ending in `crate` (`my_crate::`) is another path.
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        if code[..at].trim_end().ends_with("in") {
            continue;
        }
        let start = at + "crate::".len();
        if bytes.get(start) == Some(&b'{') {
            // The group's top-level names: the first name of each item at depth 1.
            let mut depth = 0;
            let mut expect_name = true;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'{' => {
                        depth += 1;
                        expect_name = depth == 1;
                    }
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => expect_name = true,
                    c if expect_name && (c.is_ascii_alphabetic() || c == b'_') => {
                        let name = ident_at(i);
                        found.push((line_at(i), name.to_string()));
                        expect_name = false;
                        i += name.len();
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let name = ident_at(start);
            if !name.is_empty() {
                found.push((line_at(at), name.to_string()));
            }
        }
    }
    found
}

#[test]
fn every_module_of_the_crate_has_a_layer() {
    let mut unplaced = Vec::new();
    for file in ["src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        for line in without_comments(&text).lines() {
            let line = line.trim();
            let Some(declared) = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
            else {
                continue;
            };
            let name = declared.trim_end_matches(';').trim();
            if layer(name).is_none() {
                unplaced.push(format!("{file}: mod {name}"));
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "place each module in the code map (ARCHITECTURE.md) and in this test's LAYERS: \
         {unplaced:?}"
    );
}

#[test]
fn no_module_imports_one_above_it() {
    // The table's own reading: what the scan finds in a few known shapes.
    assert_eq!(
        crate_paths(
            "use crate::{\n    cli::Cli,\n    config::{self, X},\n};\n\
             pub(in crate::supervise) fn f() { crate::status::Exit::Ok; } // crate::ci\n"
        ),
        [
            (2, "cli".to_string()),
            (3, "config".to_string()),
            (5, "status".to_string())
        ]
    );
    let mut upward = Vec::new();
    for path in rust_files(&root().join("src")) {
        let rel = relative(&path);
        let from = module_of(rel.trim_start_matches("src/"));
        let Some(from_layer) = layer(&from) else {
            upward.push(format!("{rel}: module {from} is in no layer of LAYERS"));
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, to) in crate_paths(&text) {
            // `crate::{self, ..}` names the crate, no module of it; any other name that is no
            // module of the table is an item of lib.rs: the entry's.
            if to == "self" {
                continue;
            }
            let to_layer = layer(&to).unwrap_or(0);
            if to_layer < from_layer && !UPWARD_BY_DESIGN.contains(&(from.as_str(), to.as_str())) {
                upward.push(format!(
                    "{rel}:{line}: {from} ({}) imports {to} ({})",
                    LAYERS[from_layer].0, LAYERS[to_layer].0
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "a module imports only modules below it (ARCHITECTURE.md, \"Code map\"): {upward:#?}"
    );
}
