//! SIZE values on the command line (`--max-replay`, `--max-output`): a number of bytes with an
//! optional unit, parsed by the `parse-size` crate (<https://docs.rs/parse-size>), and their
//! display.

/// Parses a SIZE: a non-negative number of bytes, optionally fractional, with an optional unit,
/// case-insensitive, the `B` optional: `K`, `M`, `G`, `T`, `P`, `E` are powers of 1000 (SI) and
/// `Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei` powers of 1024 (IEC 80000-13). `10000`, `512MiB`, `1.5G`,
/// `4 GiB` are sizes. Fractions of a byte are rounded to the nearest byte.
///
/// # Errors
/// A message (without the flag's name, which the caller adds) for anything else, including
/// negative values and values past `u64::MAX` bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err("a size cannot be negative".into());
    }
    parse_size::parse_size(text).map_err(|e| match e {
        parse_size::Error::PosOverflow => format!("'{text}' is more bytes than retry can count"),
        _ => format!(
            "'{text}' is not a size (expected bytes with an optional unit: 10000, 512MiB, 1.5G, \
             4GiB)"
        ),
    })
}

/// Formats a byte count for messages: in the largest binary unit that divides it exactly
/// (`4 GiB`, `512 MiB`), else in bytes (`1500000 bytes`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u32); 6] = [
        ("EiB", 60),
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ];
    for (unit, shift) in UNITS {
        if bytes != 0 && bytes.trailing_zeros() >= shift {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    if bytes == 1 {
        "1 byte".into()
    } else {
        format!("{bytes} bytes")
    }
}

/// Formats a byte count for people: bytes below 1 KiB, else one decimal in the largest binary
/// unit it reaches (`960.0 MiB`, `1.5 GiB`), rounded down so it never says more than there is.
pub fn format_size_roughly(bytes: u64) -> String {
    const UNITS: [(&str, u32); 6] = [
        ("EiB", 60),
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ];
    for (unit, shift) in UNITS {
        if bytes >> shift > 0 {
            let tenths = (u128::from(bytes) * 10) >> shift;
            return format!("{}.{} {unit}", tenths / 10, tenths % 10);
        }
    }
    format_size(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_si_and_iec_units() {
        assert_eq!(parse_size("10000"), Ok(10_000));
        assert_eq!(parse_size("1k"), Ok(1000));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("1.5G"), Ok(1_500_000_000));
        assert_eq!(parse_size("4 GiB"), Ok(4 << 30));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "",
            "-1",
            "abc",
            "1x",
            "1 ZiB",
            "99999999999999999999",
            "1..2",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn formats_exact_units_or_bytes() {
        assert_eq!(format_size(4 << 30), "4 GiB");
        assert_eq!(format_size(1536 << 10), "1536 KiB");
        assert_eq!(format_size(1 << 20), "1 MiB");
        assert_eq!(format_size(1_000_000), "1000000 bytes");
        assert_eq!(format_size(1), "1 byte");
        assert_eq!(format_size(0), "0 bytes");
    }

    #[test]
    fn formats_roughly_for_people() {
        assert_eq!(format_size_roughly(960 << 20), "960.0 MiB");
        assert_eq!(format_size_roughly((3 << 30) / 2), "1.5 GiB");
        assert_eq!(format_size_roughly((1 << 20) - 1), "1023.9 KiB");
        assert_eq!(format_size_roughly(1023), "1023 bytes");
        assert_eq!(format_size_roughly(u64::MAX), "15.9 EiB");
    }
}
