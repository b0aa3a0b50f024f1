//! Writing where nobody may be reading: retry's own stderr ([`Stderr`]) and files that may be
//! FIFOs or pipes (`GITHUB_OUTPUT`, [`append`]), one interface chosen here by `cfg`: on Unix
//! (`unix.rs`) without ever blocking past a stop signal or the run's time limit; on Windows
//! (`windows.rs`) likewise, each write made in a helper thread the run waits for.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{Stderr, append};
#[cfg(windows)]
pub use windows::{Stderr, append};
