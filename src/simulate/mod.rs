//! `retry --simulate`: the way from the command line (its "Simulation" flags are
//! [`crate::cli::SimulateArgs`]) to the contention simulator of the `retry-tool-simulate` crate
//! ([`retry_tool_simulate`]).

mod dispatch;
mod failure_rate;

pub use dispatch::run_cli;

/// The curve of `p` before jitter, as the simulator's headings show it: `base 1s, multiplier
/// 2, cap 64s`, or `delays [1s, 5s]` for a list (`--delays`).
fn curve(p: &crate::backoff::Policy) -> String {
    match p.delays() {
        Some(delays) => format!("delays {delays:?}"),
        None => format!(
            "base {:?}, multiplier {}, cap {:?}",
            p.base(),
            p.multiplier(),
            p.cap()
        ),
    }
}
