//! How `dist/install.sh` puts its files in place when something else is at work there, under
//! each shell ([`Shell`]): installs at once into one prefix (a directory another made first is
//! no failure), a late file that cannot be replaced (an immutable fish completion, `chattr +i`,
//! as root): every file already replaced is put back and every new directory removed; and a
//! TERM among the renames, which does the same.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::release::small;
use crate::script::{PREFIX_FILES, args, shells};
use crate::support::{
    Scratch, Shell, each_shell, install_sh, is_root, make_executable, serve, shell_path, tree,
};
use crate::tools::{self, require};

/// The fish completion, the last file the script puts in place, under the prefix.
const FISH: &str = "share/fish/vendor_completions.d/retry.fish";

/// The five installed files, under the prefix.
const FILES: [&str; 5] = [
    "bin/retry",
    "share/man/man1/retry.1",
    "share/bash-completion/completions/retry",
    "share/zsh/site-functions/_retry",
    FISH,
];

#[test]
fn a_directory_another_install_made_first_is_no_failure() {
    if !shells() {
        return;
    }
    // A mkdir that loses the race for every directory of the prefix: the directory is made (as
    // by another install a moment before), then it fails as mkdir does.
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let fake = scratch.path().join("fake");
        std::fs::create_dir(&fake).unwrap();
        std::fs::write(
            fake.join("mkdir"),
            format!(
                "#!/bin/sh\nfor last; do :; done\n\
                 case $last in */prefix*) ;; *) exec '{mkdir}' \"$@\" ;; esac\n\
                 '{mkdir}' -p -- \"$last\"\n\
                 printf \"mkdir: cannot create directory '%s': File exists\\n\" \"$last\" >&2\n\
                 exit 1\n",
                mkdir = crate::support::which("mkdir").display()
            ),
        )
        .unwrap();
        make_executable(&fake.join("mkdir"));
        let path = format!("{}:{}", fake.display(), shell_path(shell));
        let prefix = scratch.path().join("prefix");
        let to = prefix.join("bin");
        install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[("PATH", &path)],
        )
        .ok();
        assert_eq!(tree(&prefix), PREFIX_FILES, "{shell:?}");
    });
}

#[test]
fn installs_at_once_into_one_prefix_all_succeed() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&[Shell::Dash, Shell::Busybox], |shell| {
        for _ in 0..3 {
            let shared = Scratch::new();
            let to = shared.path().join("prefix/bin");
            let to = to.to_str().unwrap();
            std::thread::scope(|scope| {
                let runs: Vec<_> = (0..4)
                    .map(|_| {
                        scope.spawn(|| {
                            // Each its own HOME and TMPDIR, whose emptiness install_sh checks.
                            let own = Scratch::new();
                            install_sh(shell, &own, &args(release, server.url(), to), &[])
                        })
                    })
                    .collect();
                for run in runs {
                    run.join().unwrap().ok();
                }
            });
            assert_eq!(
                tree(&shared.path().join("prefix")),
                PREFIX_FILES,
                "{shell:?}"
            );
        }
    });
}

/// `chattr +i` on a file, undone when dropped (else the scratch directory stays).
struct Immutable(PathBuf);

impl Immutable {
    /// The file made immutable, or None where the file system cannot (a skip, or under
    /// RETRY_TESTS_REQUIRE_TOOLS=1 a failure).
    fn set(path: &Path) -> Option<Immutable> {
        let out = Command::new("chattr").arg("+i").arg(path).output().unwrap();
        if out.status.success() {
            return Some(Immutable(path.to_path_buf()));
        }
        let why = format!("chattr +i {}: {out:?}", path.display());
        assert!(std::env::var_os(tools::REQUIRE_VARIABLE).is_none(), "{why}");
        eprintln!("skipped: {why}");
        None
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

/// Every file under `root` with its bytes.
fn contents(root: &Path) -> Vec<(String, Vec<u8>)> {
    tree(root)
        .into_iter()
        .filter(|p| !p.ends_with('/'))
        .map(|p| {
            let bytes = std::fs::read(root.join(&p)).unwrap();
            (p, bytes)
        })
        .collect()
}

/// A prefix under `scratch` with an install whose every file says `old` (mode kept).
fn old_install(shell: Shell, scratch: &Scratch, url: &str) -> PathBuf {
    let prefix = scratch.path().join("prefix");
    let to = prefix.join("bin");
    install_sh(
        shell,
        scratch,
        &args(small(), url, to.to_str().unwrap()),
        &[],
    )
    .ok();
    for file in FILES {
        std::fs::write(prefix.join(file), format!("old {file}\n")).unwrap();
    }
    prefix
}

#[test]
fn a_late_file_that_cannot_be_replaced_puts_back_every_file_replaced_before_it() {
    if !shells() || !is_root() || !require(&[tools::CHATTR]) {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        // Over an install: each file replaced before the fish completion is put back.
        let scratch = Scratch::new();
        let prefix = old_install(shell, &scratch, server.url());
        let before = (scratch.tree(), contents(&prefix));
        let Some(_fixed) = Immutable::set(&prefix.join(FISH)) else {
            return;
        };
        let to = prefix.join("bin");
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), to.to_str().unwrap()),
            &[],
        );
        assert_eq!(
            run.one_line_failure(),
            format!(
                "install.sh: cannot install '{}': Operation not permitted",
                prefix.join(FISH).display()
            ),
            "{shell:?}"
        );
        assert_eq!((scratch.tree(), contents(&prefix)), before, "{shell:?}");
        // Into a prefix that holds the fish completion alone: the other files and the
        // directories made for them go.
        let scratch = Scratch::new();
        let prefix = scratch.path().join("prefix");
        std::fs::create_dir_all(prefix.join(FISH).parent().unwrap()).unwrap();
        std::fs::write(prefix.join(FISH), "old fish completion\n").unwrap();
        let before = scratch.tree();
        let Some(_fixed) = Immutable::set(&prefix.join(FISH)) else {
            return;
        };
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), prefix.join("bin").to_str().unwrap()),
            &[],
        );
        run.one_line_failure();
        assert_eq!(scratch.tree(), before, "{shell:?}");
    });
}

#[test]
fn a_term_among_the_renames_puts_back_every_file_replaced() {
    if !shells() {
        return;
    }
    let release = small();
    let server = serve(release);
    each_shell(&Shell::ALL, |shell| {
        let scratch = Scratch::new();
        let prefix = old_install(shell, &scratch, server.url());
        // An mv that, once it has renamed the second new file into its place, sends TERM to
        // the script (its parent), as a user's Ctrl-C or a CI timeout would.
        let fake = scratch.path().join("fake");
        std::fs::create_dir(&fake).unwrap();
        let count = scratch.path().join("renames");
        std::fs::write(
            fake.join("mv"),
            format!(
                "#!/bin/sh\n'{}' \"$@\" || exit\ncase $* in *.install-[0-9]*) ;; *) exit 0 ;; esac\n\
                 echo x >>'{count}'\n\
                 if [ \"$(wc -l <'{count}')\" -eq 2 ]; then kill -TERM \"$PPID\"; fi\n",
                crate::support::which("mv").display(),
                count = count.display()
            ),
        )
        .unwrap();
        make_executable(&fake.join("mv"));
        let before = (tree(&prefix), contents(&prefix));
        let path = format!("{}:{}", fake.display(), shell_path(shell));
        let run = install_sh(
            shell,
            &scratch,
            &args(release, server.url(), prefix.join("bin").to_str().unwrap()),
            &[("PATH", &path)],
        );
        assert_eq!(run.status, Some(143), "{shell:?}: {run:#?}");
        assert_eq!(
            std::fs::read_to_string(&count).unwrap().lines().count(),
            2,
            "{shell:?}"
        );
        assert_eq!((tree(&prefix), contents(&prefix)), before, "{shell:?}");
    });
}
