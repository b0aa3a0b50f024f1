//! The countdown on a terminal: while retry waits before the next attempt, the line of the
//! attempt that failed is drawn in place with the time left (`retry: attempt 2 of 6: sh exited
//! with status 1; retrying in 12s`), redrawn once a second from the supervisor's wait
//! ([`Countdown::next_tick`], [`Countdown::tick`]), and finalised as the line logs get (the
//! whole delay, a newline) before anything else is written ([`Countdown::settle`], which the
//! run's writer calls before each of its writes, `writer.rs`): so it never mixes with an
//! attempt's or a hook's output, and a stop signal, which ends the wait at once, finds the line
//! whole. The countdown is the run's writer's, as its frames' stream is.
//!
//! Only when stderr is a terminal whose `TERM` is set and not `dumb`, looked at once by the
//! run's writer, when there is first a wait of a second or more to show; anywhere else the
//! lines are exactly the ones logs get, and the wait is one `ppoll` with no periodic wake-up. A
//! frame is `\r`, the line cut to the terminal's width less one column (asked for at each
//! frame: a resized terminal gets the next frame right), then `ESC [ K` (erase to the end of
//! the line, ECMA-48 EL).
//!
//! The countdown starts on a line of its own: the attempt writes straight to the terminal, so
//! retry cannot tell whether it left the cursor at the start of a line (`curl -w
//! '%{http_code}'` prints `503` and no newline). The first frame is led by zsh's `PROMPT_SP`
//! technique (zsh's `Src/utils.c`, `preprompt`; <https://zsh.sourceforge.io/Doc/Release/Options.html#index-PROMPT_005fSP>):
//! as many spaces as the terminal has columns, then `\r`. From the first column they fill the
//! line exactly and the cursor waits in its last column (the deferred wrap of xterm and its
//! descendants, terminfo `xenl`), which `\r` cancels: the frame is drawn on that line. From any
//! other column they wrap onto the next line, and `\r` leaves the cursor at its start: the
//! attempt's output stays on the screen. Nothing is read from the terminal: asking it where its
//! cursor is (`ESC [ 6n`) would need its answer read from the input the user types into. The
//! same lead starts the countdown again when it was not on the screen's current line: after
//! the terminal's width changed (a terminal that rewraps its lines may have joined the
//! countdown's line to the output before it; the frame drawn so far is first erased, from its
//! start, found by moving back as many columns as it took, ECMA-48 CUB) and after retry was
//! in the background.
//!
//! Frames are drawn only while retry's process group is its terminal's foreground group
//! (`tcgetpgrp`, as git's `progress.c` decides whether to show progress): `retry ... &` from an
//! interactive shell never draws over the prompt and what the user types there. A countdown
//! that starts in the background writes the line logs get instead, once; brought to the
//! foreground (`fg`), the run draws the countdown from the next second on, and erases it at
//! the end (the line was written). A countdown sent to the background meanwhile (Ctrl-Z, `bg`)
//! stops drawing and ends with the line logs get. A terminal that is not retry's controlling
//! terminal (`tcgetpgrp` fails) has no job control: the countdown is drawn there.

use std::cell::{OnceCell, RefCell};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::duration::format_human;
use crate::outlet::Stderr;

/// The shortest wait that gets a countdown: a shorter one is over before a redraw.
pub(super) const SHORTEST: Duration = Duration::from_secs(1);
/// Columns of the attempt's description kept at the least; on a narrower terminal no frame
/// is drawn, only the final line.
const MIN_HEAD: usize = 12;

#[derive(Debug)]
struct Live {
    /// The line as logs get it, newline included.
    normal: Vec<u8>,
    /// The line up to `; retrying in`, escaped.
    head: String,
    /// What follows the delay (the hint's name), escaped and styled; and its width.
    tail: (Vec<u8>, usize),
    /// When the wait ends.
    wake: Instant,
    /// The last frame is the terminal's current line: it was drawn in the foreground, and
    /// retry has not found itself in the background since. The final line overwrites it.
    on_line: bool,
    /// The columns the last frame took, and the terminal's width then.
    drawn: (usize, usize),
    /// The line as logs get it was written (the countdown started in the background): the
    /// final frame is erased instead of being made the line.
    said: bool,
    /// A write failed (the terminal went away): no more frames.
    broken: bool,
}

/// The countdown of a run's writer: whether stderr takes one (looked at once), and the one
/// being shown, if any. Its frames are written to `out`, the writer's stderr, as they are:
/// never held, never through the writer's own finalising of the countdown.
#[derive(Debug, Default)]
pub(super) struct Countdown {
    /// Whether stderr is a terminal that takes a countdown, once looked at.
    terminal: OnceCell<bool>,
    /// The countdown being shown, if any.
    shown: RefCell<Option<Live>>,
}

impl Countdown {
    /// Whether stderr is a terminal that takes a countdown (see the module doc); looked at
    /// once.
    pub(super) fn on_terminal(&self) -> bool {
        *self.terminal.get_or_init(|| {
            std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
                && std::io::stderr().is_terminal()
        })
    }

    /// Starts a countdown to `wake` for the line `normal` (as logs get it), whose frames are
    /// `head`, `; retrying in ` and the time left, then `tail` (of `tail_width` columns);
    /// draws the first frame on `out`, which shows `first` (the whole delay, as the final line
    /// will).
    pub(super) fn start(
        &self,
        out: &Stderr,
        normal: Vec<u8>,
        head: String,
        tail: (Vec<u8>, usize),
        wake: Instant,
        first: &str,
    ) {
        self.settle(out);
        let mut shown = Live {
            normal,
            head,
            tail,
            wake,
            on_line: false,
            drawn: (0, 0),
            said: false,
            broken: false,
        };
        if foreground() {
            shown.draw(out, first);
        } else {
            match out.write(&shown.normal) {
                Ok(()) => shown.said = true,
                Err(_) => shown.broken = true,
            }
        }
        *self.shown.borrow_mut() = Some(shown);
    }

    /// When the countdown's next frame is due (`None`: no countdown is showing, or its last
    /// frame is drawn): each time the whole seconds left change.
    pub(super) fn next_tick(&self) -> Option<Instant> {
        let live = self.shown.borrow();
        let live = live.as_ref().filter(|l| !l.broken)?;
        let left = whole_seconds_left(live.wake, Instant::now());
        if left <= 1 {
            return None;
        }
        live.wake.checked_sub(Duration::from_secs(left - 1))
    }

    /// Draws the countdown's next frame on `out`, the whole seconds left, if one is showing
    /// and retry is in the foreground (in the background: nothing, and the countdown is no
    /// longer the current line).
    pub(super) fn tick(&self, out: &Stderr) {
        let mut live = self.shown.borrow_mut();
        if let Some(live) = live.as_mut().filter(|l| !l.broken) {
            if foreground() {
                let left = whole_seconds_left(live.wake, Instant::now());
                live.draw(out, &format_human(Duration::from_secs(left)));
            } else {
                live.on_line = false;
            }
        }
    }

    /// Ends the countdown, if one is showing: its frame is replaced on `out` by the line logs
    /// get (the whole delay), with its newline; or erased, when that line was written already.
    /// Without a frame on the current line (none was drawn, or retry is in the background
    /// now), the line logs get, unless written already. Call before anything else is written
    /// to the terminal.
    pub(super) fn settle(&self, out: &Stderr) {
        let Some(live) = self.shown.borrow_mut().take() else {
            return;
        };
        if !(live.on_line && foreground()) {
            if !live.said {
                let _ = out.write(&live.normal);
            }
            return;
        }
        let width = width();
        let bytes = if live.said {
            let mut bytes = live.back(width);
            bytes.extend_from_slice(b"\x1b[K");
            bytes
        } else {
            let line = live.normal.strip_suffix(b"\n").unwrap_or(&live.normal);
            let mut bytes = live.lead(width);
            bytes.extend_from_slice(line);
            bytes.extend_from_slice(b"\x1b[K\n");
            bytes
        };
        let _ = out.write(&bytes);
    }
}

/// Whether retry may draw on stderr's console, on Windows: when the console takes the escape
/// sequences the countdown redraws with (`ENABLE_VIRTUAL_TERMINAL_PROCESSING`, switched on
/// here if it was off, as cargo does; a console too old for it gets no countdown). A console
/// has no foreground group.
/// <https://learn.microsoft.com/en-us/windows/console/console-virtual-terminal-sequences>
#[cfg(windows)]
fn foreground() -> bool {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Console::{
        ENABLE_VIRTUAL_TERMINAL_PROCESSING, GetConsoleMode, SetConsoleMode,
    };
    let handle = std::io::stderr().as_raw_handle() as windows_sys::Win32::Foundation::HANDLE;
    let mut mode = 0u32;
    // SAFETY: stderr's handle and a pointer to a u32; a handle that is no console fails.
    if unsafe { GetConsoleMode(handle, &raw mut mode) } == 0 {
        return false;
    }
    mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
        // SAFETY: the same handle, with its mode plus one flag.
        || unsafe { SetConsoleMode(handle, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) } != 0
}

/// Whether retry may draw on stderr's terminal: its process group is the terminal's
/// foreground group, or the terminal is not retry's controlling one (`tcgetpgrp` fails: no
/// job control there). git's `progress.c` (`is_foreground_fd`) decides so.
#[cfg(unix)]
fn foreground() -> bool {
    use std::os::fd::AsFd;
    match nix::unistd::tcgetpgrp(std::io::stderr().as_fd()) {
        Ok(group) => group == nix::unistd::getpgrp(),
        Err(_) => true,
    }
}

/// The whole seconds from `now` to `wake`, rounded up (a millisecond early counts as on time).
fn whole_seconds_left(wake: Instant, now: Instant) -> u64 {
    let ms = wake.saturating_duration_since(now).as_millis();
    u64::try_from(ms.saturating_sub(1) / 1000 + 1).unwrap_or(u64::MAX)
}

impl Live {
    /// Writes the frame showing `left` as the time left on `out`, cut to the terminal's width.
    fn draw(&mut self, out: &Stderr, left: &str) {
        let middle = format!("; retrying in {left}");
        let width = width();
        let room = width.saturating_sub(1);
        let fixed = columns(&middle) + self.tail.1;
        let mut frame = self.lead(width);
        let mut taken = 0;
        if fixed + MIN_HEAD <= room {
            let head = cut(&self.head, room - fixed);
            taken = columns(&head) + columns(&middle) + self.tail.1;
            frame.extend_from_slice(head.as_bytes());
            frame.extend_from_slice(middle.as_bytes());
            frame.extend_from_slice(&self.tail.0);
        }
        frame.extend_from_slice(b"\x1b[K");
        match out.write(&frame) {
            Ok(()) => {
                self.on_line = true;
                self.drawn = (taken, width);
            }
            Err(_) => self.broken = true,
        }
    }

    /// What takes the cursor to the start of the countdown's line on a terminal `width`
    /// columns wide: `\r` when the last frame is the current line and the width is the one it
    /// was drawn at; else a fresh line (the module doc), after erasing the last frame from its
    /// start when it is the current line.
    fn lead(&self, width: usize) -> Vec<u8> {
        if self.on_line && self.drawn.1 == width {
            return b"\r".to_vec();
        }
        let mut lead = if self.on_line {
            let mut erase = self.back(width);
            erase.extend_from_slice(b"\x1b[K");
            erase
        } else {
            Vec::new()
        };
        lead.resize(lead.len() + width, b' ');
        lead.push(b'\r');
        lead
    }

    /// What takes the cursor back to the start of the last frame, the current line, on a
    /// terminal `width` columns wide: `\r` at the width it was drawn at; after a resize, as
    /// many columns back as it took (`ESC [ N D`; none when it took none), since the terminal
    /// may have joined its line to the one before.
    fn back(&self, width: usize) -> Vec<u8> {
        match self.drawn {
            (_, at) if at == width => b"\r".to_vec(),
            (0, _) => Vec::new(),
            (taken, _) => format!("\x1b[{taken}D").into_bytes(),
        }
    }
}

/// The columns of stderr's console on Windows: 80 (the countdown keeps to it).
#[cfg(windows)]
fn width() -> usize {
    80
}

/// The columns of stderr's terminal (80 when it cannot be told).
#[cfg(unix)]
fn width() -> usize {
    // TIOCGWINSZ on stderr.
    match rustix::termios::tcgetwinsize(std::io::stderr()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => 80,
    }
}

/// Columns `text` may take: one per ASCII character, two for any other (a wide character
/// takes two; counting every one as wide never overflows the line).
pub(super) fn columns(text: &str) -> usize {
    text.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum()
}

/// `text` cut to at most `max` columns, ending in `...` when cut.
fn cut(text: &str, max: usize) -> String {
    if columns(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = if c.is_ascii() { 1 } else { 2 };
        if used + w + 3 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push_str("...");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_seconds_round_up() {
        let now = Instant::now();
        let at = |ms| whole_seconds_left(now + Duration::from_millis(ms), now);
        assert_eq!(
            (at(12_400), at(12_000), at(11_999), at(1001)),
            (13, 12, 12, 2)
        );
        assert_eq!((at(1000), at(1), at(0)), (1, 1, 1));
    }

    #[test]
    fn a_frame_is_led_to_a_line_of_its_own_unless_it_follows_its_own_at_the_same_width() {
        let mut live = Live {
            normal: b"line\n".to_vec(),
            head: "retry: attempt 1".into(),
            tail: (Vec::new(), 0),
            wake: Instant::now(),
            on_line: false,
            drawn: (0, 0),
            said: false,
            broken: false,
        };
        assert_eq!(live.lead(4), b"    \r");
        live.on_line = true;
        live.drawn = (40, 80);
        assert_eq!(live.lead(80), b"\r");
        assert_eq!(live.lead(6), b"\x1b[40D\x1b[K      \r");
        live.drawn = (0, 80);
        assert_eq!(live.lead(6), b"\x1b[K      \r");
        assert_eq!(live.back(80), b"\r");
    }

    #[test]
    fn cuts_to_the_columns_with_an_ellipsis() {
        assert_eq!(cut("retry: attempt 2", 40), "retry: attempt 2");
        assert_eq!(cut("retry: attempt 2", 10), "retry: ...");
        assert_eq!(columns("é"), 2);
        assert_eq!(cut("ééééé", 7), "éé...");
    }
}
