//! Integration tests through the built `retry` binary: one test binary, a module per concern.

mod helpers;
#[path = "../common/redis_server.rs"]
mod redis_server;
#[path = "../common/tools.rs"]
mod tools;

mod breaker;
mod budget;
mod budget_hostile;
mod budget_waits;
mod chronic;
mod cli_errors;
mod closing;
mod colour;
mod completions;
mod countdown;
mod countdown_screen;
mod dry_run;
mod ecosystem;
mod env_file;
mod events;
mod fake_redis;
#[cfg(target_os = "linux")]
mod fallbacks;
mod fatal_signals;
mod faults;
mod faults_edges;
mod faults_io;
mod faults_proc;
mod fidelity;
mod folds;
mod generated;
mod github;
mod hints_hostile;
mod hooks;
mod hostile;
mod http;
mod http_hints;
mod idle;
mod leftover_output;
mod links;
mod lock;
mod loops;
mod metrics;
mod newcomer;
mod outcomes;
mod pipeline;
mod readme;
mod readme_ci;
mod readme_examples;
mod readme_loops;
mod run_context;
mod run_end;
mod security;
mod signals;
mod simulate;
mod simulate_failure_rate;
mod splay;
mod step_summary;
mod stop_latency;
mod telemetry_off;
mod terminal;
mod timeout_compat;
mod timeouts;
mod traces;
