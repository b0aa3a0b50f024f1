//! What retry tells the CI system it runs under: folds around each attempt's output in the
//! job's log (GitHub Actions, GitLab CI, Buildkite: one file each, behind [`Folds`]), and for
//! GitHub Actions also annotations, step outputs and a step summary ([`github`], [`summary`]).
//!
//! The system is chosen once, from the environment, when the run's settings are read
//! ([`Ci::from_env`]); the supervisor then calls "attempt started" and "attempt ended" on
//! whichever it is, never a vendor by name. `--no-github` turns GitHub Actions off, `--no-ci`
//! all three.

pub mod buildkite;
pub mod github;
pub mod gitlab;
pub mod observer;
pub mod summary;

use std::time::SystemTime;

pub use self::github::GitHub;

/// How a CI system folds one attempt's output in its log. Every marker is one or more whole
/// lines, newline included, written on retry's stderr (the systems read a job's stdout and
/// stderr alike).
pub trait Folds: std::fmt::Debug + Send + Sync {
    /// The marker before attempt `attempt` starts; `label` is `attempt N of M` (or `attempt N
    /// (unlimited)`), `run` the run's id, `now` the wall-clock time. `last` when the attempt
    /// is known to be the run's last (attempt N of N, or no retry can fit before the
    /// deadline): its output, the one that explains a failure, is then not folded away.
    fn open(&self, attempt: u64, label: &str, run: &str, now: SystemTime, last: bool) -> String;

    /// The marker after the attempt's output has all been written; `None` when the system
    /// has no end marker (a fold then ends where the next begins), or none is needed. `last`
    /// as for [`Folds::open`].
    fn close(&self, attempt: u64, run: &str, now: SystemTime, last: bool) -> Option<String>;

    /// What to write once the run gave up, after the closing line (Buildkite: open the last
    /// attempt's fold, so the failure shows); `None` for nothing.
    fn gave_up(&self) -> Option<String> {
        None
    }
}

/// The CI system of this run, as the environment tells it.
#[derive(Clone, Debug, Default)]
pub struct Ci {
    /// GitHub Actions' annotations, step outputs and step summary; `None` outside it or when
    /// turned off.
    pub github: Option<GitHub>,
    /// The folds of the system in use; `None` outside CI or when turned off.
    pub folds: Option<&'static dyn Folds>,
}

impl Ci {
    /// Reads the environment through `var`: `GITHUB_ACTIONS=true` (unless `no_github` or
    /// `no_ci`), else `GITLAB_CI=true`, else `BUILDKITE=true` (unless `no_ci`).
    pub fn from_env(no_github: bool, no_ci: bool, var: impl Fn(&str) -> Option<String>) -> Ci {
        if no_ci {
            return Ci::default();
        }
        let is = |name: &str| var(name).as_deref() == Some("true");
        if is("GITHUB_ACTIONS") {
            return match GitHub::from_env(no_github, &var) {
                Some(github) => Ci {
                    github: Some(github),
                    folds: Some(&github::Groups),
                },
                None => Ci::default(),
            };
        }
        let folds: Option<&'static dyn Folds> = if is("GITLAB_CI") {
            Some(&gitlab::Sections)
        } else if is("BUILDKITE") {
            Some(&buildkite::Groups)
        } else {
            None
        };
        Ci {
            github: None,
            folds,
        }
    }
}

/// Seconds since the Unix epoch at `now` (0 for a clock before it).
pub fn unix_seconds(now: SystemTime) -> u64 {
    now.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lookup of environment variables in `pairs` (the submodules' tests use it too).
    pub(super) fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    /// The fold of attempt 1 (`-` for none) and whether GitHub's own outputs are on.
    fn which(ci: &Ci) -> String {
        let fold = ci.folds.map_or("-".to_string(), |f| {
            f.open(1, "a", "r", SystemTime::UNIX_EPOCH, false)
                .trim_end()
                .replace('\x1b', "")
        });
        format!("{fold} {}", ci.github.is_some())
    }

    #[test]
    fn one_system_from_the_environment_and_the_opt_outs() {
        let all = [
            ("GITHUB_ACTIONS", "true"),
            ("GITLAB_CI", "true"),
            ("BUILDKITE", "true"),
        ];
        assert_eq!(
            which(&Ci::from_env(false, false, env(&all))),
            "::group::a true"
        );
        assert_eq!(which(&Ci::from_env(false, true, env(&all))), "- false");
        // --no-github leaves GitHub Actions silent, and does not fall through to another.
        assert_eq!(which(&Ci::from_env(true, false, env(&all))), "- false");
        assert_eq!(
            which(&Ci::from_env(true, false, env(&all[1..]))),
            "[0Ksection_start:0:retry_attempt_1_r[collapsed=true]\r[0Ka false"
        );
        assert_eq!(
            which(&Ci::from_env(false, false, env(&all[2..]))),
            "--- a false"
        );
        assert_eq!(which(&Ci::from_env(false, true, env(&all[2..]))), "- false");
        assert_eq!(
            which(&Ci::from_env(false, false, env(&[("GITLAB_CI", "1")]))),
            "- false"
        );
    }
}
