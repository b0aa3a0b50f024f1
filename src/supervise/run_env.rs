//! What every attempt and hook of a run is told besides its number: the run's id and the time
//! left until `--deadline`.

use std::time::Duration;

use super::Supervisor;
use crate::duration::seconds_value;

/// A new run id: a version 4 UUID (RFC 9562, section 5.4,
/// <https://www.rfc-editor.org/rfc/rfc9562#name-uuid-version-4>) in its canonical text form,
/// `xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx` in lowercase hex, from 128 random bits of the operating
/// system ([`crate::entropy::seed`], twice) with the version and variant bits set by the `uuid`
/// crate. Unique per run, the same for every attempt of it: the value for an `Idempotency-Key`
/// header (<https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/>), so a
/// server can tell a retried request from a new one, a healthchecks.io `rid`, and the trace's
/// `retry.run_id`.
pub(super) fn new_run_id() -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&crate::entropy::seed().to_le_bytes());
    bytes[8..].copy_from_slice(&crate::entropy::seed().to_le_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

impl Supervisor<'_> {
    /// What an attempt and a hook both get, the one after attempt `attempt` (or attempt
    /// `attempt` itself): `RETRY_ATTEMPT`, `RETRY_MAX_ATTEMPTS` (empty when unlimited),
    /// `RETRY_RUN_ID`, and `RETRY_TIME_LEFT`: seconds (three decimals) until the deadline from
    /// now, `0.000` once it has passed, empty without a deadline.
    pub(super) fn run_env(&self, attempt: u64) -> Vec<(&'static str, String)> {
        let max = self
            .max_attempts()
            .map(|m| m.to_string())
            .unwrap_or_default();
        vec![
            ("RETRY_ATTEMPT", attempt.to_string()),
            ("RETRY_MAX_ATTEMPTS", max),
            ("RETRY_RUN_ID", self.run_id.to_string()),
            ("RETRY_TIME_LEFT", time_left(self.time_left())),
        ]
    }
}

/// The time `left` until the deadline (`None`: none), as `RETRY_TIME_LEFT` gives it.
fn time_left(left: Option<Duration>) -> String {
    left.map_or_else(String::new, seconds_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn run_ids_are_version_4_uuids_and_differ() {
        let (a, b) = (new_run_id(), new_run_id());
        assert_ne!(a, b);
        for id in [&a, &b] {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(parsed.get_version_num(), 4, "{id}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{id}");
            // The canonical form: 8-4-4-4-12 lowercase hex digits.
            assert_eq!(id.len(), 36);
            let groups: Vec<usize> = id.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12]);
            assert!(
                id.bytes()
                    .all(|c| c == b'-' || c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
            );
            assert_eq!(&id[14..15], "4");
        }
    }

    #[test]
    fn time_left_is_seconds_or_empty() {
        assert_eq!(time_left(None), "");
        assert_eq!(time_left(Some(Duration::from_millis(12_345))), "12.345");
        assert_eq!(time_left(Some(Duration::ZERO)), "0.000");
    }
}
