//! The stored form of a [`SharedState`]: one JSON object with a format version, the same in
//! a file and in Redis. Unknown fields, a missing field or another version make it corrupt.
//!
//! ```json
//! {"version":1,"updated_ms":1767225600000,
//!  "tokens":{"milli":9000,"max_milli":10000,"stamp_ms":1767225600000},
//!  "breaker":{"consecutive":0,"open_until_ms":null,"probe":null},
//!  "not_before_ms":null}
//! ```
//!
//! `hint_len_ms` (how long the hint that set `not_before_ms` asked to wait) follows
//! `not_before_ms` only while a shared cooldown is stored; a state without it (any state of an
//! older version) decodes as before. Every time (`..._ms`) is at most
//! [`MAX_TIME_MS`] (9999-12-31T23:59:59.999Z); one past it makes the state corrupt, as does a
//! number that is not a plain integer of its type. The Redis store's script
//! (`redis_state.lua`) reads and writes this very form, byte for byte.

use serde::{Deserialize, Serialize};

use retry_tool_backoff::breaker::{CircuitBreaker, ProbeLease};
use retry_tool_backoff::shared_state::{MAX_TIME_MS, SharedState};
use retry_tool_backoff::throttle::TokenBucket;

/// A stored state larger than this is corrupt (a real one is about 250 bytes): the file store
/// and the Redis store (its script too) refuse to read or write one.
pub const MAX_STATE_BYTES: u64 = 64 * 1024;

/// The format version written, and the only one read.
pub const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    version: u32,
    updated_ms: u64,
    tokens: Option<WireTokens>,
    breaker: WireBreaker,
    not_before_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hint_len_ms: Option<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireTokens {
    milli: u32,
    max_milli: u32,
    stamp_ms: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireBreaker {
    consecutive: u32,
    open_until_ms: Option<u64>,
    probe: Option<WireProbe>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireProbe {
    id: u64,
    expires_ms: u64,
}

/// Serialises `state` (compact JSON, no trailing newline).
pub fn encode(state: &SharedState) -> Vec<u8> {
    let wire = Wire {
        version: VERSION,
        updated_ms: state.updated_ms,
        tokens: state.bucket.map(|b| {
            let (milli, max_milli, stamp_ms) = b.parts();
            WireTokens {
                milli,
                max_milli,
                stamp_ms,
            }
        }),
        breaker: WireBreaker {
            consecutive: state.breaker.consecutive,
            open_until_ms: state.breaker.open_until_ms,
            probe: state.breaker.probe.map(|p| WireProbe {
                id: p.id,
                expires_ms: p.expires_ms,
            }),
        },
        not_before_ms: state.not_before_ms,
        hint_len_ms: state.hint_len_ms,
    };
    // Plain structs of integers and options: serialising them cannot fail.
    serde_json::to_vec(&wire).unwrap_or_default()
}

/// Reads a stored state. Empty input (a file created but never written, or emptied by a
/// crash) is a fresh state.
///
/// # Errors
/// A one-line description when the bytes are not a state of [`VERSION`].
pub fn decode(bytes: &[u8]) -> Result<SharedState, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(SharedState::default());
    }
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => return Err(format!("format version {v}, expected {VERSION}")),
        None => return Err("no format version".into()),
    }
    let wire: Wire = serde_json::from_value(value).map_err(|e| format!("bad state: {e}"))?;
    let times = [
        ("updated_ms", Some(wire.updated_ms)),
        ("tokens.stamp_ms", wire.tokens.as_ref().map(|t| t.stamp_ms)),
        ("breaker.open_until_ms", wire.breaker.open_until_ms),
        (
            "breaker.probe.expires_ms",
            wire.breaker.probe.as_ref().map(|p| p.expires_ms),
        ),
        ("not_before_ms", wire.not_before_ms),
        ("hint_len_ms", wire.hint_len_ms),
    ];
    if let Some((name, Some(ms))) = times
        .iter()
        .find(|(_, t)| t.is_some_and(|t| t > MAX_TIME_MS))
    {
        return Err(format!(
            "{name} {ms} is past 9999-12-31T23:59:59.999Z ({MAX_TIME_MS})"
        ));
    }
    Ok(SharedState {
        bucket: wire
            .tokens
            .map(|t| TokenBucket::from_parts(t.milli, t.max_milli, t.stamp_ms)),
        breaker: CircuitBreaker {
            consecutive: wire.breaker.consecutive,
            open_until_ms: wire.breaker.open_until_ms,
            probe: wire.breaker.probe.map(|p| ProbeLease {
                id: p.id,
                expires_ms: p.expires_ms,
            }),
        },
        not_before_ms: wire.not_before_ms,
        hint_len_ms: wire.hint_len_ms,
        updated_ms: wire.updated_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::throttle::Throttle;

    #[test]
    fn round_trip() {
        let mut s = SharedState {
            bucket: Some(TokenBucket::full(&Throttle::default(), 7)),
            breaker: CircuitBreaker {
                consecutive: 3,
                open_until_ms: Some(9),
                probe: Some(ProbeLease {
                    id: u64::MAX,
                    expires_ms: 11,
                }),
            },
            not_before_ms: Some(12),
            hint_len_ms: Some(5),
            updated_ms: 13,
        };
        assert_eq!(decode(&encode(&s)).unwrap(), s);
        s.hint_len_ms = None;
        assert!(
            !String::from_utf8(encode(&s))
                .unwrap()
                .contains("hint_len_ms")
        );
        assert_eq!(decode(&encode(&s)).unwrap(), s);
        s = SharedState::default();
        assert_eq!(decode(&encode(&s)).unwrap(), s);
        assert_eq!(decode(b"").unwrap(), s);
    }

    #[test]
    fn corrupt_input_is_an_error() {
        for bad in [
            &b"{"[..],
            b"null",
            b"[]",
            b"{\"version\":2}",
            b"{\"version\":1}",
            b"\xff\xfe",
        ] {
            assert!(decode(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let mut extra: serde_json::Value =
            serde_json::from_slice(&encode(&SharedState::default())).unwrap();
        extra["surprise"] = serde_json::json!(1);
        assert!(decode(extra.to_string().as_bytes()).is_err());
    }

    #[test]
    fn times_past_year_9999_are_corrupt() {
        let state = |t: u64| {
            format!(
                r#"{{"version":1,"updated_ms":0,"tokens":null,"breaker":{{"consecutive":0,"open_until_ms":null,"probe":null}},"not_before_ms":{t}}}"#
            )
        };
        assert_eq!(
            decode(state(MAX_TIME_MS).as_bytes()).unwrap().not_before_ms,
            Some(MAX_TIME_MS)
        );
        let e = decode(state(MAX_TIME_MS + 1).as_bytes()).unwrap_err();
        assert!(e.contains("not_before_ms") && e.contains("9999"), "{e}");
    }

    #[test]
    fn an_older_state_decodes() {
        let text = r#"{"version":1,"updated_ms":1,"tokens":{"milli":9000,"max_milli":10000,"stamp_ms":1},"breaker":{"consecutive":0,"open_until_ms":null,"probe":{"id":18446744073709551615,"expires_ms":7}},"not_before_ms":9}"#;
        let s = decode(text.as_bytes()).unwrap();
        assert_eq!((s.not_before_ms, s.hint_len_ms), (Some(9), None));
        assert_eq!(s.breaker.probe.unwrap().id, u64::MAX);
        assert_eq!(encode(&s), text.as_bytes(), "written back the same");
    }

    #[test]
    fn hand_edited_counts_are_clamped() {
        let text = r#"{"version":1,"updated_ms":0,"tokens":{"milli":99999,"max_milli":10000,"stamp_ms":0},"breaker":{"consecutive":0,"open_until_ms":null,"probe":null},"not_before_ms":null}"#;
        let s = decode(text.as_bytes()).unwrap();
        assert_eq!(s.bucket.unwrap().tokens(), 10.0);
    }
}
