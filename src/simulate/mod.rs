//! `retry --simulate`: the way from the command line (its "Simulation" flags are
//! [`crate::cli::SimulateArgs`]) to the contention simulator of the `retry-tool-simulate` crate
//! ([`retry_tool_simulate`]).

mod common;
mod dispatch;
mod failure_rate;

pub use dispatch::run_cli;
