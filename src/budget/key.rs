//! Budget KEYs (`--budget KEY`): any byte string of 1 to [`MAX_KEY_BYTES`] bytes, and its safe
//! forms as a file name and as a Redis key. The KEY itself ([`BudgetKey`]) is one of the small
//! values the command line parses ([`crate::types`]); its forms in the stores are the budget's.

use std::hash::Hasher;

pub use crate::types::{BudgetKey, MAX_KEY_BYTES};

/// Encoded file names longer than this are shortened (prefix plus hash): `NAME_MAX` is 255 on
/// Linux and the store adds a suffix of up to 5 bytes.
const MAX_FILE_STEM: usize = 200;

/// The namespace of every Redis key retry writes: `retry:budget:KEY`.
pub const REDIS_PREFIX: &[u8] = b"retry:budget:";

impl BudgetKey {
    /// A file-name stem that is safe for any KEY: ASCII letters, digits, `_` and `-` as they
    /// are, every other byte as `%XX` (so the stem never contains `/` or `.` and is never
    /// `.` or `..`); distinct KEYs give distinct stems. A stem that would be longer than 200
    /// bytes keeps its first 180 and appends `~` and the 64-bit FNV-1a hash of the whole KEY
    /// in hex.
    pub fn file_stem(&self) -> String {
        let mut stem = String::with_capacity(self.as_bytes().len() * 3);
        let mut cut = None;
        for &b in self.as_bytes() {
            if stem.len() <= 180 {
                cut = Some(stem.len());
            }
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
                stem.push(char::from(b));
            } else {
                stem.push_str(&format!("%{b:02X}"));
            }
        }
        if stem.len() > MAX_FILE_STEM {
            let mut hasher = fnv::FnvHasher::default();
            hasher.write(self.as_bytes());
            stem.truncate(cut.unwrap_or(0));
            stem.push_str(&format!("~{:016x}", hasher.finish()));
        }
        stem
    }

    /// The Redis key: [`REDIS_PREFIX`] then the KEY's bytes (Redis keys are binary-safe).
    pub fn redis_key(&self) -> Vec<u8> {
        [REDIS_PREFIX, self.as_bytes()].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe_names() {
        let k = |b: &[u8]| BudgetKey::new(b).unwrap().file_stem();
        assert_eq!(k(b"api-prod_1"), "api-prod_1");
        assert_eq!(k(b"."), "%2E");
        assert_eq!(k(b".."), "%2E%2E");
        assert_eq!(k(b"../etc/passwd"), "%2E%2E%2Fetc%2Fpasswd");
        assert_eq!(k(b"a b\n\0\xff"), "a%20b%0A%00%FF");
        assert_eq!(k(b"%41"), "%2541");
        assert_ne!(k(b"%41"), k(b"A"));
    }

    #[test]
    fn long_keys_are_shortened_and_stay_distinct() {
        let a = BudgetKey::new(vec![b'/'; 255]).unwrap().file_stem();
        let mut other = vec![b'/'; 255];
        other[254] = b'.';
        let b = BudgetKey::new(other).unwrap().file_stem();
        assert!(a.len() <= MAX_FILE_STEM, "{}", a.len());
        assert_ne!(a, b);
        assert!(!a.contains('/') && !a.contains('.'));
        let plain = BudgetKey::new(vec![b'x'; 255]).unwrap().file_stem();
        assert!(plain.len() <= MAX_FILE_STEM);
    }

    #[test]
    fn bad_keys() {
        assert!(BudgetKey::new(Vec::new()).is_err());
        assert!(BudgetKey::new(vec![b'a'; 256]).is_err());
        assert_eq!(
            BudgetKey::new(b"x".to_vec()).unwrap().redis_key(),
            b"retry:budget:x"
        );
        assert_eq!(
            BudgetKey::new(b"a\nb".to_vec()).unwrap().to_string(),
            "a\\nb"
        );
    }
}
