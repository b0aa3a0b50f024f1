//! What every attempt and hook of a run is told besides its number: the run's id and the time
//! left until `--deadline`.

use std::time::Instant;

use super::Supervisor;
use crate::duration::format_secs;

/// A new run id: 128 random bits from the operating system ([`crate::entropy::seed`], twice),
/// as 32 lowercase hex digits.
/// Unique per run, the same for every attempt of it: the value for an `Idempotency-Key` header
/// (<https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/>), so a server
/// can tell a retried request from a new one.
pub(super) fn new_run_id() -> String {
    format!(
        "{:016x}{:016x}",
        crate::entropy::seed(),
        crate::entropy::seed()
    )
}

impl Supervisor<'_> {
    /// `RETRY_RUN_ID`, and `RETRY_TIME_LEFT`: seconds (three decimals) until the deadline from
    /// now, `0.000` once it has passed, empty without a deadline.
    pub(super) fn run_env(&self) -> [(&'static str, String); 2] {
        [
            ("RETRY_RUN_ID", self.run_id.clone()),
            ("RETRY_TIME_LEFT", time_left(self.deadline, Instant::now())),
        ]
    }
}

/// The seconds from `now` to `deadline`, as `RETRY_TIME_LEFT` gives them.
fn time_left(deadline: Option<Instant>, now: Instant) -> String {
    deadline.map_or_else(String::new, |d| {
        format_secs(d.saturating_duration_since(now))
            .trim_end_matches('s')
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn run_ids_are_128_bits_of_hex_and_differ() {
        let (a, b) = (new_run_id(), new_run_id());
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    #[test]
    fn time_left_is_seconds_or_empty() {
        let now = Instant::now();
        assert_eq!(time_left(None, now), "");
        assert_eq!(
            time_left(Some(now + Duration::from_millis(12_345)), now),
            "12.345"
        );
        assert_eq!(time_left(Some(now), now + Duration::from_secs(1)), "0.000");
    }
}
