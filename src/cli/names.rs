//! The names clap derives for the values of a `ValueEnum` flag, as the command line takes them.

use clap::ValueEnum;

/// The name of a value of a `ValueEnum` flag (`--jitter`, `--preset`, `--generate`, `--model`)
/// on the command line, as clap derives it.
pub fn value_name<T: ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}
