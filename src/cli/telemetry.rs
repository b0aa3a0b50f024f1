//! The "Telemetry" heading: `--metrics-file`, `--metrics-job` and `--trace-args`.

use std::path::PathBuf;

use clap::{Args, ValueHint};

/// The "Telemetry" heading: what a run leaves behind for monitoring.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Telemetry")]
pub struct TelemetryArgs {
    /// Write how the run ended to PATH, for Prometheus (node_exporter textfile)
    ///
    /// At the end of every run (success, give-up, refusal, stop by a signal) PATH is replaced
    /// atomically (a temporary file in its directory, then rename) by the Prometheus text
    /// format: retry_last_run_timestamp_seconds, retry_last_success_timestamp_seconds,
    /// retry_last_duration_seconds, retry_last_attempts, retry_last_exit_status, and the
    /// counters retry_runs_total{result} (success, gave_up, refused, stopped) and
    /// retry_attempts_total, carried over from the file there before (a file that does not
    /// parse is replaced, with a warning). Every series has one label, job. Point it into
    /// node_exporter's --collector.textfile.directory, with a name ending in .prom. A file
    /// that cannot be written turns a success into 125.
    #[arg(long, value_name = "PATH", env = "RETRY_METRICS_FILE", value_hint = ValueHint::FilePath)]
    pub metrics_file: Option<PathBuf>,

    /// The job label of --metrics-file [default: the command's file name]
    ///
    /// One low-cardinality name per job: the series of a file are those of one job.
    #[arg(long, value_name = "NAME")]
    pub metrics_job: Option<String>,

    /// Record the command's arguments in the trace (process.command_args)
    ///
    /// Traces are exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: a span for the run and one per attempt,
    /// each attempt and hook started with TRACEPARENT naming its span. Arguments are left out
    /// unless this flag is given, as OpenTelemetry's conventions advise: they may hold secrets.
    #[arg(long)]
    pub trace_args: bool,
}
