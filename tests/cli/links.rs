//! Every relative link of the project's Markdown files leads somewhere: `[text](path)`,
//! `[text](path#anchor)`, `[text](#anchor)`, `![alt](path)` and reference definitions
//! `[ref]: path` in every `*.md` of the repository (README.md, docs/, RELIABILITY.md,
//! CHANGELOG.md, benches/README.md, the crates' READMEs; not `target/` nor hidden directories).
//! The file or directory must exist inside the repository, and an anchor must be the GitHub slug
//! of a heading of the Markdown file it names. External links (`https://...`) are not fetched:
//! this is the offline check (what `lychee --offline` does, without installing it). Links in
//! fenced blocks, code spans and HTML comments are not links and are skipped, as GitHub does.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// The repository's Markdown files, relative to `root`, sorted.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else if name.ends_with(".md") {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// `text` with fenced code blocks, code spans and HTML comments replaced by spaces (newlines
/// kept, so byte offsets and line numbers stay), leaving what GitHub renders as Markdown.
fn prose(text: &str) -> String {
    let mut out: Vec<u8> = text.as_bytes().to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    // Fenced blocks: from a line opening with ``` or ~~~ to the line closing it.
    let mut offset = 0;
    let mut open: Option<(usize, String)> = None;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let fence: String = t
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect::<String>();
        let is_fence =
            fence.len() >= 3 && fence.chars().all(|c| c == fence.chars().next().unwrap());
        match &open {
            None if is_fence => open = Some((offset, fence)),
            Some((start, f)) if is_fence && fence.starts_with(f.as_str()) => {
                blank(&mut out, *start, offset + line.len());
                open = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    if let Some((start, _)) = open {
        blank(&mut out, start, text.len());
    }
    // HTML comments.
    let mut from = 0;
    while let Some(i) = find(&out, b"<!--", from) {
        let end = find(&out, b"-->", i + 4).map_or(out.len(), |j| j + 3);
        blank(&mut out, i, end);
        from = end;
    }
    // Code spans: a run of N backticks up to the next run of exactly N, within a paragraph.
    let mut i = 0;
    while i < out.len() {
        if out[i] != b'`' {
            i += 1;
            continue;
        }
        let n = out[i..].iter().take_while(|&&b| b == b'`').count();
        let mut j = i + n;
        let mut close = None;
        while j < out.len() {
            if out[j..].starts_with(b"\n\n") {
                break;
            }
            if out[j] == b'`' {
                let m = out[j..].iter().take_while(|&&b| b == b'`').count();
                if m == n {
                    close = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                blank(&mut out, i, end);
                i = end;
            }
            None => i += n,
        }
    }
    String::from_utf8(out).unwrap()
}

/// The first index of `needle` in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// The link destinations of `prose` (see [`prose`]) with their line numbers (from 1):
/// inline links and images, and reference definitions.
fn links(prose: &str) -> Vec<(usize, String)> {
    let line_of = |at: usize| prose[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = prose[from..].find("](").map(|i| i + from) {
        let start = i + 2;
        // The destination: `<...>`, or up to the `)` that balances, a title after a blank.
        let rest = &prose[start..];
        let dest = if let Some(r) = rest.strip_prefix('<') {
            r.split_once('>').map(|(d, _)| d.to_string())
        } else {
            let mut depth = 0;
            let end = rest.char_indices().find(|&(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' if depth == 0 => true,
                ')' => {
                    depth -= 1;
                    false
                }
                _ => c.is_whitespace(),
            });
            end.map(|(e, _)| rest[..e].to_string())
        };
        if let Some(dest) = dest {
            found.push((line_of(i), dest));
        }
        from = start;
    }
    for (n, line) in prose.lines().enumerate() {
        let t = line.trim_start();
        if line.len() - t.len() <= 3
            && let Some(rest) = t.strip_prefix('[')
            && let Some((label, dest)) = rest.split_once("]:")
            && !label.is_empty()
            && let Some(dest) = dest.split_whitespace().next()
        {
            found.push((n + 1, dest.trim_matches(['<', '>']).to_string()));
        }
    }
    found
}

/// GitHub's anchor for a heading's text: inline links reduced to their text, then lower case,
/// every character but letters, digits, `-`, `_` and spaces dropped (backticks, punctuation),
/// spaces turned into `-` (as github-slugger does).
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` renders as `text`.
    while let Some(i) = rest.find('[') {
        text.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after
            .split_once("](")
            .and_then(|(t, u)| u.split_once(')').map(|(_, r)| (t, r)))
        {
            Some((t, r)) => {
                text.push_str(t);
                rest = r;
            }
            None => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file: its ATX headings' slugs (a repeated slug gets `-1`, `-2`,
/// ... as on GitHub) and the `id`/`name` of its HTML anchors.
fn anchors(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    // Headings are read from the text (a heading's code spans count), fences from the prose.
    for (line, p) in text.lines().zip(prose.lines()) {
        let t = p.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if line.len() - t.len() > 3 || !(1..=6).contains(&hashes) {
            continue;
        }
        let Some(title) = line.trim_start()[hashes..].strip_prefix(' ') else {
            continue;
        };
        let title = title.trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_default();
        out.push(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    for attr in ["id=\"", "name=\""] {
        let mut rest = text;
        while let Some(i) = rest.find(attr) {
            let after = &rest[i + attr.len()..];
            if rest[..i].rfind('<') > rest[..i].rfind('>')
                && let Some((value, _)) = after.split_once('"')
            {
                out.push(value.to_string());
            }
            rest = after;
        }
    }
    out
}

/// Every broken relative link of the Markdown files `files` (relative to `root`), one line
/// each: `FILE:LINE: DESTINATION: what is wrong`.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for (line, dest) in links(&prose(&text)) {
            let bad = |why: &str| format!("{}:{line}: {dest}: {why}", file.display());
            if dest.is_empty() {
                broken.push(bad("empty link"));
                continue;
            }
            if dest.contains("://") || dest.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match dest.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (dest.as_str(), None),
            };
            // The target, resolved from the linking file's directory, must stay in the tree.
            let target = if path.is_empty() {
                file.clone()
            } else {
                let mut t = file.parent().unwrap().to_path_buf();
                let mut outside = false;
                for c in Path::new(path).components() {
                    match c {
                        Component::ParentDir => outside |= !t.pop(),
                        Component::Normal(c) => t.push(c),
                        Component::CurDir => {}
                        Component::RootDir | Component::Prefix(_) => outside = true,
                    }
                }
                if outside {
                    broken.push(bad("leads out of the repository"));
                    continue;
                }
                t
            };
            if !root.join(&target).exists() {
                broken.push(bad(&format!("{} does not exist", target.display())));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if target.extension().is_none_or(|e| e != "md") {
                // Anchors into other files (`#L10` of source) are GitHub's business.
                continue;
            }
            let target_text = std::fs::read_to_string(root.join(&target)).unwrap();
            if !anchors(&target_text).iter().any(|a| a == anchor) {
                broken.push(bad(&format!(
                    "no heading of {} has the anchor #{anchor}",
                    target.display()
                )));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_of_every_markdown_file_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    for must in [
        "README.md",
        "RELIABILITY.md",
        "CHANGELOG.md",
        "benches/README.md",
    ] {
        assert!(
            files.contains(&PathBuf::from(must)),
            "{must} not checked: {files:?}"
        );
    }
    let broken = broken_links(root, &files);
    assert!(
        broken.is_empty(),
        "broken relative links:\n{}",
        broken.join("\n")
    );
}

#[test]
fn slugs_are_githubs() {
    for (heading, anchor) in [
        ("Exit status", "exit-status"),
        ("In CI, cron and make", "in-ci-cron-and-make"),
        ("curl and server hints", "curl-and-server-hints"),
        (
            "`--splay`, `--budget` and `--breaker`",
            "--splay---budget-and---breaker",
        ),
        ("What `RETRY_ATTEMPT` says", "what-retry_attempt-says"),
        ("Coming from `timeout(1)`?", "coming-from-timeout1"),
        ("Start-up and memory", "start-up-and-memory"),
        ("See [the guide](docs/usage.md)", "see-the-guide"),
        ("Café: 1.5 s", "café-15-s"),
    ] {
        assert_eq!(slug(heading), anchor, "{heading}");
    }
    let text =
        "# A\n## Exit status\n```\n# not a heading\n```\n### Exit status ##\n<a id=\"x\"></a>\n";
    assert_eq!(anchors(text), ["a", "exit-status", "exit-status-1", "x"]);
}

#[test]
fn a_broken_link_or_anchor_is_found_and_code_is_not_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(
        root.join("docs/usage.md"),
        "# Usage\n\n## Exit status: `124`, `137`\n\nBack [home](../README.md).\n",
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        "# retry\n\n\
         [ok](docs/usage.md) [ok](docs/usage.md#exit-status-124-137) [ok](#retry) \
         [ok](docs/) ![ok](docs/usage.md) [ok](https://example.com/nowhere.md)\n\
         [gone](docs/gone.md)\n\
         [renamed](docs/usage.md#exit-statuses)\n\
         [here](#nothing-here)\n\
         [out](../elsewhere.md)\n\
         `[code](docs/gone.md)` and ``[code `x`](docs/gone.md)``\n\
         <!-- [comment](docs/gone.md) -->\n\
         ```md\n[fenced](docs/gone.md)\n```\n\
         [ref]: docs/missing.md\n",
    )
    .unwrap();
    let files = markdown_files(root);
    assert_eq!(
        files,
        [PathBuf::from("README.md"), PathBuf::from("docs/usage.md")]
    );
    let broken = broken_links(root, &files);
    let lines: Vec<&str> = broken
        .iter()
        .map(|b| b.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "README.md:4",
            "README.md:5",
            "README.md:6",
            "README.md:7",
            "README.md:13"
        ],
        "{broken:#?}"
    );
    assert!(
        broken[0].contains("docs/gone.md does not exist"),
        "{broken:#?}"
    );
    assert!(broken[1].contains("#exit-statuses"), "{broken:#?}");
    assert!(broken[3].contains("out of the repository"), "{broken:#?}");
}
