//! `RETRY_ENV_FILE` on Windows: not built yet. [`EnvFile::open`] says so, and the run goes on
//! without the variable, as on Unix when retry's directory cannot be used (only `--verbose`
//! says why).

use std::path::Path;

/// One run's `RETRY_ENV_FILE`: none can be opened on Windows.
#[derive(Debug)]
pub enum EnvFile {}

/// What a read of the file came to.
#[derive(Debug, Default)]
pub struct Absorbed {
    /// The names set or changed by this read.
    pub set: Vec<String>,
    /// Warnings.
    pub warnings: Vec<String>,
}

impl EnvFile {
    /// Never opens on Windows.
    ///
    /// # Errors
    /// Always: the reason, for `--verbose`.
    pub fn open(_dir: &Path, _run_id: &str) -> Result<EnvFile, String> {
        Err(format!("{} is not available on Windows", super::VARIABLE))
    }

    /// (No value of this type exists.)
    pub fn path(&self) -> &Path {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn vars(&self) -> &[(String, String)] {
        match *self {}
    }

    /// (No value of this type exists.)
    ///
    /// # Errors
    /// None.
    pub fn create(&mut self) -> Result<(), String> {
        match *self {}
    }

    /// (No value of this type exists.)
    pub fn absorb(&mut self) -> Absorbed {
        match *self {}
    }
}
