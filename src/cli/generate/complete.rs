//! The shell completion scripts: clap_complete's, from the run's clap definition, and for bash,
//! zsh and fish a little hand-written glue (`glue.bash`, `glue.zsh`, `glue.fish` beside this
//! file) so that the wrapped command is completed as the shell completes it after `sudo` or
//! `timeout`. Left to clap_complete (clap issue 6130), bash and zsh completed nothing after
//! `--`, and fish offered retry's own options for the wrapped command's.
//!
//! Where the command starts, the glue works out as retry's parser does: after `--`, or at the
//! first word that is neither an option nor an option's value. Which flags take a value is
//! written into the glue from the definition ([`Flags`]), never by hand.

use std::io;

use clap::builder::Resettable;
use clap::{CommandFactory, ValueHint};
use clap_complete::Shell;

use crate::cli::{Cli, Flag};

/// The script `retry --generate SHELL` prints.
pub(super) fn script(shell: Shell) -> io::Result<Vec<u8>> {
    // clap_complete panics when its writer fails (a closed pipe): generate into memory, so
    // that the caller's write error is returned instead.
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut completed(), "retry", &mut text);
    let text = String::from_utf8(text).map_err(io::Error::other)?;
    let flags = Flags::of(&definition());
    let script = match shell {
        Shell::Bash => text + &flags.fill(include_str!("glue.bash"), "|"),
        Shell::Zsh => zsh(&text)?,
        Shell::Fish => fish(&text)? + &flags.fill(include_str!("glue.fish"), " "),
        _ => text,
    };
    Ok(script.into_bytes())
}

/// The run's definition, environment values hidden. `--jitter` takes the six modes a run
/// accepts, not `no-backoff` or the lists of `--simulate` (which the man page documents).
/// `--generate`, which `--help` and the man page list, is left out: it is for reading the
/// manual and for packagers, not for completing a command line to run.
fn definition() -> clap::Command {
    Cli::command().mut_args(|arg| {
        let hidden = arg.get_id() == Flag::Generate.id();
        arg.hide_env_values(true).hide(hidden)
    })
}

/// The definition as completed: without the hidden arguments, which clap_complete would offer
/// (it ignores `hide`). Requirements are dropped with them: completion does not check them,
/// and COMMAND's would name the missing `--generate`.
///
/// A value is not a file name unless its flag says so (`--plot`, `--budget-store`): the others
/// (durations, sizes, numbers, status codes, keys, regexes, hook commands) get
/// [`ValueHint::Other`], which offers nothing in every shell, where clap's default offers files.
fn completed() -> clap::Command {
    let full = definition();
    let visible = full
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .map(|arg| {
            let arg = arg.clone().required_unless_present(Resettable::Reset);
            let free_text = arg.get_value_hint() == ValueHint::Unknown
                && arg.get_long().is_some()
                && arg.get_action().takes_values()
                && arg.get_possible_values().is_empty();
            if free_text {
                arg.value_hint(ValueHint::Other)
            } else {
                arg
            }
        });
    let mut completed = clap::Command::new("retry")
        .version(env!("CARGO_PKG_VERSION"))
        .args(visible);
    if let Some(about) = full.get_about() {
        completed = completed.about(about.clone());
    }
    completed
}

/// The flags that take a value, as the glue needs them to tell where the command starts:
/// `retry -n 3 curl -n` wraps `curl -n`. Hidden flags aside: the one there is, `--generate`,
/// runs no command, and the scripts never name it.
#[derive(Debug, PartialEq, Eq)]
struct Flags {
    /// `--base`, `--cap`, ...: the value is the next word unless attached by `=`.
    value_longs: Vec<String>,
    /// The short flags that take a value: the rest of the word, or else the next word.
    value_shorts: String,
    /// The short flags that take none, which may come before one that does (`-qn 3`).
    bare_shorts: String,
}

impl Flags {
    /// Reads them from `definition`'s visible flags, `-h` and `-V` included.
    fn of(definition: &clap::Command) -> Flags {
        let mut definition = definition.clone();
        definition.build();
        let mut flags = Flags {
            value_longs: Vec::new(),
            value_shorts: String::new(),
            bare_shorts: String::new(),
        };
        for arg in definition
            .get_arguments()
            .filter(|arg| !arg.is_positional() && !arg.is_hide_set())
        {
            // A value given only with `=` (`--transient[=CLASSES]`) is never the next word: the
            // flag is bare as the glue sees it.
            let optional = arg.is_require_equals_set()
                && arg.get_num_args().is_some_and(|n| n.min_values() == 0);
            let takes_value = arg.get_action().takes_values() && !optional;
            // The glue takes exactly the next word as the value of a flag that takes one.
            let one_value = arg
                .get_num_args()
                .is_some_and(|n| n.min_values() == 1 && n.max_values() == 1);
            assert!(
                !takes_value || (one_value && !arg.is_require_equals_set()),
                "{}: not exactly one value, or not as the next word",
                arg.get_id()
            );
            let shorts = arg.get_short_and_visible_aliases().unwrap_or_default();
            let longs = arg.get_long_and_visible_aliases().unwrap_or_default();
            if takes_value {
                flags.value_shorts.extend(shorts);
                flags
                    .value_longs
                    .extend(longs.iter().map(|l| format!("--{l}")));
            } else {
                flags.bare_shorts.extend(shorts);
            }
        }
        flags
    }

    /// `glue` with `@VALUE_LONGS@` replaced by the long flags that take a value, separated by
    /// `separator` (a case pattern in bash, a switch case in fish), and `@VALUE_SHORTS@` by
    /// a regex matching a word of short flags whose last takes the next word as its value.
    fn fill(&self, glue: &str, separator: &str) -> String {
        let chars = |s: &str| {
            assert!(s.chars().all(|c| c.is_ascii_alphanumeric()), "{s:?}");
            s.to_string()
        };
        let shorts = format!(
            "^-[{}]*[{}]$",
            chars(&self.bare_shorts),
            chars(&self.value_shorts)
        );
        glue.replace("@VALUE_LONGS@", &self.value_longs.join(separator))
            .replace("@VALUE_SHORTS@", &shorts)
    }
}

/// clap_complete's zsh script with COMMAND completed by `_retry_command` (glue.zsh) instead of
/// `_cmdambivalent`, which takes `--` for the command when it is retry's first argument.
fn zsh(text: &str) -> io::Result<String> {
    let text = replace_once(text, ":_cmdambivalent' \\\n", ":_retry_command' \\\n")?;
    let end = "if [ \"$funcstack[1]\" = \"_retry\" ]; then";
    replace_once(&text, end, &format!("{}{end}", include_str!("glue.zsh")))
}

/// clap_complete's fish script with every line offering retry's own options and their values
/// made conditional: only while the cursor is before the command.
fn fish(text: &str) -> io::Result<String> {
    let plain = "complete -c retry ";
    let own = "complete -c retry -n 'not __fish_retry_command >/dev/null' ";
    let lines = text.lines().filter(|l| l.starts_with(plain)).count();
    if lines == 0 || text.matches(plain).count() != lines {
        return Err(unexpected(plain));
    }
    Ok(text
        .lines()
        .map(|line| match line.strip_prefix(plain) {
            Some(rest) => format!("{own}{rest}\n"),
            None => format!("{line}\n"),
        })
        .collect())
}

/// `text` with its one `from` replaced by `to`; an error if `from` is not there exactly once
/// (a clap_complete that writes its scripts otherwise).
fn replace_once(text: &str, from: &str, to: &str) -> io::Result<String> {
    if text.matches(from).count() != 1 {
        return Err(unexpected(from));
    }
    Ok(text.replacen(from, to, 1))
}

/// The error for a clap_complete script that lacks what the glue attaches to.
fn unexpected(what: &str) -> io::Error {
    io::Error::other(format!(
        "clap_complete's script is not as the completion glue expects: {what:?} is not where \
         it should be"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_that_take_a_value_come_from_the_definition() {
        let flags = Flags::of(&definition());
        for long in ["--cap", "--max-retries", "--jitter", "--plot", "--simulate"] {
            assert!(flags.value_longs.iter().any(|l| l == long), "{long}");
        }
        for long in [
            "--quiet",
            "--dry-run",
            "--http-hints",
            "--help",
            "--generate",
        ] {
            assert!(!flags.value_longs.iter().any(|l| l == long), "{long}");
        }
        for short in ['b', 'm', 'c', 'j', 'n', 'd', 't'] {
            assert!(flags.value_shorts.contains(short), "-{short}");
        }
        for short in ['q', 'v', 'h', 'V'] {
            assert!(flags.bare_shorts.contains(short), "-{short}");
        }
        assert_eq!(
            flags.fill("@VALUE_SHORTS@", ""),
            format!("^-[{}]*[{}]$", flags.bare_shorts, flags.value_shorts)
        );
    }

    #[test]
    fn only_flags_that_say_so_complete_file_names() {
        let command = completed();
        for arg in command.get_arguments() {
            let hint = arg.get_value_hint();
            let long = arg.get_long().unwrap_or_default();
            match long {
                "plot" | "lock" | "metrics-file" => assert_eq!(hint, ValueHint::FilePath),
                "budget-store" => assert_eq!(hint, ValueHint::DirPath),
                _ if arg.is_positional() => assert_eq!(hint, ValueHint::CommandWithArguments),
                _ if arg.get_action().takes_values() && arg.get_possible_values().is_empty() => {
                    assert_eq!(hint, ValueHint::Other, "--{long}")
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_run_offers_only_the_jitter_modes_a_run_accepts() {
        let command = completed();
        let jitter = command
            .get_arguments()
            .find(|a| a.get_long() == Some("jitter"))
            .unwrap();
        let names: Vec<String> = jitter
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "none",
                "full",
                "equal",
                "decorrelated",
                "additive",
                "proportional"
            ]
        );
    }
}
