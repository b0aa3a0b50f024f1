//! Integration tests through the built `retry` binary: one test binary, a module per concern.
//! Unix only: they drive the Unix binary with signals, process groups and terminals (the
//! Windows binary has its own suite, run under Wine by `.ci/windows`).
#![cfg(unix)]

mod helpers;
#[path = "../common/redis_server.rs"]
mod redis_server;
#[path = "../common/tools.rs"]
mod tools;

mod breaker;
mod budget;
mod budget_waits;
mod chronic;
mod chronic_order;
mod cli_errors;
mod closing;
mod colour;
mod completions;
mod countdown;
mod countdown_screen;
mod dry_run;
mod ecosystem;
mod ecosystem_conventions;
mod env_file;
mod events;
mod events_carry;
mod fake_redis;
#[cfg(target_os = "linux")]
mod fallbacks;
mod fatal_signals;
mod fidelity;
mod folds;
mod forever;
mod forever_adversarial;
mod forever_ends;
mod forever_signals;
mod generated;
mod github;
mod hooks;
mod http;
mod http_clients;
mod http_hints;
mod http_status;
mod http_status_hostile;
mod http_status_sets;
mod idle;
mod leftover_output;
mod leftover_output_relay;
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
mod linkage;
mod links;
mod lock;
mod loops;
mod metrics;
mod metrics_shared;
mod newcomer;
mod one_pipe;
mod outcomes;
mod pipeline;
mod readme;
mod readme_ci;
mod readme_examples;
mod readme_loops;
mod release_zip;
mod robust_input;
mod robust_input_values;
mod robust_pipes;
mod robust_security;
mod robust_servers;
mod robust_signals;
mod robust_soak;
mod robust_stdin;
mod robust_stores;
mod robust_terminal;
mod robust_trees;
mod run_context;
mod run_end;
mod signals;
mod simulate;
mod simulate_failure_rate;
mod splay;
mod step_summary;
mod stop_latency;
mod telemetry_off;
mod terminal;
mod tidy;
mod tidy_layers;
mod timeout_compat;
mod timeout_compat_durations;
mod timeouts;
mod traces;
mod traces_export;
mod transient;
mod transient_curl;
mod words;
