//! The `retry` binary: parse, run, and end with the status retry owes its caller.

use std::process::ExitCode;

fn main() -> ExitCode {
    retry::finish(retry::run(std::env::args_os()))
}
