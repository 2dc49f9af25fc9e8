"""Spawn: make the session's job, start the program in it through ConPTY, hold the job."""

from __future__ import annotations

from agent_tty.platform.types import SpawnRequest
from agent_tty_plugins.windows_conpty import job, layer
from agent_tty_plugins.windows_conpty.conpty import ConPtyHandle


def spawn(request: SpawnRequest) -> ConPtyHandle:
    win = layer.current()
    name = job.new_name(request.session_id)
    handle = win.create_job(name)  # FileExistsError (an OSError) when the name is taken
    try:
        pty = win.spawn_in_job(name, request.argv, request.env, request.cwd, request.cols, request.rows)
    except BaseException:
        win.close_handle(handle)  # nothing joined it yet, or whatever did ends with it
        raise
    # The host's handle keeps the job and its name alive until release_group lets it go.
    job.hold(pty.pid, job.Held(name, handle, request.session_id))
    return ConPtyHandle(pty)
