//! What a run leaves behind, validated once from the flags (`--metrics-file`, `--metrics-job`,
//! `--trace-args`) and the environment (the `OTEL_*` variables, `TRACEPARENT`): [`Settings`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::otel_env::{self, FromEnv};
use super::otlp;
use super::textfile;
use super::traceparent::{self, SpanContext};

/// `--metrics-file` and its job label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metrics {
    /// Where the file goes.
    pub path: PathBuf,
    /// The `job` label.
    pub job: String,
    /// Rewritten after every run, not only at the end (`--forever`).
    pub every_run: bool,
}

/// The trace's settings: the exporter, the parent from `TRACEPARENT` / `TRACESTATE`, and
/// whether the command's arguments are recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traces {
    /// Where and how the spans go.
    pub exporter: otlp::Exporter,
    /// The run span's parent, from a valid `TRACEPARENT` (an invalid one starts a new trace,
    /// as the W3C specification asks).
    pub parent: Option<SpanContext>,
    /// `TRACESTATE`, passed on with the parent (ignored without one).
    pub tracestate: Option<String>,
    /// `--trace-args`: `process.command_args` on the attempt spans.
    pub args: bool,
}

/// What the run leaves behind, validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `--metrics-file`, when given.
    pub metrics: Option<Metrics>,
    /// Traces, when an OTLP endpoint is set and not disabled.
    pub traces: Option<Traces>,
    /// Lines to print as warnings when the run starts: a PATH not ending in `.prom`, an
    /// `OTEL_*` variable that cannot be used.
    pub warnings: Vec<String>,
}

impl Settings {
    /// The settings from the flags (`--metrics-file`, `--metrics-job`, `--trace-args`), the
    /// command (its file name is the default job) and the environment through `var`.
    ///
    /// # Errors
    /// One line naming the flag and the value: a `--metrics-file` that names no file, an
    /// empty `--metrics-job`.
    pub fn new(
        metrics_file: Option<PathBuf>,
        metrics_job: Option<String>,
        trace_args: bool,
        command: &[OsString],
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, String> {
        let mut settings = Settings::default();
        if let Some(path) = metrics_file {
            settings.metrics_from(path, metrics_job, command)?;
        }
        let from_env = otel_env::from_env(&var);
        if from_env.exporter.is_some() || !from_env.warnings.is_empty() {
            settings.traces_from(from_env, trace_args, &var);
        }
        Ok(settings)
    }

    /// The `--metrics-file` part of [`Settings::new`].
    #[cold]
    #[inline(never)]
    fn metrics_from(
        &mut self,
        path: PathBuf,
        metrics_job: Option<String>,
        command: &[OsString],
    ) -> Result<(), String> {
        let settings = self;
        {
            if path.file_name().is_none() {
                return Err(format!(
                    "invalid value '{}' for --metrics-file: it names no file",
                    path.display()
                ));
            }
            if let Some(kind) = textfile::not_replaceable(&path) {
                return Err(format!(
                    "invalid value '{}' for --metrics-file: it is a {kind}, not a regular file",
                    path.display()
                ));
            }
            if path.extension().is_none_or(|e| e != "prom") {
                settings.warnings.push(format!(
                    "--metrics-file '{}' does not end in .prom: node_exporter's textfile \
                     collector reads only *.prom files",
                    path.display()
                ));
            }
            let job = match metrics_job {
                Some(job) if job.trim().is_empty() => {
                    return Err(format!(
                        "invalid value '{job}' for --metrics-job: it is empty"
                    ));
                }
                Some(job) => job,
                None => program(command),
            };
            settings.metrics = Some(Metrics {
                path,
                job,
                every_run: false,
            });
        }
        Ok(())
    }

    /// The trace part of [`Settings::new`], once the `OTEL_*` variables said something.
    #[cold]
    #[inline(never)]
    fn traces_from(
        &mut self,
        from_env: FromEnv,
        trace_args: bool,
        var: &dyn Fn(&str) -> Option<String>,
    ) {
        self.warnings.extend(from_env.warnings);
        if let Some(exporter) = from_env.exporter {
            let parent = var("TRACEPARENT").and_then(|v| SpanContext::parse(v.trim()));
            let tracestate = parent
                .and(var("TRACESTATE"))
                .and_then(|v| traceparent::tracestate(&v));
            self.traces = Some(Traces {
                exporter,
                parent,
                tracestate,
                args: trace_args,
            });
        }
    }
}

/// The file name of the command's program (`/usr/bin/curl` → `curl`), lossily as UTF-8.
pub fn program(command: &[OsString]) -> String {
    command
        .first()
        .map(|p| {
            Path::new(p)
                .file_name()
                .unwrap_or(p.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Settings from `--metrics-file` (`file`), `--metrics-job` (`job`) and the variables
    /// `vars`, for a run of `curl -f` (record.rs's tests use it too).
    pub(in crate::telemetry) fn settings(
        file: Option<&str>,
        job: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Settings, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::new(
            file.map(PathBuf::from),
            job.map(String::from),
            false,
            &["/usr/bin/curl".into(), "-f".into()],
            |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        )
    }

    #[test]
    fn nothing_is_set_up_without_the_flag_or_an_endpoint() {
        assert_eq!(
            settings(None, None, &[("TRACEPARENT", "x")]).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn the_job_is_the_program_unless_named_and_prom_is_expected() {
        let s = settings(Some("/d/x.prom"), None, &[]).unwrap();
        assert_eq!(s.metrics.unwrap().job, "curl");
        assert!(s.warnings.is_empty());
        let s = settings(Some("x.txt"), Some("nightly"), &[]).unwrap();
        assert_eq!(s.metrics.unwrap().job, "nightly");
        assert!(
            s.warnings[0].contains("does not end in .prom"),
            "{:?}",
            s.warnings
        );
        let err = settings(Some("x.prom"), Some(" "), &[]).unwrap_err();
        assert_eq!(err, "invalid value ' ' for --metrics-job: it is empty");
        let err = settings(Some("/"), None, &[]).unwrap_err();
        assert!(err.contains("--metrics-file"), "{err}");
    }

    #[test]
    fn the_parent_comes_from_a_valid_traceparent_only() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let s = settings(
            None,
            None,
            &[on, ("TRACEPARENT", good), ("TRACESTATE", "a=b")],
        )
        .unwrap();
        let traces = s.traces.unwrap();
        assert_eq!(traces.parent.unwrap().traceparent(), good);
        assert_eq!(traces.tracestate.as_deref(), Some("a=b"));
        let s = settings(
            None,
            None,
            &[on, ("TRACEPARENT", "junk"), ("TRACESTATE", "a=b")],
        )
        .unwrap();
        let traces = s.traces.unwrap();
        assert_eq!((traces.parent, traces.tracestate), (None, None));
    }
}
