//! Buildkite: each attempt under a collapsed group header, `--- attempt N of M`, as "Managing
//! log output" documents them (<https://buildkite.com/docs/pipelines/configure/managing-log-output>);
//! a group lasts until the next header. When the run gives up, `^^^ +++` opens the last group
//! (the failing attempt's), as the same page suggests for failures.

use std::time::SystemTime;

use super::Folds;

/// Buildkite's log groups (`BUILDKITE=true`).
#[derive(Clone, Copy, Debug)]
pub struct Groups;

impl Folds for Groups {
    fn open(
        &self,
        _attempt: u64,
        label: &str,
        _run: &str,
        _now: SystemTime,
        _last: bool,
    ) -> String {
        // The last attempt is opened when the run gives up (`^^^ +++`, below).
        format!("--- {label}\n")
    }

    fn close(&self, _attempt: u64, _run: &str, _now: SystemTime, _last: bool) -> Option<String> {
        None
    }

    fn gave_up(&self) -> Option<String> {
        Some("^^^ +++\n".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_per_attempt_and_the_last_opened_on_giving_up() {
        let now = SystemTime::now();
        assert_eq!(
            Groups.open(3, "attempt 3 of 6", "r", now, false),
            "--- attempt 3 of 6\n"
        );
        assert_eq!(Groups.close(3, "r", now, false), None);
        assert_eq!(Groups.gave_up().as_deref(), Some("^^^ +++\n"));
    }
}
