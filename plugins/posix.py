"""POSIX helpers for platform plugins, public and kept stable (docs/plugins.md, "Helpers").

    from agent_tty_plugins.posix import spawn_in_pty, signal_group, probe_group, Probe, procfs

- `spawn_in_pty(request, before_exec=None, held=False, fork=None)`: fork, setsid and exec
  `request.argv` in a new PTY. `before_exec` runs in the child after setsid and before exec: place
  the program in your group there, so it runs no code of its own outside it. `fork`, when given,
  is called instead of os.fork (a fork that starts the child already in its group). With `held=True` the program waits
  before its exec until the handle's `release()` (the host calls it once program.json names the
  program: return the handle itself). Returns a ProgramHandle that never signals (every signal
  goes through your kill_group). Errors come back as OSError: "not found" from spawn, an exec
  error from `release()` when held.
- `signal_group(pgid, signal) -> Probe`: killpg that refuses group ids 0, 1 and negative ones
  (which would widen the kill to our own group or every process) and tells FOUND, NONE (ESRCH)
  and DENIED (EPERM: a member of another user; never read that as gone). Call it only right
  after the proof that the group is the session's.
- `probe_group(pgid) -> Probe`: the same with signal 0 (zombies count as FOUND).
- `procfs` (Linux): `read_stat(pid)` (state, ppid, pgid, session, start time), `read_real_uid`,
  `scan_group(pgid)`, `scan_session(sid)`, `boot_id()`, `pid_namespace(pid)`,
  `proc_shows_own_pid_space()`. Each returns None (or an empty scan) for a process that ended;
  the reads of one process (read_stat, read_real_uid, read_autogroup) raise PermissionError when
  /proc refuses them and any other OSError they meet (EMFILE, ...): none of those proves it gone.

The built-in plugins use these same functions; their implementation lives in `_posix`.
"""

from agent_tty_plugins._posix import procfs
from agent_tty_plugins._posix.groups import Probe, probe_group, signal_group
from agent_tty_plugins._posix.pty_spawn import PosixPty, spawn_in_pty

__all__ = ["PosixPty", "Probe", "probe_group", "procfs", "signal_group", "spawn_in_pty"]
