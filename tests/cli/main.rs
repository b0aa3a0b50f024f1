//! Integration tests through the built `retry` binary: one test binary, a module per concern.

mod helpers;

mod backoff_props;
mod cli_errors;
mod dry_run;
mod ecosystem;
mod generated;
mod hostile;
mod http;
mod outcomes;
mod pipeline;
mod signals;
mod terminal;
mod timeouts;
