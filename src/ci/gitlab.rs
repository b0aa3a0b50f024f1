//! GitLab CI: each attempt in a collapsible section of the job log, as "Custom collapsible
//! sections" documents them (<https://docs.gitlab.com/ci/jobs/job_logs/#custom-collapsible-sections>):
//! `ESC[0Ksection_start:UNIX_TIME:NAME[collapsed=true]\rESC[0Kattempt N of M` before, and
//! `ESC[0Ksection_end:UNIX_TIME:NAME\rESC[0K` after, the time in seconds since the epoch. A
//! section's name takes letters, digits, `_`, `.` and `-`: `retry_attempt_N_RUN`, where RUN is
//! the first 8 hex digits of the run's id, so that a retry inside another one (or a second
//! retry in the same job) never ends another's section.

use std::time::SystemTime;

use super::{Folds, unix_seconds};

/// GitLab CI's collapsible sections (`GITLAB_CI=true`).
#[derive(Clone, Copy, Debug)]
pub struct Sections;

/// The section name of attempt `attempt` of run `run`.
fn name(attempt: u64, run: &str) -> String {
    let run: String = run
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    format!("retry_attempt_{attempt}_{run}")
}

impl Folds for Sections {
    fn open(&self, attempt: u64, label: &str, run: &str, now: SystemTime, last: bool) -> String {
        // The last attempt's section is left open (expanded), as GitLab shows a section
        // without `[collapsed=true]`.
        let options = if last { "" } else { "[collapsed=true]" };
        format!(
            "\x1b[0Ksection_start:{}:{}{options}\r\x1b[0K{label}\n",
            unix_seconds(now),
            name(attempt, run)
        )
    }

    fn close(&self, attempt: u64, run: &str, now: SystemTime, _last: bool) -> Option<String> {
        Some(format!(
            "\x1b[0Ksection_end:{}:{}\r\x1b[0K\n",
            unix_seconds(now),
            name(attempt, run)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn markers_as_gitlab_documents_them() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let run = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            Sections.open(2, "attempt 2 of 6", run, at, false),
            "\x1b[0Ksection_start:1767225600:retry_attempt_2_01234567[collapsed=true]\r\x1b[0K\
             attempt 2 of 6\n"
        );
        assert_eq!(
            Sections.close(2, run, at, false).unwrap(),
            "\x1b[0Ksection_end:1767225600:retry_attempt_2_01234567\r\x1b[0K\n"
        );
        assert_eq!(
            Sections.open(6, "attempt 6 of 6", run, at, true),
            "\x1b[0Ksection_start:1767225600:retry_attempt_6_01234567\r\x1b[0Kattempt 6 of 6\n"
        );
        assert_eq!(
            Sections.close(6, run, at, true).unwrap(),
            "\x1b[0Ksection_end:1767225600:retry_attempt_6_01234567\r\x1b[0K\n"
        );
    }
}
