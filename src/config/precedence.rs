//! The precedence of the settings a preset may also set: a flag on the command line, then
//! `--preset` on the command line, then its `RETRY_<FLAG>` variable, then `RETRY_PRESET`, then
//! the built-in default; and where each value came from, named in error messages.

use crate::cli::{Cli, Flag, Origins, value_name};
use crate::preset::{Preset, Settings};

/// `RETRY_PRESET`, checked when compiling.
const PRESET_VARIABLE: &str = match Flag::Preset.env() {
    Some(name) => name,
    None => panic!("--preset is read from a variable"),
};

/// Where a backoff or stopping setting took its value from: named in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// A flag on the command line.
    Flag,
    /// Its `RETRY_<FLAG>` variable.
    Env,
    /// A preset, given as `--preset` (`false`) or as `RETRY_PRESET` (`true`).
    Preset(Preset, bool),
    /// retry's built-in default.
    Default,
}

impl Source {
    /// Where a value of `flag` that no preset sets came from: its `RETRY_<FLAG>` variable or
    /// the command line.
    pub(super) fn given(origins: &Origins, flag: Flag) -> Source {
        if origins.is_env(flag) {
            Source::Env
        } else {
            Source::Flag
        }
    }

    /// The value of `flag` as typed, when it came from the command line or its variable (see
    /// [`Origins::typed`]); `None` for a preset's or the default.
    pub(super) fn typed(self, origins: &Origins, flag: Flag) -> Option<String> {
        match self {
            Source::Flag | Source::Env => origins.typed(flag),
            Source::Preset(..) | Source::Default => None,
        }
    }

    /// ` from ...` for a message about `flag`; empty for a flag or a default, which need no
    /// explanation.
    pub(super) fn suffix(self, flag: Flag) -> String {
        match self {
            Source::Flag | Source::Default => String::new(),
            Source::Env => flag
                .env()
                .map_or_else(String::new, |env| format!(" from {env}")),
            Source::Preset(p, false) => format!(" from {} {}", Flag::Preset, value_name(&p)),
            Source::Preset(p, true) => format!(" from {PRESET_VARIABLE}={}", value_name(&p)),
        }
    }
}

/// The settings of the flags that a preset may also set, keeping only those `keep` accepts.
fn settings_of(cli: &Cli, keep: impl Fn(Flag) -> bool) -> Settings {
    fn only<T>(keep: bool, value: Option<T>) -> Option<T> {
        value.filter(|_| keep)
    }
    let (b, s) = (&cli.backoff, &cli.stopping);
    Settings {
        base: only(keep(Flag::Base), b.base),
        multiplier: only(keep(Flag::Multiplier), b.multiplier),
        cap: only(keep(Flag::Cap), b.cap),
        jitter: only(keep(Flag::Jitter), b.jitter.map(|arg| arg.0)),
        max_retries: only(keep(Flag::MaxRetries), s.max_retries),
        deadline: only(keep(Flag::Deadline), s.deadline),
    }
}

/// The sources of the preset-able settings, highest precedence first: flags, `--preset`,
/// `RETRY_<FLAG>` variables, `RETRY_PRESET` (the built-in default comes after them all).
pub(super) fn layers(cli: &Cli, origins: &Origins) -> Vec<(Settings, Source)> {
    let preset = cli
        .backoff
        .preset
        .map(|p| (p, origins.is_env(Flag::Preset)));
    let mut layers = vec![(settings_of(cli, |f| !origins.is_env(f)), Source::Flag)];
    if let Some((p, false)) = preset {
        layers.push((p.settings(), Source::Preset(p, false)));
    }
    layers.push((settings_of(cli, |f| origins.is_env(f)), Source::Env));
    if let Some((p, true)) = preset {
        layers.push((p.settings(), Source::Preset(p, true)));
    }
    layers
}

/// The first layer's value for one setting, and where it came from.
pub(super) fn pick<T>(
    layers: &[(Settings, Source)],
    get: impl Fn(&Settings) -> Option<T>,
) -> Option<(T, Source)> {
    layers
        .iter()
        .find_map(|(settings, source)| get(settings).map(|v| (v, *source)))
}

/// The value of one setting by the precedence of every setting (a flag, `--preset`, its
/// `RETRY_<FLAG>` variable, `RETRY_PRESET`), `None` when nothing sets it: `given` is what
/// `flag` parsed to, from the command line or its variable as `origins` tells; `preset` reads a preset's settings. For settings read outside
/// [`Config`](super::Config), such as
/// the list of modes that `--jitter` gives a simulation.
pub fn by_precedence<T>(
    cli: &Cli,
    origins: &Origins,
    flag: Flag,
    given: Option<T>,
    preset: impl Fn(&Settings) -> Option<T>,
) -> Option<T> {
    let from_env = origins.is_env(flag);
    let mut given = given;
    for (settings, source) in layers(cli, origins) {
        let value = match source {
            Source::Flag if !from_env => given.take(),
            Source::Env if from_env => given.take(),
            Source::Preset(..) => preset(&settings),
            Source::Flag | Source::Env | Source::Default => None,
        };
        if value.is_some() {
            return value;
        }
    }
    None
}
