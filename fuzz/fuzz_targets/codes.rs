//! Fuzz target: CODES lists (`"...".parse::<retry::codes::CodeSet>()`) on any string.
//!
//! Never panics; an accepted list round-trips: the set written back as a plain list of its
//! statuses parses to the same set; errors are one non-empty line (unless the input holds a
//! line break).

#![no_main]

use libfuzzer_sys::fuzz_target;
use retry::codes::CodeSet;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<CodeSet>() {
        Ok(set) => {
            let members: Vec<String> = (0..=255u8)
                .filter(|c| set.contains(*c))
                .map(|c| c.to_string())
                .collect();
            assert!(!members.is_empty(), "{text:?} parsed to an empty set");
            let again: CodeSet = members.join(",").parse().expect("a plain list parses");
            assert_eq!(again, set, "round trip of {text:?}");
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
