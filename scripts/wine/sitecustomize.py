"""Test harness only (scripts/test-wine puts it in the Windows CPython under Wine): Wine 8 gives a
process started in a pseudo console its parent's console handles as standard handles, where
Windows gives it the pseudo console's, so a program's output would leave past the ConPTY.
Where AGENT_TTY_WINE_STDFIX=1, the plugin's trampoline (the first process in the pseudo
console, which starts the program with its handles) points its standard handles at the console
it is attached to, as Windows would have. Newer Wine does this itself."""

import os
import sys

TRAMPOLINE = "agent_tty_plugins.windows_conpty.trampoline"

if os.environ.get("AGENT_TTY_WINE_STDFIX") == "1" and os.name == "nt" and TRAMPOLINE in sys.orig_argv:
    import ctypes
    from ctypes import wintypes

    def _point_std_handles_at_own_console() -> None:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateFileW.restype = wintypes.HANDLE
        kernel32.CreateFileW.argtypes = [
            wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p, wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE,
        ]
        kernel32.SetStdHandle.argtypes = [wintypes.DWORD, wintypes.HANDLE]

        class Attributes(ctypes.Structure):
            _fields_ = [("nLength", ctypes.c_uint32), ("descriptor", ctypes.c_void_p), ("inherit", ctypes.c_int32)]

        inheritable = Attributes(ctypes.sizeof(Attributes), None, True)
        invalid = ctypes.c_void_p(-1).value
        read_write, share, existing = 0xC0000000, 0x3, 3
        output = kernel32.CreateFileW("CONOUT$", read_write, share, ctypes.byref(inheritable), existing, 0, None)
        given = kernel32.CreateFileW("CONIN$", read_write, share, ctypes.byref(inheritable), existing, 0, None)
        if output and output != invalid and given and given != invalid:
            kernel32.SetStdHandle(-10 & 0xFFFFFFFF, given)
            kernel32.SetStdHandle(-11 & 0xFFFFFFFF, output)
            kernel32.SetStdHandle(-12 & 0xFFFFFFFF, output)

    _point_std_handles_at_own_console()
