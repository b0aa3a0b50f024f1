//! Finding the program of an attempt on Windows as `cmd.exe` does: a name without a directory
//! is looked for in the current directory (unless `NoDefaultCurrentDirectoryInExePath` is set),
//! then in each directory of `PATH`, in each with the extensions of `PATHEXT` in order (`.COM;
//! .EXE;.BAT;.CMD` when unset), after the name as given when it has an extension; a name with
//! a directory is tried as given and with those extensions. So `retry -- git` finds `git.exe`
//! and `retry -- build` finds `build.cmd`. See
//! <https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd>
//! ("Command search path") and
//! <https://learn.microsoft.com/en-us/windows/win32/api/processenv/nf-processenv-needcurrentdirectoryforexepathw>.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

/// The extensions tried when `PATHEXT` is unset or empty.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The file `name` runs, from the process's `PATH`, `PATHEXT` and current directory.
///
/// # Errors
/// `NotFound` when no file matches.
#[cfg_attr(
    not(windows),
    expect(dead_code, reason = "Windows's; its rules are tested on every system")
)]
pub fn find_program(name: &OsStr) -> io::Result<PathBuf> {
    let cwd_first = std::env::var_os("NoDefaultCurrentDirectoryInExePath").is_none();
    find_in(
        name,
        std::env::var_os("PATH").as_deref(),
        std::env::var_os("PATHEXT").as_deref(),
        cwd_first,
    )
}

/// [`find_program`] with the variables given: `path` and `pathext` as the variables hold them,
/// `cwd_first` whether the current directory is searched before `PATH`.
///
/// # Errors
/// `NotFound` when no file matches.
pub fn find_in(
    name: &OsStr,
    path: Option<&OsStr>,
    pathext: Option<&OsStr>,
    cwd_first: bool,
) -> io::Result<PathBuf> {
    let exts = extensions(pathext);
    let given = Path::new(name);
    let has_dir = name
        .as_encoded_bytes()
        .iter()
        .any(|b| matches!(b, b'\\' | b'/' | b':'));
    let dirs: Vec<PathBuf> = if has_dir {
        vec![PathBuf::new()]
    } else {
        let mut dirs = Vec::new();
        if cwd_first {
            dirs.push(PathBuf::from("."));
        }
        dirs.extend(
            path.map(|p| std::env::split_paths(p).collect::<Vec<_>>())
                .unwrap_or_default(),
        );
        dirs
    };
    for dir in dirs.iter().filter(|d| has_dir || !d.as_os_str().is_empty()) {
        let base = dir.join(given);
        if given.extension().is_some() && base.is_file() {
            return Ok(base);
        }
        for ext in &exts {
            let mut candidate = OsString::from(base.as_os_str());
            candidate.push(ext);
            let candidate = PathBuf::from(candidate);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    // A directory named with its path exists but is no program: Windows refuses to run it
    // (126), as Unix does, rather than not finding it (127).
    if has_dir && given.exists() {
        return Ok(given.to_path_buf());
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "not found in the current directory or PATH (with the extensions of PATHEXT)",
    ))
}

/// The extensions of `PATHEXT`, each with its dot.
fn extensions(pathext: Option<&OsStr>) -> Vec<String> {
    let text = pathext
        .and_then(OsStr::to_str)
        .filter(|t| !t.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT);
    text.split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            if e.starts_with('.') {
                e.to_string()
            } else {
                format!(".{e}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // The names are in PATHEXT's case: Windows compares them without case, Linux (where this
    // also runs) with it.
    fn a_name_takes_the_first_extension_of_pathext_that_exists_in_path_order() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        std::fs::write(second.path().join("build.CMD"), "").unwrap();
        std::fs::write(second.path().join("build.EXE"), "").unwrap();
        std::fs::write(first.path().join("build.BAT"), "").unwrap();
        let path = std::env::join_paths([first.path(), second.path()]).unwrap();
        let found = find_in(OsStr::new("build"), Some(&path), None, false).unwrap();
        assert_eq!(found, first.path().join("build.BAT"));
        let found = find_in(
            OsStr::new("build"),
            Some(&path),
            Some(OsStr::new(".CMD;.EXE")),
            false,
        );
        assert_eq!(found.unwrap(), second.path().join("build.CMD"));
        let missing = find_in(OsStr::new("nothing"), Some(&path), None, false);
        assert_eq!(missing.unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_directory_on_path_is_never_the_program_and_one_named_by_its_path_is_not_runnable() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tool.EXE")).unwrap();
        let path = dir.path().as_os_str();
        assert!(find_in(OsStr::new("tool"), Some(path), None, false).is_err());
        let named = dir.path().join("tool.EXE");
        assert_eq!(
            find_in(named.as_os_str(), None, None, false).unwrap(),
            named
        );
    }
}
