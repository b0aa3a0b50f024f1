//! `--metrics-file`: the end of a run in the Prometheus text exposition format, for the
//! node_exporter textfile collector (<https://github.com/prometheus/node_exporter#textfile-collector>),
//! with the names and base units of Prometheus's "Metric and label naming" practices
//! (<https://prometheus.io/docs/practices/naming/>): the series and what is carried over from
//! the file before. Writing the file, whole and in turns, is [`super::textfile`]'s.

use std::time::{Duration, SystemTime};

use super::prom_parse::{self, escape_label};

/// How a run ended, as the `result` label of `retry_runs_total` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunResult {
    /// The command succeeded.
    Success,
    /// retry gave up (retries used up, deadline, a status not retried, its own failure).
    GaveUp,
    /// The circuit breaker or the retry budget refused the run before its first attempt.
    Refused,
    /// A stop signal ([`crate::signals::STOP_SIGNALS`]) ended the run.
    Stopped,
}

impl RunResult {
    /// Every result, in the order the file lists them.
    pub const ALL: [RunResult; 4] = [
        RunResult::Success,
        RunResult::GaveUp,
        RunResult::Refused,
        RunResult::Stopped,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            RunResult::Success => "success",
            RunResult::GaveUp => "gave_up",
            RunResult::Refused => "refused",
            RunResult::Stopped => "stopped",
        }
    }
}

/// What one run leaves in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// The `job` label.
    pub job: String,
    /// When the run ended.
    pub ended: SystemTime,
    /// How long it ran.
    pub duration: Duration,
    /// Attempts started.
    pub attempts: u64,
    /// Of those, the attempts an earlier write of this run (a `--forever` run rewrites the
    /// file after every run) already added to `retry_attempts_total`.
    pub counted: u64,
    /// retry's exit status (128 + N for a death by signal N).
    pub exit_status: u8,
    /// How it ended; `None` while it goes on (a `--forever` run's file after each run: the
    /// run is not counted in `retry_runs_total` yet, and `retry_last_exit_status` is the last
    /// attempt's status).
    pub result: Option<RunResult>,
}

/// What a previous file carries over to the next (for one `job`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Carried {
    /// `retry_runs_total` by result, in the order of [`RunResult::ALL`].
    pub runs: [u64; 4],
    /// `retry_attempts_total`.
    pub attempts: u64,
    /// `retry_last_success_timestamp_seconds`.
    pub last_success: Option<f64>,
}

impl Carried {
    /// The values for `job` in the previous file's `text`. Series of other jobs are dropped.
    ///
    /// # Errors
    /// Why the text does not parse, or a carried value that is negative or not finite.
    #[cold]
    #[inline(never)]
    pub fn read(text: &str, job: &str) -> Result<Carried, String> {
        let mut carried = Carried::default();
        for sample in prom_parse::parse(text)? {
            if sample.labels.get("job").map(String::as_str) != Some(job) {
                continue;
            }
            let count = || -> Result<u64, String> {
                if sample.value.is_finite() && sample.value >= 0.0 {
                    // Saturates at u64::MAX.
                    Ok(sample.value as u64)
                } else {
                    Err(format!("{} is {}", sample.name, sample.value))
                }
            };
            match sample.name.as_str() {
                "retry_runs_total" => {
                    let result = sample.labels.get("result").map(String::as_str);
                    if let Some(i) = RunResult::ALL
                        .iter()
                        .position(|r| Some(r.label()) == result)
                    {
                        carried.runs[i] = count()?;
                    }
                }
                "retry_attempts_total" => carried.attempts = count()?,
                "retry_last_success_timestamp_seconds" if sample.value.is_finite() => {
                    carried.last_success = Some(sample.value);
                }
                "retry_last_success_timestamp_seconds" => {
                    return Err(format!("{} is {}", sample.name, sample.value));
                }
                _ => {}
            }
        }
        Ok(carried)
    }
}

/// Seconds since the Unix epoch, with the milliseconds (negative before 1970).
fn epoch_secs(t: SystemTime) -> f64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// The file for `run` on top of what `before` carried over.
#[cold]
#[inline(never)]
pub fn render(run: &RunRecord, before: &Carried) -> String {
    let job = format!("job=\"{}\"", escape_label(&run.job));
    let ended = epoch_secs(run.ended);
    // Present in every file, 0 until the first success, so that a stale-job alert
    // (`time() - retry_last_success_timestamp_seconds > N`) fires for a job that never worked:
    // Prometheus' "avoid missing metrics",
    // <https://prometheus.io/docs/practices/instrumentation/#avoid-missing-metrics>.
    let last_success = if run.result == Some(RunResult::Success) {
        ended
    } else {
        before.last_success.unwrap_or(0.0)
    };
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, value: String| {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{{job}}} {value}\n"
        ));
    };
    gauge(
        "retry_last_run_timestamp_seconds",
        "When the last run ended, in seconds since the Unix epoch.",
        format!("{ended:.3}"),
    );
    gauge(
        "retry_last_success_timestamp_seconds",
        "When the last successful run ended, in seconds since the Unix epoch; 0 before the \
         first.",
        format!("{last_success:.3}"),
    );
    gauge(
        "retry_last_duration_seconds",
        "How long the last run took, in seconds.",
        format!("{:.3}", run.duration.as_secs_f64()),
    );
    gauge(
        "retry_last_attempts",
        "Attempts the last run started.",
        run.attempts.to_string(),
    );
    gauge(
        "retry_last_exit_status",
        "The exit status of the last run (128 + N for a death by signal N).",
        run.exit_status.to_string(),
    );
    out.push_str(
        "# HELP retry_runs_total Runs, by how they ended.\n# TYPE retry_runs_total counter\n",
    );
    for (i, result) in RunResult::ALL.iter().enumerate() {
        let count = before.runs[i].saturating_add(u64::from(Some(*result) == run.result));
        out.push_str(&format!(
            "retry_runs_total{{{job},result=\"{}\"}} {count}\n",
            result.label()
        ));
    }
    out.push_str(&format!(
        "# HELP retry_attempts_total Attempts started, over all runs.\n\
         # TYPE retry_attempts_total counter\nretry_attempts_total{{{job}}} {}\n",
        before
            .attempts
            .saturating_add(run.attempts.saturating_sub(run.counted))
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(result: RunResult, attempts: u64) -> RunRecord {
        RunRecord {
            job: "backup".into(),
            ended: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_250),
            duration: Duration::from_millis(1500),
            attempts,
            counted: 0,
            exit_status: if result == RunResult::Success { 0 } else { 3 },
            result: Some(result),
        }
    }

    #[test]
    fn a_first_run_writes_every_series_with_its_job() {
        let text = render(&run(RunResult::Success, 2), &Carried::default());
        assert!(text.contains("retry_last_run_timestamp_seconds{job=\"backup\"} 1700000000.250\n"));
        assert!(
            text.contains("retry_last_success_timestamp_seconds{job=\"backup\"} 1700000000.250\n")
        );
        assert!(text.contains("retry_last_duration_seconds{job=\"backup\"} 1.500\n"));
        assert!(text.contains("retry_last_attempts{job=\"backup\"} 2\n"));
        assert!(text.contains("retry_last_exit_status{job=\"backup\"} 0\n"));
        assert!(text.contains("retry_runs_total{job=\"backup\",result=\"success\"} 1\n"));
        assert!(text.contains("retry_runs_total{job=\"backup\",result=\"stopped\"} 0\n"));
        assert!(text.contains("retry_attempts_total{job=\"backup\"} 2\n"));
        assert_eq!(text.matches("# TYPE").count(), 7);
    }

    #[test]
    fn counters_and_the_last_success_carry_over_and_failures_keep_it() {
        let first = render(&run(RunResult::Success, 2), &Carried::default());
        let carried = Carried::read(&first, "backup").unwrap();
        assert_eq!(carried.runs, [1, 0, 0, 0]);
        assert_eq!(carried.last_success, Some(1_700_000_000.25));
        let mut failed = run(RunResult::GaveUp, 4);
        failed.ended += Duration::from_secs(60);
        let second = render(&failed, &carried);
        assert!(
            second
                .contains("retry_last_success_timestamp_seconds{job=\"backup\"} 1700000000.250\n")
        );
        assert!(
            second.contains("retry_last_run_timestamp_seconds{job=\"backup\"} 1700000060.250\n")
        );
        assert!(second.contains("retry_runs_total{job=\"backup\",result=\"gave_up\"} 1\n"));
        assert!(second.contains("retry_runs_total{job=\"backup\",result=\"success\"} 1\n"));
        assert!(second.contains("retry_attempts_total{job=\"backup\"} 6\n"));
        // Another job's series are not this job's.
        assert_eq!(Carried::read(&second, "other").unwrap(), Carried::default());
    }

    #[test]
    fn huge_and_bad_carried_values() {
        let huge = "retry_attempts_total{job=\"j\"} 1e300\n";
        let carried = Carried::read(huge, "j").unwrap();
        assert_eq!(carried.attempts, u64::MAX);
        let next = render(
            &RunRecord {
                job: "j".into(),
                ..run(RunResult::Stopped, 1)
            },
            &carried,
        );
        assert!(next.contains(&format!("retry_attempts_total{{job=\"j\"}} {}\n", u64::MAX)));
        for bad in [
            "retry_attempts_total{job=\"j\"} -1\n",
            "retry_attempts_total{job=\"j\"} NaN\n",
            "retry_runs_total{job=\"j\",result=\"success\"} +Inf\n",
            "retry_last_success_timestamp_seconds{job=\"j\"} NaN\n",
            "not a metrics file\n",
        ] {
            assert!(Carried::read(bad, "j").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_job_name_with_quotes_and_line_breaks_round_trips() {
        let odd = RunRecord {
            job: "a\"b\\c\nd".into(),
            ..run(RunResult::Refused, 0)
        };
        let text = render(&odd, &Carried::default());
        let carried = Carried::read(&text, &odd.job).unwrap();
        assert_eq!(carried.runs, [0, 0, 1, 0]);
    }

    #[test]
    fn a_run_still_going_adds_its_new_attempts_and_counts_no_run_until_it_ends() {
        let going = RunRecord {
            attempts: 3,
            result: None,
            ..run(RunResult::GaveUp, 0)
        };
        let first = render(&going, &Carried::default());
        let carried = Carried::read(&first, "backup").unwrap();
        assert_eq!((carried.runs, carried.attempts), ([0; 4], 3));
        assert_eq!(carried.last_success, Some(0.0));
        // The run ends after two more attempts: only those are added, and the run is counted.
        let ended = RunRecord {
            attempts: 5,
            counted: 3,
            ..run(RunResult::GaveUp, 0)
        };
        let second = Carried::read(&render(&ended, &carried), "backup").unwrap();
        assert_eq!((second.runs, second.attempts), ([0, 1, 0, 0], 5));
    }
}
