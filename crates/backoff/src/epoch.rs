//! The times of shared state: wall-clock epoch milliseconds, never past [`MAX_TIME_MS`]. A leaf
//! of its own, below both the circuit breaker ([`crate::breaker`]) and the state that holds it
//! ([`crate::shared_state`], which re-exports both items under their old paths).

/// The latest time a state holds: 9999-12-31T23:59:59.999Z, in epoch milliseconds. RFC 3339
/// (<https://www.rfc-editor.org/rfc/rfc3339>) has four-digit years, so this is the last time it
/// can write; a stored time past it is corrupt.
pub const MAX_TIME_MS: u64 = 253_402_300_799_999;

/// `now_ms + ms`, never past [`MAX_TIME_MS`].
pub fn later(now_ms: u64, ms: u64) -> u64 {
    now_ms.saturating_add(ms).min(MAX_TIME_MS)
}
