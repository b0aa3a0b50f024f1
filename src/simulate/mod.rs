//! `retry --simulate`: the "Simulation" flags, and the way from the command line to the
//! contention simulator of the `retry-tool-simulate` crate ([`retry_tool_simulate`]).

mod args;
mod dispatch;
mod failure_rate;

pub use args::{ModelName, SimulateArgs};
pub use dispatch::run_cli;
