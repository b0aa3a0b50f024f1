//! How the binary users run is linked on glibc, read from its ELF headers: a dynamically
//! linked build (`cargo build --release`, `cargo install --path .`) is position-dependent (no
//! relative relocations to apply at every start) and needs no `libm.so.6` (retry defines the
//! four functions it used, `src/math_symbols.rs`); `build.rs` says why. A static binary (the
//! release archive's, the AArch64 one under qemu) has neither to check.

use crate::helpers::release::release_bin;

/// `ET_EXEC` and `ET_DYN` (a PIE), `PT_LOAD`, `PT_DYNAMIC`, `PT_INTERP`, `DT_NEEDED`,
/// `DT_STRTAB` (the ELF specification, <https://refspecs.linuxfoundation.org/elf/gabi4+/ch4.eheader.html>).
const ET_EXEC: u16 = 2;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;

/// The little-endian integer of `N` bytes at `at`.
fn int<const N: usize>(elf: &[u8], at: usize) -> u64 {
    let bytes: [u8; N] = elf[at..at + N].try_into().unwrap();
    bytes
        .iter()
        .rev()
        .fold(0, |value, byte| (value << 8) | u64::from(*byte))
}

/// The ELF file's type, whether it has a program interpreter (it is dynamically linked), and
/// the libraries its dynamic section names (`DT_NEEDED`). A 64-bit little-endian file only.
fn linkage(elf: &[u8]) -> (u16, bool, Vec<String>) {
    assert_eq!(
        &elf[..6],
        b"\x7fELF\x02\x01",
        "a 64-bit little-endian ELF file"
    );
    let e_type = int::<2>(elf, 16) as u16;
    let (phoff, phentsize, phnum) = (
        int::<8>(elf, 0x20) as usize,
        int::<2>(elf, 0x36) as usize,
        int::<2>(elf, 0x38) as usize,
    );
    // (type, offset, address, size in the file) of each program header.
    let headers: Vec<(u32, usize, u64, u64)> = (0..phnum)
        .map(|i| phoff + i * phentsize)
        .map(|h| {
            let kind = int::<4>(elf, h) as u32;
            (
                kind,
                int::<8>(elf, h + 8) as usize,
                int::<8>(elf, h + 16),
                int::<8>(elf, h + 32),
            )
        })
        .collect();
    let interp = headers.iter().any(|h| h.0 == PT_INTERP);
    let Some(&(_, dynamic, _, size)) = headers.iter().find(|h| h.0 == PT_DYNAMIC) else {
        return (e_type, interp, Vec::new());
    };
    let entries: Vec<(u64, u64)> = (0..size as usize / 16)
        .map(|i| {
            (
                int::<8>(elf, dynamic + 16 * i),
                int::<8>(elf, dynamic + 16 * i + 8),
            )
        })
        .collect();
    let strtab = entries.iter().find(|e| e.0 == DT_STRTAB).unwrap().1;
    // The string table's file offset, from the loaded segment that holds its address.
    let (_, offset, vaddr, _) = headers
        .iter()
        .find(|h| h.0 == PT_LOAD && (h.2..h.2 + h.3).contains(&strtab))
        .unwrap();
    let strings = offset + (strtab - vaddr) as usize;
    let needed = entries
        .iter()
        .filter(|e| e.0 == DT_NEEDED)
        .map(|e| {
            let name = &elf[strings + e.1 as usize..];
            let end = name.iter().position(|b| *b == 0).unwrap();
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect();
    (e_type, interp, needed)
}

#[test]
fn a_dynamic_build_is_position_dependent_and_needs_no_libm() {
    let elf = std::fs::read(release_bin()).unwrap();
    // x86-64 (62): the AArch64 binary under qemu is static, and built elsewhere.
    if int::<2>(&elf, 0x12) != 62 {
        return;
    }
    let (e_type, dynamic, needed) = linkage(&elf);
    if !dynamic {
        // The static build: no loader work to spare.
        return;
    }
    assert!(needed.iter().any(|n| n == "libc.so.6"), "{needed:?}");
    assert!(!needed.iter().any(|n| n.starts_with("libm.")), "{needed:?}");
    if option_env!("RETRY_PIE") != Some("1") {
        assert_eq!(e_type, ET_EXEC, "a position-dependent executable");
    }
}
