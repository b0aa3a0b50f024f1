//! The committed completion scripts in real interactive shells: bash with bash-completion, zsh
//! with compinit, fish; each under tmux, in a private home, with the script installed from
//! completions/ where the shell looks for it. After `--`, or from the first word that is not
//! one of retry's options or their values, the wrapped command is completed as the shell
//! completes it alone (real git and curl completions); retry's values that are not files
//! offer none; `--jitter` offers only what a run accepts.
//!
//! Each case starts a fresh shell, types a line and Tab, then waits for the screen to show a
//! candidate, or reads the line back through a key bound to write it to a file: keys are
//! handled in order, so the line read is the one after the completion, with no sleeps.

use std::ffi::OsString;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::helpers::HANG_LIMIT;
use crate::helpers::tmux::Tmux;
use crate::tools::{self, require};

/// What every case needs: tmux, the three shells, bash-completion, and git and curl, whose own
/// completions the cases use.
const NEEDS: [tools::Tool; 7] = [
    tools::TMUX,
    tools::BASH,
    tools::ZSH,
    tools::FISH,
    tools::BASH_COMPLETION,
    tools::GIT,
    tools::CURL,
];

/// What each shell shows as its prompt.
const PROMPT: &str = "ready> ";

/// The one file in the shells' working directory: offered there by any file completion.
const FILE: &str = "lonely-file";

/// A shell under test.
#[derive(Clone, Copy, Debug)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

/// What a completion should give.
#[derive(Clone, Copy, Debug)]
enum Expect<'a> {
    /// This word on the screen: completed into the line, or among the candidates listed.
    Shown(&'a str),
    /// The line after the completion (trailing blanks aside) is one of these.
    Line(&'a [&'a str]),
}

/// Types `typed`, presses Tab `tabs` times, and checks `expect`, in a fresh `shell`.
fn check(shell: Shell, typed: &str, tabs: usize, expect: Expect<'_>) {
    let session = Session::start(shell);
    session.tmux.type_text(typed);
    for _ in 0..tabs {
        session.tmux.press(&["Tab"]);
    }
    match expect {
        Expect::Shown(word) => {
            session.tmux.wait_for_screen(
                &format!("{shell:?} to show {word:?} for {typed:?} and {tabs} Tab"),
                |screen| screen.split_whitespace().any(|w| w == word),
            );
        }
        Expect::Line(lines) => {
            let line = session.line();
            assert!(
                lines.contains(&line.trim_end()),
                "{shell:?}: {typed:?} and {tabs} Tab gave the line {line:?}, not one of \
                 {lines:?}; the screen:\n{}",
                session.tmux.screen()
            );
        }
    }
}

/// [`check`] in every shell.
fn check_all(typed: &str, tabs: usize, expect: Expect<'_>) {
    for shell in SHELLS {
        check(shell, typed, tabs, expect);
    }
}

#[test]
fn the_wrapped_command_is_completed_after_double_dash() {
    if !require(&NEEDS) {
        return;
    }
    check_all("retry -- git chec", 2, Expect::Shown("checkout"));
    check_all("retry --cap 5 -- gi", 2, Expect::Shown("git"));
}

#[test]
fn the_wrapped_command_is_completed_after_retrys_options_and_their_values() {
    if !require(&NEEDS) {
        return;
    }
    check_all("retry -n 3 -- curl --fa", 2, Expect::Shown("--fail"));
    // No `--`: `3` is the value of -n, so curl is the command; -q and -n share a word.
    check_all("retry -qn 3 curl --fa", 2, Expect::Shown("--fail"));
    check_all("retry --cap=5 git chec", 2, Expect::Shown("checkout"));
    check_all(
        "retry -- retry -n 3 -- git chec",
        2,
        Expect::Shown("checkout"),
    );
}

#[test]
fn retrys_own_options_are_not_offered_for_the_wrapped_command() {
    if !require(&NEEDS) {
        return;
    }
    // retry has --failure-rate; curl has no option starting --failu.
    check_all(
        "retry -n 3 -- curl --failu",
        1,
        Expect::Line(&["retry -n 3 -- curl --failu"]),
    );
}

#[test]
fn values_that_are_not_files_offer_no_files() {
    if !require(&NEEDS) {
        return;
    }
    for typed in [
        "retry --cap ",
        "retry -n ",
        "retry --on-retry ",
        "retry --budget ",
    ] {
        check_all(typed, 1, Expect::Line(&[typed.trim_end()]));
    }
    // The control: a flag that takes a file offers the one file there is.
    check_all(
        "retry --plot ",
        1,
        Expect::Line(&["retry --plot lonely-file"]),
    );
}

#[test]
fn retrys_own_options_and_their_values_are_completed() {
    if !require(&NEEDS) {
        return;
    }
    // zsh completes a long option that takes a value with its `=`.
    check_all(
        "retry --ji",
        1,
        Expect::Line(&["retry --jitter", "retry --jitter="]),
    );
    // `no-backoff` is for --simulate only: `none` is the one mode of a run starting "no".
    check_all("retry -j no", 1, Expect::Line(&["retry -j none"]));
    // bash splits the word at `=`: what follows is still the value of --jitter.
    check_all(
        "retry --jitter=fu",
        1,
        Expect::Line(&["retry --jitter=full"]),
    );
}

/// A shell started under tmux at its prompt, in a directory of its own holding its home, its
/// configuration, retry's completion script installed from the repository, and a working
/// directory with one file.
struct Session {
    shell: Shell,
    tmux: Tmux,
    /// Where the key C-t appends the line being edited.
    lines: PathBuf,
    _dir: tempfile::TempDir,
}

impl Session {
    fn start(shell: Shell) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let work = mkdir(root, "work");
        std::fs::write(work.join(FILE), "").unwrap();
        // retry on PATH, as when installed: fish loads a command's completions only when the
        // command exists.
        let bin = mkdir(root, "bin");
        symlink(crate::helpers::bin(), bin.join("retry")).unwrap();
        let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .unwrap();
        let lines = root.join("lines");
        // Nothing from the caller's environment but PATH: no RETRY_*, GITHUB_*, GIT_*, TMUX.
        let mut env: Vec<(&str, OsString)> = vec![
            ("HOME", mkdir(root, "home").into()),
            ("PATH", path),
            ("TERM", "xterm-256color".into()),
            ("LANG", "C.UTF-8".into()),
            ("XDG_CONFIG_HOME", mkdir(root, "config").into()),
            ("XDG_DATA_HOME", mkdir(root, "data").into()),
            ("XDG_CACHE_HOME", mkdir(root, "cache").into()),
            ("COMPLETION_LINES", lines.clone().into()),
        ];
        let argv = shell.install(root, &mut env);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let tmux = Tmux::start(&root.join("tmux.sock"), &argv, &env, &work);
        tmux.wait_for_screen(&format!("{shell:?}'s prompt"), |screen| {
            screen.lines().any(|l| l.starts_with(PROMPT.trim_end()))
        });
        Session {
            shell,
            tmux,
            lines,
            _dir: dir,
        }
    }

    /// The line being edited, as the shell has it once every key typed so far is handled.
    fn line(&self) -> String {
        self.tmux.press(&["C-t"]);
        let start = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&self.lines)
                && let Some(line) = text.strip_suffix('\n')
            {
                return line.to_string();
            }
            assert!(
                start.elapsed() < HANG_LIMIT,
                "{:?} did not write its line; the screen:\n{}",
                self.shell,
                self.tmux.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Shell {
    /// Writes this shell's configuration under `root` (prompt, C-t writing the line to
    /// $COMPLETION_LINES, retry's completion script where the shell finds installed ones),
    /// adds its variables to `env`, and returns the command line that starts it.
    fn install(self, root: &Path, env: &mut Vec<(&str, OsString)>) -> Vec<String> {
        let script = |name: &str| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("completions")
                .join(name)
        };
        match self {
            Shell::Bash => {
                // Where bash-completion looks first, under $XDG_DATA_HOME, as the Debian
                // package installs it under /usr/share.
                let dir = mkdir(root, "data/bash-completion/completions");
                symlink(script("retry.bash"), dir.join("retry")).unwrap();
                let rc = root.join("bashrc");
                let text = format!(
                    "source {}\n\
                     PS1='{PROMPT}'\n\
                     bind 'set bell-style none'\n\
                     bind -x '\"\\C-t\": printf \"%s\\n\" \"$READLINE_LINE\" >> \"$COMPLETION_LINES\"'\n",
                    bash_completion().display()
                );
                std::fs::write(&rc, text).unwrap();
                let rc = rc.display().to_string();
                vec![
                    "bash".into(),
                    "--noprofile".into(),
                    "--rcfile".into(),
                    rc,
                    "-i".into(),
                ]
            }
            Shell::Zsh => {
                let functions = mkdir(root, "zsh-functions");
                symlink(script("_retry"), functions.join("_retry")).unwrap();
                let zdotdir = mkdir(root, "zdotdir");
                let text = format!(
                    "fpath=({} $fpath)\n\
                     autoload -Uz compinit\n\
                     compinit -u -d \"$ZDOTDIR/.zcompdump\"\n\
                     PS1='{PROMPT}'\n\
                     unsetopt beep\n\
                     write-line() {{ print -r -- \"$BUFFER\" >> \"$COMPLETION_LINES\" }}\n\
                     zle -N write-line\n\
                     bindkey '^T' write-line\n",
                    functions.display()
                );
                std::fs::write(zdotdir.join(".zshrc"), text).unwrap();
                env.push(("ZDOTDIR", zdotdir.into()));
                vec!["zsh".into(), "-i".into()]
            }
            Shell::Fish => {
                let dir = mkdir(root, "config/fish/completions");
                symlink(script("retry.fish"), dir.join("retry.fish")).unwrap();
                // Present, so that fish does not start generating completions from every man
                // page in the background at its first start.
                mkdir(root, "data/fish/generated_completions");
                let text = format!(
                    "function fish_prompt; printf '{PROMPT}'; end\n\
                     function fish_greeting; end\n\
                     set -g fish_autosuggestion_enabled 0\n\
                     function fish_user_key_bindings\n\
                     \x20   bind \\ct 'commandline >> $COMPLETION_LINES'\n\
                     end\n"
                );
                std::fs::write(root.join("config/fish/config.fish"), text).unwrap();
                vec!["fish".into(), "-i".into()]
            }
        }
    }
}

/// bash-completion's main script; panics, saying to install it, if it is not there.
fn bash_completion() -> PathBuf {
    let candidates = tools::BASH_COMPLETION_SCRIPTS;
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the completion tests need bash-completion ({candidates:?}): install it \
                 (Debian: apt-get install bash-completion); .ci/run does"
            )
        })
}

/// Creates `root/path` and its parents; returns it.
fn mkdir(root: &Path, path: &str) -> PathBuf {
    let dir = root.join(path);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
