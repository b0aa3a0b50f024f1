//! Integration tests through the built `retry` binary: one test binary, a module per concern.

mod helpers;

mod cli_errors;
mod dry_run;
mod ecosystem;
mod events;
mod faults;
mod faults_edges;
mod faults_io;
mod faults_proc;
mod fidelity;
mod generated;
mod hooks;
mod hostile;
mod http;
mod outcomes;
mod pipeline;
mod readme;
mod security;
mod signals;
mod simulate;
mod simulate_failure_rate;
mod terminal;
mod timeouts;
