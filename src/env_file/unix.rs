//! `RETRY_ENV_FILE` on Unix (see the module `env_file`): the private directory and the file,
//! opened without following links, read where the last read stopped.

use super::{MAX_FILE_BYTES, VARIABLE, parse};

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, fchmod, fstat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// One run's `RETRY_ENV_FILE`.
#[derive(Debug)]
pub struct EnvFile {
    /// The private directory, opened.
    dir: OwnedFd,
    /// The file's name in it.
    name: String,
    /// Its full path, for the attempts and hooks.
    path: PathBuf,
    /// retry has made sure it exists (0600).
    created: bool,
    /// What was read so far: the file (device, inode), the bytes and lines consumed.
    seen: Option<(u64, u64)>,
    offset: u64,
    lines: u64,
    /// The byte limit was reached and reported: nothing more is read.
    full: bool,
    /// The file was found to be something retry will not read, and that was reported.
    refused: bool,
    /// The variables set so far, each name once, in the order first set.
    vars: Vec<(String, String)>,
}

/// What a read of the file came to, for the supervisor to report.
#[derive(Debug, Default)]
pub struct Absorbed {
    /// The names set or changed by this read, in order, each once.
    pub set: Vec<String>,
    /// Warnings: lines skipped ([`parse::Problem`]), the limit reached, a file refused.
    pub warnings: Vec<String>,
}

impl EnvFile {
    /// Opens (creating it if missing) the private directory in `dir` and names the run's file
    /// after `run_id`; creates no file.
    ///
    /// # Errors
    /// One line saying why the directory cannot be used.
    pub fn open(dir: &Path, run_id: &str) -> Result<EnvFile, String> {
        if dir.to_str().is_none() {
            // An attempt gets the path in a variable of text.
            return Err(format!("{} is not UTF-8", dir.display()));
        }
        let fd = private_dir(dir)?;
        let name = format!("run-{run_id}.env");
        Ok(EnvFile {
            dir: fd,
            path: dir.join(&name),
            name,
            created: false,
            seen: None,
            offset: 0,
            lines: 0,
            full: false,
            refused: false,
            vars: Vec::new(),
        })
    }

    /// The file's path, as `RETRY_ENV_FILE` gives it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The variables set so far, in the order first set.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }

    /// Makes sure the file exists, mode 0600, for an attempt or hook after the first attempt.
    ///
    /// # Errors
    /// One line saying why it cannot be created (the directory was removed meanwhile, a disk
    /// full, something else in its place).
    pub fn create(&mut self) -> Result<(), String> {
        if self.created {
            return Ok(());
        }
        self.created = true;
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT;
        let file = self
            .open_file(flags)
            .map_err(|e| format!("cannot create {}: {e}", self.path.display()))?;
        let meta = file.metadata().map_err(|e| e.to_string())?;
        if meta.mode() & 0o7777 != 0o600 {
            fchmod(file.as_fd(), Mode::from_bits_truncate(0o600))
                .map_err(|e| format!("cannot make {} 0600: {e}", self.path.display()))?;
        }
        Ok(())
    }

    /// Reads what was appended since the last read and sets its variables.
    pub fn absorb(&mut self) -> Absorbed {
        let mut absorbed = Absorbed::default();
        if self.full || self.refused {
            return absorbed;
        }
        let file = match self.open_file(OFlag::O_RDONLY) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return absorbed,
            Err(e) => {
                self.refused = true;
                absorbed.warnings.push(format!(
                    "{VARIABLE} {}: {e}; it is not read again",
                    self.path.display()
                ));
                return absorbed;
            }
        };
        let Ok(meta) = file.metadata() else {
            return absorbed;
        };
        let identity = (meta.dev(), meta.ino());
        if self.seen != Some(identity) || meta.len() < self.offset {
            // A new file, or one cut short: read it from its start.
            (self.seen, self.offset, self.lines) = (Some(identity), 0, 0);
        }
        let end = meta.len().min(MAX_FILE_BYTES);
        if meta.len() > MAX_FILE_BYTES {
            self.full = true;
            absorbed.warnings.push(format!(
                "{VARIABLE} holds more than {} KiB: the rest of it, and whatever is appended \
                 later, is not read",
                MAX_FILE_BYTES / 1024
            ));
        }
        if end <= self.offset {
            return absorbed;
        }
        let mut chunk = Vec::new();
        let read = std::io::Seek::seek(&mut &file, std::io::SeekFrom::Start(self.offset))
            .and_then(|_| (&file).take(end - self.offset).read_to_end(&mut chunk));
        if read.is_err() {
            return absorbed;
        }
        if self.full {
            // Past the limit, only whole lines are read.
            let whole = chunk.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            chunk.truncate(whole);
        }
        self.offset += chunk.len() as u64;
        let parsed = parse::parse(&chunk, self.lines + 1);
        self.lines += parsed.lines;
        absorbed
            .warnings
            .extend(parsed.problems.iter().map(|p| format!("{VARIABLE} {p}")));
        for (name, value) in parsed.vars {
            if !absorbed.set.contains(&name) {
                absorbed.set.push(name.clone());
            }
            match self.vars.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => self.vars.push((name, value)),
            }
        }
        absorbed
    }

    /// Opens the file in the private directory with `flags`, without following a symlink and
    /// without waiting (a FIFO in its place would otherwise hold an open for reading); only a
    /// regular file owned by this user is accepted.
    fn open_file(&self, flags: OFlag) -> std::io::Result<File> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let file = openat(
            &self.dir,
            self.name.as_str(),
            flags,
            Mode::from_bits_truncate(0o600),
        )
        .map(File::from)
        .map_err(|e| match e {
            Errno::ELOOP => std::io::Error::other("is a symlink; refused"),
            e => e.into(),
        })?;
        let meta = file.metadata()?;
        if !meta.file_type().is_file() {
            return Err(std::io::Error::other("is not a regular file; refused"));
        }
        if meta.uid() != euid() {
            return Err(std::io::Error::other(format!(
                "is owned by uid {}, not by this user; refused",
                meta.uid()
            )));
        }
        Ok(file)
    }
}

impl Drop for EnvFile {
    /// Removes the file (if anything created it).
    fn drop(&mut self) {
        let _ = unlinkat(&self.dir, self.name.as_str(), UnlinkatFlags::NoRemoveDir);
    }
}

/// The effective user id.
fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Opens `dir`, creating it 0700 if it is missing (not its parents), and checks it as the
/// budget store checks its own: a directory, not a symlink, owned by this user, not writable by
/// group or others.
fn private_dir(dir: &Path) -> Result<OwnedFd, String> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let shown = dir.display();
    let open = || nix::fcntl::open(dir, flags, Mode::empty());
    let fd = match open() {
        Err(Errno::ENOENT) => {
            match nix::unistd::mkdir(dir, Mode::from_bits_truncate(0o700)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(format!("cannot create {shown}: {}", io(e))),
            }
            open()
        }
        other => other,
    }
    .map_err(|e| {
        let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
        match e {
            // Linux says ENOTDIR for a symlink opened with O_DIRECTORY | O_NOFOLLOW.
            Errno::ELOOP | Errno::ENOTDIR if is_link => format!("{shown} is a symlink; refused"),
            Errno::ENOTDIR => format!("{shown} is not a directory"),
            e => format!("cannot open {shown}: {}", io(e)),
        }
    })?;
    let st = fstat(&fd).map_err(|e| format!("cannot stat {shown}: {}", io(e)))?;
    if st.st_uid != euid() {
        return Err(format!(
            "{shown} is owned by uid {}, not by this user (uid {}); refused",
            st.st_uid,
            euid()
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(format!(
            "{shown} is writable by others (mode {:o}); refused",
            st.st_mode & 0o7777
        ));
    }
    Ok(fd)
}

/// An errno as the system words it.
fn io(e: Errno) -> std::io::Error {
    e.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn append(file: &EnvFile, text: &[u8]) {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(file.path())
            .unwrap()
            .write_all(text)
            .unwrap();
    }

    #[test]
    fn reads_what_is_appended_and_removes_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("retry-test");
        let mut file = EnvFile::open(&dir, "0123").unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(!file.path().exists(), "not created for the first attempt");
        assert!(file.absorb().set.is_empty());
        append(&file, b"A=1\nB=2\n");
        assert_eq!(file.absorb().set, ["A", "B"]);
        file.create().unwrap();
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        append(&file, b"A=3\nbad line\n");
        let absorbed = file.absorb();
        assert_eq!(absorbed.set, ["A"]);
        assert_eq!(
            absorbed.warnings,
            ["RETRY_ENV_FILE line 4 is neither NAME=VALUE nor NAME<<DELIMITER: skipped"]
        );
        assert_eq!(
            file.vars(),
            [("A".into(), "3".into()), ("B".into(), "2".into())]
        );
        // Cut short and written again: read from the start.
        std::fs::write(file.path(), b"C=4\n").unwrap();
        assert_eq!(file.absorb().set, ["C"]);
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn refuses_a_directory_of_others_and_a_file_that_is_not_one() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = EnvFile::open(&open, "x").unwrap_err();
        assert!(e.contains("writable by others"), "{e}");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).unwrap();
        let e = EnvFile::open(&link, "x").unwrap_err();
        assert!(e.ends_with("is a symlink; refused"), "{e}");
        let e = EnvFile::open(Path::new("/nonexistent/dir"), "x").unwrap_err();
        assert!(e.starts_with("cannot create /nonexistent/dir"), "{e}");

        let mut file = EnvFile::open(&tmp.path().join("ok"), "y").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", file.path()).unwrap();
        let absorbed = file.absorb();
        assert!(absorbed.warnings[0].ends_with("is a symlink; refused; it is not read again"));
        assert!(file.absorb().warnings.is_empty(), "said once");
        assert!(file.create().is_err());
    }

    #[test]
    fn stops_reading_past_the_limit_with_one_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let mut file = EnvFile::open(tmp.path(), "big").unwrap();
        let line = b"FILL=0123456789012345678901234567890123456789012345678901234567890\n";
        let mut text = Vec::new();
        while (text.len() as u64) < 2 * MAX_FILE_BYTES {
            text.extend_from_slice(line);
        }
        append(&file, &text);
        let absorbed = file.absorb();
        assert_eq!(absorbed.set, ["FILL"]);
        assert_eq!(absorbed.warnings.len(), 1, "{:?}", absorbed.warnings);
        assert!(absorbed.warnings[0].contains("more than 1024 KiB"));
        append(&file, b"LATE=1\n");
        let again = file.absorb();
        assert!(again.set.is_empty() && again.warnings.is_empty());
    }
}
