"""Helpers shared by the POSIX plugins: PTY spawn, /proc reads, guarded group signals.

Every module imports cleanly on every OS; OS-only calls happen inside functions.
"""
