//! One attempt's process: starting it, its process group, signalling and stopping its whole
//! tree, reaping it, and how it ended. A facade: each concern is a file of its own, and what an
//! attempt's tree is and how a child is started are per OS, chosen here by `cfg` (the `os`
//! files, one interface: `become_reaper`, `descendants`, `rest`, `start`).
//!
//! - `launch.rs`: [`spawn`] and [`spawn_hook`], through the child's set-up of `child.rs`, after
//!   the vfork clone of `vfork.rs` (Linux, native build) or after `fork` (`fork.rs`: macOS,
//!   FreeBSD, the `portable` build, and Linux once the clone was refused), as the OS file's
//!   `start` chooses.
//! - `unix.rs`: the running [`Attempt`] (signal, stop its tree, reap) and retry's end by a
//!   signal; `group.rs`: its [`GroupMode`] detected and signals by number; `outcome.rs`: [`Outcome`].
//! - The OS files: `linux.rs` (subreaper, `/proc` through `tree.rs`), `freebsd.rs` (`procctl`
//!   reaper), `portable.rs` (macOS and the `portable` build: the group).
//! - Windows: `windows.rs` (the attempt in a Job Object and a process group of its own,
//!   started and stopped there) and `lookup.rs` (the program found as `cmd.exe` finds it).
//! - `spawned.rs`: what a start gives back, on every system.
//! - Leaves: `stdio.rs` knows which standard descriptors were closed at start,
//!   `dispositions.rs` which signals were ignored and which retry catches, `pipe.rs` makes
//!   close-on-exec pipes; `relay.rs` is the relay, the process that passes on what a
//!   successful attempt's leftovers still write once retry has ended.

#[cfg(unix)]
mod child;
#[cfg(unix)]
pub mod dispositions;
#[cfg(unix)]
mod fork;
#[cfg(target_os = "freebsd")]
mod freebsd;
#[cfg(unix)]
mod group;
#[cfg(unix)]
mod launch;
#[cfg(linux_native)]
mod linux;
mod outcome;
#[cfg(unix)]
mod pipe;
#[cfg(all(unix, not(any(linux_native, target_os = "freebsd"))))]
mod portable;
#[cfg(unix)]
pub mod relay;
mod spawned;
mod stdio;
#[cfg(linux_native)]
mod tree;
#[cfg(unix)]
mod unix;
#[cfg(linux_native)]
mod vfork;

#[cfg(target_os = "freebsd")]
use freebsd as os;
#[cfg(linux_native)]
use linux as os;
#[cfg(all(unix, not(any(linux_native, target_os = "freebsd"))))]
use portable as os;

#[cfg(unix)]
pub use launch::{spawn, spawn_hook};
pub use outcome::{Left, Outcome, StopReason};
#[cfg(unix)]
pub use pipe::cloexec_pipe;
pub use spawned::{GroupMode, LaunchError, Piped, Spawned};
pub use stdio::{closed_at_start, closed_now};
#[cfg(unix)]
pub use unix::{
    Attempt, Ended, become_subreaper, die_by_signal, gone_reader, outputs_take_bytes, reap_strays,
};

#[cfg(any(windows, test))]
mod lookup;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{
    Attempt, Ended, become_subreaper, gone_reader, outputs_take_bytes, reap_strays, spawn,
    spawn_hook,
};

#[cfg(not(any(unix, windows)))]
compile_error!("retry supervises processes on Unix (signals, process groups) and Windows (jobs)");
