//! Output pumps: copy an attempt's stdout or stderr to its destination (live, or into a hold),
//! matching each line against the output conditions and reading server hints on the way
//! ([`super::matcher`]), and noting when output last arrived and while it is being passed on
//! (`--idle-timeout`).
//!
//! When the destination fails, the attempt keeps its own ending: a reader that went away
//! (`EPIPE`) stops the pump, so the attempt meets a broken pipe as it would writing there
//! itself; any other write error (a full disk) is recorded and the rest is read and matched but
//! dropped; a hold that cannot grow (TMPDIR missing or full) is sent to stderr, with the rest
//! after it, so nothing is lost.

use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;

use super::activity::Activity;
use super::matcher::{Findings, LineMatcher, Rules};
use super::os::{self, Cancel, Source};
use super::out::Out;
use crate::spool::Spool;

/// Read size for output.
const CHUNK: usize = 1 << 20;
/// After the attempt ended, at most this much more is read from a pipe that a leftover process
/// keeps open and busy before the pump ends and the attempt is judged; after a success, the
/// rest is passed on by [`super::rest`].
const DRAIN_LIMIT: usize = 4 << 20;

/// Where a stream goes.
#[derive(Debug, Clone)]
pub enum Sink {
    /// Straight on, live (a duplicate of retry's stdout or stderr, or `--chronic`'s record).
    Forward(Out),
    /// Into a hold, for `--stdout-on-success`; if the hold cannot grow, what it holds and the
    /// rest go to `fallback` (retry's stderr, or `--chronic`'s record), live.
    Hold {
        /// The hold.
        spool: Arc<Spool>,
        /// Where everything goes if the hold fails.
        fallback: Out,
    },
    /// Nowhere: writing failed before, the rest is dropped.
    Drop,
}

/// How a pump ended.
#[derive(Debug, Default)]
pub struct PumpEnd {
    /// What the lines said.
    pub findings: Findings,
    /// The first `--delay-from-output` capture that was neither a number of seconds nor an
    /// HTTP-date, escaped.
    pub bad_hint: Option<String>,
    /// The destination's reader went away (`EPIPE`): the pump stopped reading, so the attempt
    /// meets a broken pipe as it would writing there directly.
    pub sink_closed: bool,
    /// Writing to the destination failed otherwise (a full disk): the error; the rest of the
    /// stream was read and matched, and dropped.
    pub write_error: Option<String>,
    /// The hold could not grow: the error; what it held and the rest went to the fallback.
    pub hold_error: Option<String>,
    /// The pipe, when the pump ended because the attempt had and the pipe was drained, while
    /// some process the attempt left running still holds it open: what it writes later.
    pub rest: Option<Source>,
}

/// Copies `source` to `sink` until end of file, or, once `cancel` fires, until what is
/// buffered has been read (so a leftover process holding the pipe cannot keep retry waiting;
/// the pipe is then handed back in [`PumpEnd::rest`]).
/// Every read is noted in `activity`, and so is the time spent matching and writing it on
/// (a write a slow reader blocks is not the attempt's silence).
pub fn pump(
    source: Source,
    mut sink: Sink,
    rules: Option<Arc<Rules>>,
    end_lines: bool,
    activity: &Activity,
    cancel: &Cancel,
) -> PumpEnd {
    let mut source = File::from(source);
    let mut matcher = rules.map(LineMatcher::new);
    let mut end = PumpEnd::default();
    let mut buf = vec![0u8; CHUNK];
    let mut drained: Option<usize> = None;
    // The last byte passed on (a newline when nothing was).
    let mut last = b'\n';
    loop {
        if drained.is_none() && !cancel.wait_readable(&source) {
            os::set_nonblocking(&source, true);
            drained = Some(0);
        }
        let read = if drained.is_some() {
            os::read_drained(&mut source, &mut buf)
        } else {
            source.read(&mut buf)
        };
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && drained.is_some() => {
                end.rest = os::keep_rest(source);
                break;
            }
            Err(_) => break,
        };
        activity.touch();
        // Reading and passing on the output is retry's time, not the attempt's silence.
        let writing = activity.writing();
        if let Some(m) = matcher.as_mut() {
            m.feed(&buf[..n]);
        }
        last = buf[n - 1];
        let more = write(&mut sink, &buf[..n], &mut end);
        drop(writing);
        if !more {
            break;
        }
        if let Some(d) = drained.as_mut() {
            *d += n;
            if *d >= DRAIN_LIMIT {
                end.rest = os::keep_rest(source);
                break;
            }
        }
    }
    if matches!(sink, Sink::Drop) {
        // Nothing more can be written: the rest is not worth passing on.
        end.rest = None;
    } else if end_lines && last != b'\n' {
        // Under CI folds: the attempt's last line ends here, so that the fold's end marker
        // starts a line of the log (a marker in the middle of a line is not seen).
        write(&mut sink, b"\n", &mut end);
    }
    if let Some(m) = matcher {
        (end.findings, end.bad_hint) = m.finish_with_notes();
    }
    end
}

/// Writes `data` to `sink`, moving on to the next sink when this one fails (see the module
/// doc) and noting why in `end`; returns `false` when the pump must stop reading.
fn write(sink: &mut Sink, data: &[u8], end: &mut PumpEnd) -> bool {
    let written = match sink {
        Sink::Drop => return true,
        Sink::Forward(out) => out.write_all(data),
        Sink::Hold { spool, fallback } => {
            let before = spool.len();
            let Err(e) = spool.append(data) else {
                return true;
            };
            // The hold failed: what it holds, then the part of `data` it did not take, go to
            // the fallback, and so does the rest of the stream.
            end.hold_error = Some(e.to_string());
            let taken = usize::try_from(spool.len() - before).unwrap_or(data.len());
            let fallback = fallback.clone();
            let moved = fallback
                .copy_from(spool)
                .and_then(|()| fallback.write_all(&data[taken..]));
            *sink = Sink::Forward(fallback);
            moved
        }
    };
    match written {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            end.sink_closed = true;
            false
        }
        Err(e) => {
            end.write_error = Some(e.to_string());
            *sink = Sink::Drop;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_hold_moves_everything_to_the_fallback_in_order() {
        let spool = Arc::new(Spool::with_limits(4, Some(6)));
        let fallback = Arc::new(tempfile::tempfile().unwrap());
        let mut sink = Sink::Hold {
            spool,
            fallback: Out::File(fallback.clone()),
        };
        let mut end = PumpEnd::default();
        assert!(write(&mut sink, b"abc", &mut end));
        assert!(write(&mut sink, b"defgh", &mut end));
        assert!(write(&mut sink, b"ij", &mut end));
        assert!(end.hold_error.is_some() && end.write_error.is_none());
        let mut got = String::new();
        use std::io::{Read, Seek};
        (&*fallback).rewind().unwrap();
        (&*fallback).read_to_string(&mut got).unwrap();
        assert_eq!(got, "abcdefghij");
    }

    #[test]
    fn a_full_disk_drops_the_rest_and_says_why() {
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let mut sink = Sink::Forward(Out::File(Arc::new(full)));
        let mut end = PumpEnd::default();
        assert!(write(&mut sink, b"x", &mut end), "keeps reading");
        assert!(matches!(sink, Sink::Drop));
        assert!(!end.sink_closed);
        assert!(end.write_error.is_some_and(|e| e.contains("No space")));
    }
}
