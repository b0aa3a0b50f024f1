//! The W3C Trace Context `traceparent` value (<https://www.w3.org/TR/trace-context/#traceparent-header>),
//! as the OpenTelemetry environment carriers `TRACEPARENT` and `TRACESTATE` hand it from a
//! parent process to its children ("Environment Variables as Context Propagation Carriers",
//! <https://opentelemetry.io/docs/specs/otel/context/env-carriers/>).

/// The identity of one span: which trace, which span, and the trace flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanContext {
    /// The trace id: 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// The span id: 8 bytes, not all zero.
    pub span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

/// The flag that says the parent recorded its span (`sampled`).
pub const SAMPLED: u8 = 0x01;

/// The longest `tracestate` passed on: the specification lets a vendor truncate past 512
/// characters; retry drops a longer one rather than cut an entry in half.
pub const MAX_TRACESTATE: usize = 512;

impl SpanContext {
    /// `traceparent` for this span: version `00`, lowercase hex, as in
    /// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            hex(&self.trace_id),
            hex(&self.span_id),
            self.flags
        )
    }

    /// Reads a `traceparent` value. Version `00` must be exactly 55 characters; a later
    /// version is read by its first four fields, as the specification asks, when what follows
    /// them starts with `-`. `None` for anything else: uppercase hex, version `ff`, an all-zero
    /// trace or span id, a wrong length.
    pub fn parse(value: &str) -> Option<SpanContext> {
        let bytes = value.as_bytes();
        if bytes.len() < 55 {
            return None;
        }
        let version = from_hex::<1>(value.get(..2)?)?[0];
        if version == 0xff || (version == 0 && bytes.len() != 55) {
            return None;
        }
        if bytes.len() > 55 && bytes[55] != b'-' {
            return None;
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let trace_id = from_hex::<16>(value.get(3..35)?)?;
        let span_id = from_hex::<8>(value.get(36..52)?)?;
        let flags = from_hex::<1>(value.get(53..55)?)?[0];
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(SpanContext {
            trace_id,
            span_id,
            flags,
        })
    }
}

/// A `tracestate` worth passing on: at most [`MAX_TRACESTATE`] characters of visible ASCII,
/// spaces, tabs and commas (the header's character set); `None` otherwise or when empty.
pub fn tracestate(value: &str) -> Option<String> {
    let ok = !value.trim().is_empty()
        && value.len() <= MAX_TRACESTATE
        && value
            .bytes()
            .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    ok.then(|| value.to_string())
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` bytes from exactly `2 * N` lowercase hex digits.
fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in digits.chunks(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC_EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_specification_example_reads_and_writes_back() {
        let context = SpanContext::parse(SPEC_EXAMPLE).unwrap();
        assert_eq!(
            context.span_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert_eq!(context.trace_id[0], 0x4b);
        assert_eq!(context.flags, SAMPLED);
        assert_eq!(context.traceparent(), SPEC_EXAMPLE);
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            "",
            "00",
            &SPEC_EXAMPLE.to_uppercase(),
            &SPEC_EXAMPLE.replace("00-4b", "ff-4b"),
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            &format!("{SPEC_EXAMPLE}-extra"),
            &SPEC_EXAMPLE.replace('-', "_"),
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01é",
        ] {
            assert_eq!(SpanContext::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_later_version_is_read_by_its_first_fields() {
        let later = SPEC_EXAMPLE.replacen("00", "cc", 1);
        assert!(SpanContext::parse(&later).is_some());
        assert!(SpanContext::parse(&format!("{later}-what-next")).is_some());
        assert!(SpanContext::parse(&format!("{later}x")).is_none());
    }

    #[test]
    fn tracestate_is_passed_on_within_bounds() {
        assert_eq!(
            tracestate("congo=t61rcWkgMzE").as_deref(),
            Some("congo=t61rcWkgMzE")
        );
        assert_eq!(tracestate(""), None);
        assert_eq!(tracestate(&"a=b,".repeat(200)), None);
        assert_eq!(tracestate("a=\u{7f}"), None);
        assert_eq!(tracestate("a=b\nc=d"), None);
    }
}
