//! Fuzz target: `retry::duration::parse_duration` on any string.
//!
//! Never panics; what it accepts is a finite duration that formats; a bare number of seconds
//! it accepts is non-negative and finite; it is deterministic and ignores surrounding blanks;
//! errors are one non-empty line (unless the input holds a line break).

#![no_main]

use libfuzzer_sys::fuzz_target;
use retry::duration::{format_secs, parse_duration};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_duration(text);
    assert_eq!(parsed, parse_duration(text), "not deterministic: {text:?}");
    assert_eq!(
        parsed,
        parse_duration(&format!(" {text}\t")),
        "blanks around {text:?} changed the result"
    );
    match parsed {
        Ok(d) => {
            let shown = format_secs(d);
            assert!(shown.ends_with('s'), "{text:?} formats as {shown:?}");
            if let Ok(secs) = text.trim().parse::<f64>() {
                assert!(
                    secs.is_finite() && secs >= 0.0,
                    "{text:?} accepted as {d:?}"
                );
            }
        }
        Err(message) => {
            assert!(!message.is_empty(), "empty error for {text:?}");
            // The message may quote the input; it adds no line break of its own.
            assert!(
                text.contains(['\n', '\r']) || !message.contains(['\n', '\r']),
                "multi-line error for {text:?}: {message:?}"
            );
        }
    }
});
