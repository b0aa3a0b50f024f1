/* A TEST-ONLY stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks: Rust's standard
 * library imports ProcessPrng from it since Rust 1.78 (its random seed for HashMap and the
 * like), so no Rust program for x86_64-pc-windows-gnu starts under Wine 8 without it. .ci/windows
 * builds it with mingw-w64 into the Wine prefix's system32 for the Windows suite (tests/wine.rs);
 * it is never shipped, and Windows itself has the real one.
 *
 * ProcessPrng (https://learn.microsoft.com/en-us/windows/win32/seccng/processprng):
 *   BOOL ProcessPrng(PBYTE pbData, SIZE_T cbData); always returns TRUE.
 * It is served here by RtlGenRandom, exported by advapi32.dll as SystemFunction036
 * (https://learn.microsoft.com/en-us/windows/win32/api/ntsecapi/nf-ntsecapi-rtlgenrandom),
 * which takes a ULONG length: a larger request is filled in pieces.
 *
 * Build (.ci/windows):
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c \
 *       bcryptprimitives.def -ladvapi32
 */
#include <windows.h>

/* RtlGenRandom's real name; the SDK's ntsecapi.h declares it only under that macro name. */
BOOLEAN WINAPI SystemFunction036(PVOID RandomBuffer, ULONG RandomBufferLength);

/* Fills cbData bytes at pbData with random bytes; TRUE, or FALSE if RtlGenRandom failed
 * (which the real ProcessPrng never reports: the caller, Rust's std, does not look). */
BOOL WINAPI ProcessPrng(PBYTE pbData, SIZE_T cbData)
{
    while (cbData > 0) {
        ULONG chunk = cbData > 0x80000000u ? 0x80000000u : (ULONG)cbData;
        if (!SystemFunction036(pbData, chunk))
            return FALSE;
        pbData += chunk;
        cbData -= chunk;
    }
    return TRUE;
}
