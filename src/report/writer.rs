//! The one writer of retry's own words on stderr, as cargo's `Shell` is cargo's
//! (<https://github.com/rust-lang/cargo/blob/master/src/cargo/core/shell.rs>): progress lines
//! (escaped, optionally coloured), JSON events and CI markers. Made once per run from its
//! settings (`--color`, the verbosity, `--log-format`) and owned by the run, through its
//! `Reporter` (`reporter.rs`); an error said before a run exists gets one made on the spot
//! ([`Writer::plain`]). It keeps what retry's words need from one write to the next: the
//! colour decision, the countdown on a terminal ([`super::live`]), the output `--chronic`
//! holds with the closing words kept apart, and the patience of the stream ([`Stderr`]).
//!
//! Every byte retry itself writes to stderr goes through [`Writer::put`], which first
//! finalises a countdown that is showing, then either holds the bytes for `--chronic`
//! ([`Writer::hold_from_now`]) or writes them through [`crate::outlet`] (never waiting for a
//! reader past a stop signal or the deadline). A write that fails is dropped: stderr is where
//! its error would go.

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anstyle::Style;
use serde_json::Value;

use super::colour::Colour;
use super::lines::{json_line, line_bytes};
use super::live::Countdown;
use crate::held::{Held, Stream};
use crate::outlet::Stderr;
use crate::types::{ColorWhen, LogFormat, Verbosity};

/// retry's own words on stderr for one run; see the module doc.
#[derive(Debug)]
pub struct Writer {
    /// How much progress is said (`--quiet`, `--verbose`).
    verbosity: Verbosity,
    /// `--log-format`: text lines or JSON events.
    format: LogFormat,
    /// Whether lines are coloured (`--color`), decided at the first coloured word.
    colour: Colour,
    /// retry's stderr, with the patience of its writes.
    stderr: Stderr,
    /// The countdown on a terminal, if one is showing.
    countdown: Countdown,
    /// Where retry's own words go while `--chronic` holds the run's output.
    hold: OnceCell<Arc<Held>>,
    /// The closing words of a run that `--chronic` holds (the give-up or stopped line and its
    /// JSON event): kept apart from the ring of held output, so that they come after all of
    /// it and `--max-output` never drops or cuts them; written by
    /// [`Writer::release_closing`].
    closing: RefCell<Vec<u8>>,
    /// Whether what is put now is a closing word ([`Writer::closing`]).
    saying_closing: Cell<bool>,
}

impl Writer {
    /// The writer of a run: `color` (`--color`), `verbosity` and `format` (`--log-format`) as
    /// its settings say. Nothing is looked at yet (the terminal, the colour, stderr's kind):
    /// each when first needed.
    pub fn new(color: ColorWhen, verbosity: Verbosity, format: LogFormat) -> Writer {
        Writer {
            verbosity,
            format,
            colour: Colour::new(color),
            stderr: Stderr::new(),
            countdown: Countdown::default(),
            hold: OnceCell::new(),
            closing: RefCell::default(),
            saying_closing: Cell::new(false),
        }
    }

    /// A writer made on the spot, before a run has one, for an error in `format`: the
    /// defaults (`--color auto`, the normal verbosity), nothing held, no patience.
    pub fn plain(format: LogFormat) -> Writer {
        Writer::new(ColorWhen::Auto, Verbosity::Normal, format)
    }

    /// How much progress is said.
    pub fn verbosity(&self) -> Verbosity {
        self.verbosity
    }

    /// The format of retry's words: text lines or JSON events.
    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// From now on, retry's own writes (and the files the run appends to, [`Writer::patience`])
    /// wait for a reader at most until `until` (the run's deadline; `None`: until a stop signal
    /// arrives).
    pub fn set_patience(&self, until: Option<Instant>) {
        self.stderr.set_patience(until);
    }

    /// The most a write waits for a reader ([`Writer::set_patience`]), for the files the run
    /// appends to ([`crate::outlet::append`]).
    pub fn patience(&self) -> Option<Instant> {
        self.stderr.patience()
    }

    /// From now on retry's own words are appended to `held` (as stderr chunks, in order with
    /// the attempts' output) instead of being written, until it is sealed. Only the first call
    /// counts.
    pub fn hold_from_now(&self, held: Arc<Held>) {
        let _ = self.hold.set(held);
    }

    /// Runs `say` with what it puts kept as the run's closing words while `--chronic` holds
    /// (written after the held output by [`Writer::release_closing`]); as [`Writer::put`]
    /// otherwise.
    pub(super) fn closing<R>(&self, say: impl FnOnce() -> R) -> R {
        self.saying_closing.set(true);
        let out = say();
        self.saying_closing.set(false);
        out
    }

    /// Writes the closing words kept while `--chronic` held (`write`), or drops them; call once
    /// the held output is written out (or dropped) and the record sealed.
    pub fn release_closing(&self, write: bool) {
        let words = self.closing.take();
        if write && !words.is_empty() {
            self.put(&words);
        }
    }

    /// Whether retry's own words are being held (`--chronic`): a countdown is then not drawn.
    pub(super) fn holding(&self) -> bool {
        self.hold.get().is_some_and(|held| !held.sealed())
    }

    /// Writes `bytes` of retry's own on stderr: held while `--chronic` holds (and the hold is
    /// not sealed), else through the outlet, after finalising a countdown that is showing.
    pub(super) fn put(&self, bytes: &[u8]) {
        if let Some(held) = self.hold.get() {
            if self.saying_closing.get() && !held.sealed() {
                self.closing.borrow_mut().extend_from_slice(bytes);
                return;
            }
            if held.push(Stream::Stderr, bytes) {
                return;
            }
        }
        self.settle();
        let _ = self.stderr.write(bytes);
    }

    /// Writes `bytes` as they are: for CI markers, which carry the escape sequences and
    /// carriage returns their dialect needs (GitLab's sections). The caller vouches for them:
    /// nothing that came from outside may be in them unescaped.
    pub fn raw(&self, bytes: &[u8]) {
        self.put(bytes);
    }

    /// The bytes of one of retry's own text lines of styled spans ([`line_bytes`]), coloured
    /// when the run's colour says so (decided only when a span is styled).
    pub(super) fn line_bytes(&self, spans: &[(Style, &str)]) -> Vec<u8> {
        let styled = spans.iter().any(|(style, _)| *style != Style::new());
        line_bytes(spans, styled && self.colour.enabled())
    }

    /// Writes one plain text line (see [`line_bytes`]).
    pub(super) fn line(&self, text: &str) {
        self.spans(&[(Style::new(), text)]);
    }

    /// Writes one text line of styled spans (see [`line_bytes`]).
    pub(super) fn spans(&self, spans: &[(Style, &str)]) {
        self.put(&self.line_bytes(spans));
    }

    /// Writes one JSON event line ([`json_line`]): the event's name, `elapsed`, the run's id
    /// when there is one, then `fields`.
    pub(super) fn event(
        &self,
        event: &str,
        elapsed: Duration,
        run_id: Option<&str>,
        fields: Value,
    ) {
        self.put(&json_line(event, elapsed, run_id, fields));
    }

    /// Whether a wait may be shown as a countdown: retry's words are not held, and stderr is a
    /// terminal that takes one (looked at once, [`super::live`]).
    pub(super) fn counts_down(&self) -> bool {
        !self.holding() && self.countdown.on_terminal()
    }

    /// Starts a countdown to `wake` ([`super::live`]): the line `normal` as logs get it, the
    /// frames' `head` and `tail` (and its width), the first frame showing `first`.
    pub(super) fn count_down(
        &self,
        normal: Vec<u8>,
        head: String,
        tail: (Vec<u8>, usize),
        wake: Instant,
        first: &str,
    ) {
        self.countdown
            .start(&self.stderr, normal, head, tail, wake, first);
    }

    /// When the countdown's next frame is due (`None`: no countdown is showing, or its last
    /// frame is drawn).
    pub fn countdown_next_tick(&self) -> Option<Instant> {
        self.countdown.next_tick()
    }

    /// Draws the countdown's next frame, if one is showing and retry is in the foreground.
    pub fn countdown_tick(&self) {
        self.countdown.tick(&self.stderr);
    }

    /// Ends the countdown, if one is showing: its frame is replaced by the line logs get (the
    /// whole delay), or erased when that line was written already (`live.rs`). Call
    /// before anything else may write to the terminal (an attempt, a hook).
    pub fn settle(&self) {
        self.countdown.settle(&self.stderr);
    }
}
