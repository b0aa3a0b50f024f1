//! `RETRY_ENV_FILE` in the supervisor ([`crate::env_file`]): its path and the variables handed
//! on, in the environment of every attempt and hook; the file read after each of them; its
//! warnings and the names set reported.

use super::Supervisor;
use crate::env_file::{EnvFile, VARIABLE};
use crate::observe::problems::Problem;
use crate::observe::{Event, Observers};

/// The most lines of one read of the file reported one by one; the rest are counted in one more
/// line, so that an attempt writing a flood of malformed lines does not flood stderr.
pub(super) const MAX_WARNINGS: usize = 5;

/// The run's `RETRY_ENV_FILE` in retry's own directory, or `None` when that directory cannot be
/// used (a read-only or foreign `$TMPDIR`): the attempts then run without the variable, and
/// only `--verbose` says why, since a run that does not use it must not change.
pub(super) fn open(run_id: &str, observers: &mut Observers<'_>) -> Option<EnvFile> {
    if !crate::env_file::AVAILABLE {
        return None;
    }
    match EnvFile::open(&crate::budget::default_dir(), run_id) {
        Ok(file) => Some(file),
        Err(why) => {
            let why = why.to_string();
            observers.event(&Event::Problem(Problem::EnvFileUnavailable(&why)));
            None
        }
    }
}

impl Supervisor<'_> {
    /// What the next attempt or hook gets of `RETRY_ENV_FILE`: the variable itself, then the
    /// variables handed on so far. Before any attempt or hook but the first, the file is
    /// created (0600) if nobody has yet; `first` says this is the first attempt.
    pub(super) fn env_file_env(&self, first: bool) -> Vec<(String, String)> {
        let mut env_file = self.env_file.borrow_mut();
        let Some(file) = env_file.as_mut() else {
            return Vec::new();
        };
        if !first && let Err(why) = file.create() {
            let why = why.to_string();
            self.emit(&Event::Problem(Problem::EnvFileCreate(&why)));
        }
        let mut env = vec![(VARIABLE.to_string(), file.path().display().to_string())];
        env.extend(file.vars().iter().cloned());
        env
    }

    /// Reads what `after` (`attempt 3`, `--on-retry`) appended to `RETRY_ENV_FILE`, and
    /// reports it.
    pub(super) fn absorb_env_file(&self, after: &str) {
        let absorbed = match self.env_file.borrow_mut().as_mut() {
            Some(file) => file.absorb(),
            None => return,
        };
        for warning in absorbed.warnings.iter().take(MAX_WARNINGS) {
            self.emit(&Event::Problem(Problem::EnvFileLine(warning)));
        }
        if let Some(more) = absorbed.warnings.len().checked_sub(MAX_WARNINGS)
            && more > 0
        {
            self.emit(&Event::Problem(Problem::EnvFileMore { more, after }));
        }
        if !absorbed.set.is_empty() {
            self.emit(&Event::EnvFileSet {
                after,
                names: &absorbed.set,
            });
        }
    }
}
