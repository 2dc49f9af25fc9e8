/* A stand-in for Windows's bcryptprimitives.dll, which Wine 8 lacks: the Rust standard library
   (pywinpty, pydantic-core) imports ProcessPrng from it. Test harness only (scripts/wine/setup). */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
