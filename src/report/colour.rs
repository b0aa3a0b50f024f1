//! Colour for retry's own words on stderr, never the command's output: `--color` (or
//! `RETRY_COLOR`) `always` or `never`, or in `auto` (the default) what anstream decides for
//! stderr by the common conventions: no colour when `NO_COLOR` is set and not empty
//! (<https://no-color.org>), colour whenever `CLICOLOR_FORCE` is set and not empty (`0` too:
//! anstream reads it so, where <https://bixense.com/clicolors/> would not), or `CLICOLOR` is
//! not `0` on a terminal, else colour only on a terminal whose `TERM` is not `dumb`. Decided once
//! per run's writer, at the first coloured word: a run that has nothing to colour never looks.
//!
//! What is coloured: the closing line of a run that gave up (red), of one that succeeded after
//! retries (green), and the name of the server's hint that set a delay (cyan). JSON events and
//! CI markers never are.

use std::cell::OnceCell;

use anstyle::{AnsiColor, Style};

use crate::types::ColorWhen;

/// The closing line of a run that gave up.
pub(super) const GAVE_UP: Style = AnsiColor::Red.on_default().bold();
/// The closing line of a run that succeeded after retries.
pub(super) const SUCCEEDED: Style = AnsiColor::Green.on_default().bold();
/// The name of the server's hint that set a delay.
pub(super) const HINT: Style = AnsiColor::Cyan.on_default();

/// Whether retry's words on stderr are coloured: `--color` as set for the run, and the
/// decision, made at the first coloured word (see the module doc).
#[derive(Debug)]
pub(super) struct Colour {
    /// `--color` (or `RETRY_COLOR`).
    when: ColorWhen,
    /// The decision, once made.
    enabled: OnceCell<bool>,
}

impl Colour {
    /// The colour of a run whose `--color` is `when`; nothing is looked at yet.
    pub(super) fn new(when: ColorWhen) -> Colour {
        Colour {
            when,
            enabled: OnceCell::new(),
        }
    }

    /// Whether retry's words on stderr are coloured (see the module doc).
    pub(super) fn enabled(&self) -> bool {
        *self.enabled.get_or_init(|| match self.when {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => {
                anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
            }
        })
    }
}
