//! The signal dispositions retry changes for itself, and the ones its attempts and hooks get
//! back: a signal ignored when retry started stays ignored in them, as POSIX `exec` keeps an
//! ignored signal ignored (XSH `exec`, <https://pubs.opengroup.org/onlinepubs/9699919799/functions/exec.html>:
//! "Signals set to be ignored by the calling process image shall be set to be ignored by the
//! new process image"); one at its default action stays at its default.
//!
//! retry changes two: SIGPIPE, which it ignores so that its own writes to a closed pipe fail
//! with `EPIPE` instead of killing it (`start.rs`), and SIGCHLD, which it sets back to its
//! default when ignored so that it can reap its attempts (`signals/listen.rs`). Every other
//! signal it leaves as it found it (it blocks the ones it reads, and each child starts with an
//! empty mask), so `exec` passes an ignored one on by itself. Under `trap '' PIPE`,
//! `retry -- yes | :` lets `yes` see `EPIPE` ("Broken pipe"), as `yes | :` and coreutils
//! `timeout 10 yes | :` do.
//!
//! Where retry catches signals with a handler of its own (the portable event loop,
//! `signals/portable.rs`), it notes each here ([`note_caught`]): a child sets them back to the
//! default before exec ([`caught`]).

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use libc::c_int;

/// The signals whose disposition retry changes for itself.
pub const TOUCHED: [c_int; 2] = [libc::SIGPIPE, libc::SIGCHLD];

/// Bit `i` set: `TOUCHED[i]` was ignored at start. [`NOTED`] set once they have been read.
static AT_START: AtomicU8 = AtomicU8::new(0);
const NOTED: u8 = 1 << 7;

/// Bit `n % 64` of word `n / 64` set: retry's handler is installed for signal `n` (up to 127:
/// FreeBSD's real-time signals reach 126).
static CAUGHT: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Whether `signal` was ignored (SIG_IGN) when asked.
pub fn is_ignored(signal: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Notes that retry's own handler is now installed for `signal`.
///
/// # Errors
/// `EINVAL` for a number past 127.
pub fn note_caught(signal: c_int) -> std::io::Result<()> {
    let Some(word) = usize::try_from(signal / 64)
        .ok()
        .and_then(|w| CAUGHT.get(w))
    else {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    };
    word.fetch_or(1 << (signal % 64), Ordering::Relaxed);
    Ok(())
}

/// The signals for which retry has installed a handler of its own ([`note_caught`]; none on
/// Linux's native path, which reads them from a signalfd): a child sets them back to the
/// default before exec.
pub fn caught() -> Vec<c_int> {
    (1..128)
        .filter(|&n: &c_int| {
            CAUGHT[(n / 64) as usize].load(Ordering::Relaxed) & (1 << (n % 64)) != 0
        })
        .collect()
}

/// Notes which of [`TOUCHED`] are ignored, before retry changes any: call first thing at
/// start (the binary's `main` does).
pub fn note_at_start() {
    let bits = TOUCHED
        .iter()
        .enumerate()
        .filter(|(_, s)| is_ignored(**s))
        .fold(NOTED, |bits, (i, _)| bits | 1 << i);
    AT_START.store(bits, Ordering::Relaxed);
}

/// The disposition each of [`TOUCHED`] must have in an attempt or a hook, set in the child
/// before `exec`: `SIG_IGN` where it was ignored when retry started, `SIG_DFL` otherwise (and
/// when start-up did not note them, as when retry's library runs inside another program).
pub fn for_children() -> [(c_int, libc::sighandler_t); TOUCHED.len()] {
    let bits = AT_START.load(Ordering::Relaxed);
    std::array::from_fn(|i| {
        let ignored = bits & NOTED != 0 && bits & (1 << i) != 0;
        (
            TOUCHED[i],
            if ignored {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_get_the_default_unless_noted_ignored() {
        // The test harness has not noted anything: every touched signal goes back to default.
        if AT_START.load(Ordering::Relaxed) & NOTED == 0 {
            assert!(for_children().iter().all(|&(_, h)| h == libc::SIG_DFL));
        }
        assert_eq!(for_children().map(|(s, _)| s), TOUCHED);
    }
}
