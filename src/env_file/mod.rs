//! `RETRY_ENV_FILE`: a file private to the run where an attempt or hook appends `NAME=VALUE`
//! lines (or `NAME<<DELIMITER` values, [`parse`]) that every later attempt and hook of the run
//! gets in its environment: state handed from one attempt to the next, such as a token an
//! `--on-retry` hook refreshes (nick-fields/retry issue 153 asks for it; GitHub Actions'
//! `GITHUB_ENV` works the same way between steps).
//!
//! Where: `run-RUN_ID.env` in retry's own directory, the budget store's default
//! ([`crate::budget::default_dir`]: `$XDG_RUNTIME_DIR/retry`, else `retry-UID` in `$TMPDIR`),
//! created 0700 if missing and refused, as the budget store refuses it, if it is a symlink,
//! owned by another user or writable by others: whatever is written there is private to the
//! user, whatever the writer's umask. The directory is opened before the first attempt; every
//! file in it is reached through that descriptor without following a symlink.
//!
//! When: creating a file and removing it again costs about 40 us on an ext4 `/tmp`, a few
//! percent of `retry -- true`, which a run that succeeds at once would pay for nothing. So the
//! file is not created for the first attempt (appending to it, `>>`, creates it), and is
//! created, 0600, before the first later attempt or hook if nobody has yet; a file the first
//! attempt created is made 0600 then too. It is removed when the run ends, whatever ends it
//! (a KILL leaves it behind, in the user's own directory).
//!
//! Read after every attempt and hook: only what was appended since the last read, up to
//! [`MAX_FILE_BYTES`] in all. A file cut short or replaced is read again from its start.

pub mod parse;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{Absorbed, EnvFile};
#[cfg(windows)]
pub use windows::{Absorbed, EnvFile};

/// Whether this build has `RETRY_ENV_FILE` at all (not on Windows yet): where it has not, a run
/// neither opens one nor says so, as it would for a directory it cannot use.
pub const AVAILABLE: bool = cfg!(unix);

/// The most bytes of `RETRY_ENV_FILE` retry reads in a run: past it, nothing more is read,
/// with one warning. A megabyte of variables is already more than a program's environment
/// usually holds (Linux gives at most a quarter of the stack limit to the arguments and
/// environment together, 2 MiB by default).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The environment variable that names the file to an attempt or hook.
pub const VARIABLE: &str = "RETRY_ENV_FILE";
