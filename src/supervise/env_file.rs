//! `RETRY_ENV_FILE` in the supervisor ([`crate::env_file`]): its path and the variables handed
//! on, in the environment of every attempt and hook; the file read after each of them; its
//! warnings and the names set reported.

use super::Supervisor;
use crate::env_file::{EnvFile, VARIABLE};
use crate::report::Reporter;

/// The run's `RETRY_ENV_FILE` in retry's own directory, or `None` (with one warning) when that
/// directory cannot be used: the attempts then run without the variable.
pub(super) fn open(run_id: &str, reporter: &Reporter) -> Option<EnvFile> {
    match EnvFile::open(&crate::budget::default_dir(), run_id) {
        Ok(file) => Some(file),
        Err(why) => {
            reporter.warning(&format!("{VARIABLE} is not offered to the attempts: {why}"));
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
            self.reporter.warning(&format!("{VARIABLE}: {why}"));
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
        for warning in &absorbed.warnings {
            self.reporter.warning(warning);
        }
        if !absorbed.set.is_empty() {
            self.reporter.env_file_set(after, &absorbed.set);
        }
    }
}
