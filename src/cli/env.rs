//! The `RETRY_<FLAG>` variables of a parse: which a command reads (never an empty one), and
//! the message naming the variable at fault when only the environment made a parse fail.

use std::ffi::{OsStr, OsString};

use clap::error::{ContextKind, ContextValue};

use super::errors::one_line;

/// The value of environment variable `name`, `None` when unset or empty.
fn env_value(name: &OsStr) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// `command` reading the environment only for the arguments `keep` accepts (by id), and never
/// from an empty variable. (The help shows `[env: NAME=value]` only for the ones it reads.)
pub fn with_env(command: clap::Command, keep: impl Fn(&str) -> bool) -> clap::Command {
    let skip = |arg: &clap::Arg| {
        arg.get_env().is_some_and(|name| {
            !keep(arg.get_id().as_str()) || std::env::var_os(name).is_some_and(|v| v.is_empty())
        })
    };
    if !command.get_arguments().any(skip) {
        // The usual case: nothing to take away, and rebuilding every argument costs start-up.
        return command;
    }
    command.mut_args(|arg| {
        if skip(&arg) {
            arg.env(None::<&'static str>)
        } else {
            arg
        }
    })
}

/// The one-line message for a parse with `command` that failed only because of the
/// environment: finds the variable at fault by reading the variables one at a time.
pub fn env_error(
    command: &clap::Command,
    args: &[OsString],
    read_env: &dyn Fn(&str) -> bool,
    full_error: &clap::Error,
) -> String {
    for arg in command.get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let id = arg.get_id().as_str();
        let Some(value) = env_value(name).filter(|_| read_env(id)) else {
            continue;
        };
        let probe = with_env(command.clone(), |other| other == id);
        if let Err(e) = probe.try_get_matches_from(args) {
            return format!(
                "invalid value '{}' for {} (--{long}): {}",
                crate::escape::escape(&value.to_string_lossy()),
                name.to_string_lossy(),
                crate::escape::escape(&reason(&e))
            );
        }
    }
    format!(
        "in the RETRY_* environment variables: {}",
        super::errors::usage(full_error)
    )
}

/// What was wrong with a value, from clap's error: the value parser's own message, or the
/// values it would have accepted.
fn reason(e: &clap::Error) -> String {
    if let Some(source) = std::error::Error::source(e) {
        return source.to_string();
    }
    if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) {
        return format!("expected one of {}", valid.join(", "));
    }
    one_line(&e.render().to_string())
}
