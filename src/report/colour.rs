//! Colour for retry's own words on stderr, never the command's output: `--color` (or
//! `RETRY_COLOR`) `always` or `never`, or in `auto` (the default) what anstream decides for
//! stderr by the common conventions: no colour when `NO_COLOR` is set and not empty
//! (<https://no-color.org>), colour whenever `CLICOLOR_FORCE` is set and not empty (`0` too:
//! anstream reads it so, where <https://bixense.com/clicolors/> would not), or `CLICOLOR` is
//! not `0` on a terminal, else colour only on a terminal whose `TERM` is not `dumb`. Decided once, at the first coloured word: a run that has
//! nothing to colour never looks.
//!
//! What is coloured: the closing line of a run that gave up (red), of one that succeeded after
//! retries (green), and the name of the server's hint that set a delay (cyan). JSON events and
//! CI markers never are.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use anstyle::{AnsiColor, Style};

use crate::types::ColorWhen;

/// `--color` as set for this run ([`set`]): 0 auto, 1 always, 2 never.
static WHEN: AtomicU8 = AtomicU8::new(0);
/// The decision, made at the first coloured word.
static ENABLED: OnceLock<bool> = OnceLock::new();

/// The closing line of a run that gave up.
pub(super) const GAVE_UP: Style = AnsiColor::Red.on_default().bold();
/// The closing line of a run that succeeded after retries.
pub(super) const SUCCEEDED: Style = AnsiColor::Green.on_default().bold();
/// The name of the server's hint that set a delay.
pub(super) const HINT: Style = AnsiColor::Cyan.on_default();

/// Sets `--color` for the run: call before anything is printed (the decision is made once).
pub fn set(when: ColorWhen) {
    let n = match when {
        ColorWhen::Auto => 0,
        ColorWhen::Always => 1,
        ColorWhen::Never => 2,
    };
    WHEN.store(n, Ordering::Relaxed);
}

/// Whether retry's words on stderr are coloured (see the module doc).
pub(super) fn enabled() -> bool {
    *ENABLED.get_or_init(|| match WHEN.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never,
    })
}
