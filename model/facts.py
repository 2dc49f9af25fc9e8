"""Reads from our code what the model assumes: each guard, the status policy, a hash of each
covered function and the call sites of every writer, kill and recursive remove.

Everything is read from the syntax tree (`ast`), so comments and layout change nothing: a
guard is TRUE when the code it names is there, in the function and order the model assumes.
model/check sets each guard constant of the model from these facts and compares all of them
with model/coverage.json, the record of the last commit whose code someone checked against the
model.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

RECORD = "model/coverage.json"
MODEL_FILES = ("model/SessionLifecycle.tla", "model/facts.py", "model/check", "model/runs.json")

# ------------------------------------------------------------------ reading the code

_root: Path = Path(__file__).resolve().parent.parent


@cache
def _tree(path: str) -> ast.Module:
    return ast.parse((_root / path).read_text(), filename=path)


def _find(path: str, qualname: str) -> ast.AST | None:
    """A function (or Class.method, or a module-level NAME assignment) by its dotted name."""
    scope: list[ast.stmt] = _tree(path).body
    node: ast.AST | None = None
    for part in qualname.split("."):
        node = None
        for stmt in scope:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == part:
                node = stmt
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    node = stmt
        if node is None:
            return None
        scope = getattr(node, "body", [])
    return node


def _without_docstrings(node: ast.AST) -> ast.AST:
    node = ast.parse(ast.unparse(node))  # a copy
    for inner in ast.walk(node):
        body = getattr(inner, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            inner.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return node


def _flat(text: str) -> str:
    # Indentation differs between a snippet and the function that holds it.
    return "\n".join(line.strip() for line in text.splitlines())


def code(path: str, qualname: str) -> str:
    """The function's code in one canonical layout, without comments and docstrings."""
    node = _find(path, qualname)
    return "" if node is None else _flat(ast.unparse(_without_docstrings(node)))


def _canonical(snippet: str) -> str:
    """The snippet in the layout of ast.unparse; a block header ("if x:") stands for itself, a
    call left open ("f(a=1") for its start."""
    text = snippet.strip()
    try:
        return _flat(ast.unparse(ast.parse(text)))
    except SyntaxError:
        pass
    if text.endswith(":"):
        return _flat(ast.unparse(ast.parse(text + "\n    pass"))).removesuffix("\npass")
    opened = text.count("(") - text.count(")")
    if opened > 0 and not text.endswith("("):
        whole = _flat(ast.unparse(ast.parse(text.rstrip(",") + ")" * opened)))
        return whole[: len(whole) - opened]
    return _flat(text)  # "except X:" with its body, or a token such as "mkdir(": as written


def has(path: str, qualname: str, *snippets: str) -> bool:
    """Every snippet (a statement or expression in any layout) is in the function."""
    text = code(path, qualname)
    return bool(text) and all(_canonical(s) in text for s in snippets)


def lacks(path: str, qualname: str, *snippets: str) -> bool:
    text = code(path, qualname)
    return bool(text) and not any(_canonical(s) in text for s in snippets)


def before(path: str, qualname: str, *snippets: str) -> bool:
    """The snippets are all in the function, each first found after the one before it."""
    text = code(path, qualname)
    at = -1
    for snippet in snippets:
        found = text.find(_canonical(snippet), at + 1)
        if found < 0:
            return False
        at = found
    return True


def starts(path: str, qualname: str, snippet: str) -> bool:
    """The function's first statement (after its docstring) is the snippet."""
    text = code(path, qualname)
    body = text.split("\n", 1)[1] if "\n" in text else ""
    return body.startswith(_canonical(snippet))


def count(path: str, qualname: str, snippet: str) -> int:
    return code(path, qualname).count(_canonical(snippet))


# ------------------------------------------------------------------ the guards

CREATE = "agent_tty/lifecycle/create.py"
RECONCILE = "agent_tty/lifecycle/reconcile.py"
DESTROY = "agent_tty/lifecycle/destroy.py"
GC = "agent_tty/lifecycle/gc.py"
ENGINE = "agent_tty/lifecycle/engine.py"
HOST_MAIN = "agent_tty/host/main.py"
LOOP = "agent_tty/host/loop.py"
HOST_OPS = "agent_tty/host/ops.py"
SHUTDOWN = "agent_tty/host/shutdown.py"
RPC_SERVER = "agent_tty/host/rpc_server.py"
WRITER = "agent_tty/host/writer.py"
FILES = "agent_tty/storage/files.py"
STATUS = "agent_tty/protocol/status.py"
DESTROY_CLI = "agent_tty/ops/destroy.py"
DESTROY_COMMAND = "agent_tty/cli/commands/destroy.py"
AUTOGROUP = "plugins/linux_autogroup/__init__.py"
AUTOGROUP_PROOF = "plugins/linux_autogroup/proof.py"
AUTOGROUP_GROUP = "plugins/linux_autogroup/group.py"
AUTOGROUP_JOBS = "plugins/linux_autogroup/jobs.py"
AUTOGROUP_HOST = "plugins/linux_autogroup/host.py"
CGROUP = "plugins/linux_cgroup/__init__.py"
CLONE_INTO = "plugins/linux_cgroup/clone_into.py"
PTY_SPAWN = "plugins/_posix/pty_spawn.py"
GROUPS = "plugins/_posix/groups.py"
MACOS_GROUP = "plugins/macos_ps/group.py"
MACOS_HOST = "plugins/macos_ps/host.py"
WIN_JOB = "plugins/windows_conpty/job.py"
WIN_HOST = "plugins/windows_conpty/host.py"

GUARDS: dict[str, Callable[[], bool]] = {
    "CreateRecordsHostPid": lambda: before(
        CREATE, "create", "host = (launch or _launch_host)(paths, str(engine.home.root))",
        "engine.write_manifest(paths, manifest.replace(host_pid=host.pid))",
    ),
    "CreateRecordsHost": lambda: before(
        CREATE, "create", "host = (launch or _launch_host)(paths, str(engine.home.root))",
        "identity = platform.capture_host(chosen.name, host.pid)",
        "if identity is not None:\n    write_record(paths.host,",
        "write_record(paths.host, HostRecord(version=1, mechanism=chosen.name, pid=host.pid, identity=identity))",
        "engine.write_manifest(paths, manifest.replace(host_pid=host.pid))",
    ),
    "HostWaitsForManifest": lambda: before(
        HOST_MAIN, "wait_for_manifest", "while True:", "parent_alive = os.getppid() == create_pid",
        "return manifest if manifest.host_pid == os.getpid() else None", "if not parent_alive:\n    return None",
        "time.sleep(delay)",
    ),
    "ReconcileSkipsLiveHost": lambda: has(RECONCILE, "reconcile", "if verdict.value != 'dead':\n    return Reconciled(manifest, verdict.value)"),
    "ReconcileRereads": lambda: before(
        RECONCILE, "reconcile", "again = _reread(engine, paths)", "if is_terminal(again.status):",
        "last = _reread(engine, paths)", "if is_terminal(last.status):", "ended = last.replace(status=Status.EXITED",
        "ended = last.replace(status=Status.FAILED",
    ),
    "ReconcileWaitsForGroup": lambda: before(
        RECONCILE, "reconcile",
        "if engine.unprovable(paths, again, group) or not engine.stop_group_and_wait(group):\n    return Reconciled(again, 'dead')",
        "written = engine.write_manifest(paths, ended)",
    ),
    "ReconcileRecordsExit": lambda: has(
        RECONCILE, "reconcile",
        "if last.exit_code is not None or last.exit_signal is not None:\n    ended = last.replace(status=Status.EXITED, updated_at=now, ended_at=now)",
    ),
    "ReconcileRepairsDestroyed": lambda: before(
        RECONCILE, "reconcile", "written = engine.write_manifest(paths, ended)",
        "if exists(paths.destroyed_marker):\n    return Reconciled(engine.record_destroyed(paths, last), 'dead')",
    ),
    "ReconcileRepairsMarked": lambda: has(
        RECONCILE, "repair_marked",
        "if manifest.status is Status.DESTROYED or not exists(paths.destroyed_marker):\n    return manifest",
        "return engine.record_destroyed(paths, manifest)",
    ) and count(RECONCILE, "reconcile", "repair_marked(engine, paths,") == 3,
    "HostStopsAfterTerminalWrite": lambda: has(
        WRITER, "ManifestWriter.write", "if self.closed:\n    return False",
        "if is_terminal(record.status):\n    self.closed = True",
    )
    and before(SHUTDOWN, "Shutdown.finish_exited", "self.write(", "self.ended = True")
    and before(SHUTDOWN, "Shutdown.finish_destroyed", "self.write(status=Status.DESTROYED", "self.ended = True"),
    "ShutdownChecksCommandable": lambda: has(
        SHUTDOWN, "Shutdown.begin",
        "if reason is not Reason.IDLE and policy(self.writer.current.status).commandable:\n    self.write(status=Status.DESTROYING, **({'failure': failure} if failure else {}))",
    ),
    "DestroyRecordsDestroyed": lambda: lacks(DESTROY, "_force", "reconcile(")
    and has(DESTROY, "_force", "return DestroyOutcome(engine.record_destroyed(paths, again), already=False)")
    and before(ENGINE, "Engine.record_destroyed", "write_marker(paths.destroyed_marker)", "manifest.replace(status=Status.DESTROYED", "self.write_manifest(paths, record)")
    and before(SHUTDOWN, "Shutdown.finish_destroyed", "write_marker(self.destroyed_marker)", "self.write(status=Status.DESTROYED"),
    "DestroyKeepsExitCode": lambda: has(ENGINE, "Engine.record_destroyed", "record = manifest.replace(")
    and lacks(ENGINE, "Engine.record_destroyed", "exit_code=", "exit_signal=")
    and has(SHUTDOWN, "Shutdown.finish_destroyed", "fields = self._exit_fields() if self.host.exit is not None else {}", "**fields"),
    "ManifestWriteNeedsFolder": lambda: all(
        lacks(FILES, name, "mkdir(", "makedirs(") for name in ("write_atomic", "write_record", "write_marker")
    ) and has(SHUTDOWN, "Shutdown.write", "except FolderGone:\n    self.ended = True"),
    "KillsProgramGroup": lambda: has(GROUPS, "signal_group", "os.killpg(_checked(pgid), signal)")
    and has(CGROUP, "_kill_leaf", "_write(leaf / 'cgroup.kill', '1')")
    # macos_ps (the Token = FALSE path) kills through the same killpg; windows_conpty (Cgroup
    # with Win32) ends the whole job in one call, as cgroup.kill does.
    and count(MACOS_GROUP, "kill", "groups.signal_group(group.pid, signal)") == 2
    and has(WIN_JOB, "kill", "if signal != 0:\n    win.terminate_job(job, KILL_EXIT_BASE + signal)"),
    "ProbeCountsDeniedGroup": lambda: has(GROUPS, "signal_group", "except PermissionError:\n    return Probe.DENIED")
    and has(AUTOGROUP_GROUP, "alive",
            "if verdict in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED):\n    return True",
            "return not _only_zombies_twice(group.pid)")
    # macos_ps: another user's process in the session, or a refused read, reads UNKNOWN, and
    # UNKNOWN keeps the group alive; windows_conpty: a job it may not open reads UNKNOWN, alive.
    and has(MACOS_GROUP, "_judge_members", "if not (proven_leader and _ours(member)):\n    cannot_tell = True",
            "cannot_tell = cannot_tell or scan.refused", "if cannot_tell:\n    return (GroupVerdict.UNKNOWN, None)")
    and has(MACOS_GROUP, "alive",
            "if verdict in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED, GroupVerdict.AMBIGUOUS):\n    return True")
    and has(WIN_JOB, "_open", "except PermissionError:\n    return (GroupVerdict.UNKNOWN, None)")
    and has(WIN_JOB, "alive", "return judge(group) in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED)"),
    "HostWaitsForGroup": lambda: has(
        SHUTDOWN, "Shutdown.on_exit", "self.wait_group(GROUP_WAIT_S, self.finish_destroyed, self.finish_gave_up)"
    ) and lacks(SHUTDOWN, "Shutdown.finish_gave_up", "write(", "write_marker(")
    and before(SHUTDOWN, "Shutdown.wait_group", "if not self.platform.group_alive(self.host.group):\n    then()"),
    "ReRunsInNewSession": lambda: has(
        DESTROY_CLI, "destroy",
        "elif _runs_inside(engine, paths, session_id):\n    if rerun is not None:\n        return rerun(session_id, force)\n"
        "    return _rerun_in_new_session(engine, session_id, force)",
    ) and has(DESTROY_CLI, "rerun_env", "env = {k: v for k, v in os.environ.items() if k != 'AGENT_TTY_SESSION_ID'}")
    and has(DESTROY_CLI, "_rerun_in_new_session", "child = subprocess.Popen(argv + (['--force'] if force else []), env=rerun_env(), stdout=subprocess.PIPE, text=True, **current().detached())")
    and has(DESTROY_COMMAND, "_rerun_this_command", "child = subprocess.Popen([sys.executable, '-m', 'agent_tty', *argv], env=rerun_env(), **current().detached())"),
    "InsideCheckReadsEnv": lambda: before(
        DESTROY_CLI, "_runs_inside", "if os.environ.get('AGENT_TTY_SESSION_ID') == session_id:\n    return True",
        "manifest = engine.read_manifest(paths)",
    ),
    "RecordsProgramSync": lambda: before(
        HOST_MAIN, "_start", "program = platform.spawn(request)",
        "captured = platform.capture_program(mechanism, program.pid, os.getpid())",
        "write_record(paths.program, ProgramRecord(version=1, mechanism=mechanism, pid=program.pid, proof=proof))",
        # StartGate: the program runs its own code only from here, so the model's one step from
        # spawn to program.json holds even when the host dies in between.
        "release = getattr(program, 'release', None)",
        "release()",
        "writer.write(status=Status.RUNNING, host_pid=os.getpid(), child_pid=program.pid)",
    ),
    "ProvesGroupOwnership": lambda: has(
        AUTOGROUP_GROUP, "signal_proven",
        "if member is not None and _still_member(member, group.pid):\n    groups.signal_group(group.pid, signal)\n    return verdict",
    ) and count(AUTOGROUP_GROUP, "signal_proven", "groups.signal_group(group.pid, signal)") == 2
    and has(CGROUP, "agent_tty_kill_group", "_judge(group)")
    # macos_ps: the same judge, re-read of the proving member, then the signal.
    and has(
        MACOS_GROUP, "kill", "verdict, member = judge(group)",
        "if member is not None and _still_member(member, group.pid):\n    groups.signal_group(group.pid, signal)\n    return verdict",
        "if verdict is GroupVerdict.OWNED and member is not None and _still_member(member, group.pid):\n    groups.signal_group(group.pid, signal)",
    )
    # windows_conpty: the job is opened by the proof's name and killed through that handle
    # only when it reads OWNED (members active).
    and before(WIN_JOB, "kill", "verdict, job = _open(group)", "if job is None:\n    return verdict", "win.terminate_job(")
    and before(WIN_JOB, "_open", "name = _names_this_group(group)", "if name is None:\n    return (_without_proof(group), None)",
               "job = win.open_job(name)", "return (GroupVerdict.OWNED, job)"),
    "DestroyStopsLeftovers": lambda: before(
        DESTROY, "stop_leftovers_then_record_destroyed", "if not engine.stop_group_and_wait(engine.group(paths)):",
        "return engine.record_destroyed(paths, manifest)",
    ) and has(DESTROY, "destroy", "return DestroyOutcome(stop_leftovers_then_record_destroyed(engine, paths, manifest), already=False)"),
    "CreateStopsOnGiveUp": lambda: count(CREATE, "create", "_give_up(paths, host, named)") == 2
    and has(CREATE, "HostLaunch.stop", "self.process.send_signal(signal.SIGTERM)")
    and has(HOST_MAIN, "main", "signals = HostSignals.install()")
    and code(HOST_MAIN, "main").find("signals = HostSignals.install()") < code(HOST_MAIN, "main").find("wait_for_manifest(")
    and has(LOOP, "Host._check_signals", "if self.signals.term:\n    self.shutdown.begin(Reason.SIGTERM)")
    # A SIGTERM during a destroy or create-failed shutdown joins it: the table has no way out.
    and has(SHUTDOWN, "ENDS_AS", "Reason.SIGTERM: State.DESTROYING") and has(SHUTDOWN, "TRANSITIONS", "State.DESTROYING: frozenset()"),
    "HostChecksCreateFailed": lambda: before(CREATE, "_give_up", "write_marker(paths.create_failed_marker)", "host.stop()")
    and before(
        HOST_MAIN, "_start", "if exists(paths.create_failed_marker) or signals.term:\n    return 0",
        "program = platform.spawn(request)", "writer.write(status=Status.RUNNING",
        "if exists(paths.create_failed_marker):\n    host.shutdown.begin(Reason.CREATE_FAILED)", "host.listen(trusted_socket_path(manifest.socket_path, manifest.session_id))",
    ),
    "TokenNamesProgram": lambda: before(
        AUTOGROUP_PROOF, "capture_token", "first = procfs.read_stat(pid)", "autogroup = procfs.read_autogroup(pid)",
        "second = procfs.read_stat(pid)", "second.session == pid", "second.start_time == first.start_time",
        "autogroup != host_autogroup", "if leads_own_session:",
    ),
    "UnsharedGroupReadsUnknown": lambda: starts(
        AUTOGROUP_PROOF, "shares_host_pids", "if not procfs.proc_shows_own_pid_space():\n    return False"
    ) and has(
        AUTOGROUP_GROUP, "judge", "if not shares_host_pids(group):\n    return (GroupVerdict.UNSHARED, None)"
    ) and has(HOST_MAIN, "_start", "if proof is not None and identity is None and proof.get('autogroup') is not None:"),
    "GcKeepsLiveGroup": lambda: before(
        GC, "_collect",
        "if manifest.status is not Status.DESTROYED and _group_runs(engine, engine.group(paths)):\n    return GROUP_RUNS",
        "_remove(paths)",
    ) and has(GC, "_group_runs", "if verdict == 'owned':\n    return True"),
    "GcProbesUnseenGroup": lambda: has(GC, "_group_runs", "return verdict == 'gone' and engine.platform.group_alive(group)"),
    "GcFreezesUnseenGroup": lambda: before(
        AUTOGROUP_GROUP, "alive", "frozen = frozen_judgement(group)", "return not _only_zombies_twice(group.pid)"
    ) and has(CGROUP, "_populated", "populated")
    # windows_conpty: the job's active-process count holds every member, in view or not.
    and has(WIN_JOB, "_open", "active = win.job_active(job)", "if active == 0:\n    win.close_handle(job)\n    return (GroupVerdict.GONE, None)"),
    "FreezesUnseenGroup": lambda: has(
        AUTOGROUP_GROUP, "signal_proven",
        "if verdict is GroupVerdict.GONE and signal == signals.SIGKILL:\n    verdict = frozen_judgement(group)",
    ) and starts(
        AUTOGROUP_GROUP, "frozen_judgement",
        "if token_of(group) is None or not procfs.proc_shows_own_pid_space():\n    return GroupVerdict.GONE",
    ) and has(AUTOGROUP_GROUP, "frozen_judgement", "groups.signal_group(group.pid, signals.SIGSTOP)"),
    "ReusedIdReadsGone": lambda: has(AUTOGROUP_GROUP, "alive", "if verdict is GroupVerdict.UNPROVEN:\n    return False")
    and has(MACOS_GROUP, "alive", "if verdict is GroupVerdict.UNPROVEN:\n    return False"),
    "ProvesHostPid": lambda: has(
        DESTROY, "_force",
        "if host is not None and host.pid == manifest.host_pid:\n    engine.platform.kill_host(host.mechanism, host.pid, host.identity)",
    ) and has(AUTOGROUP_HOST, "kill", "if verdict is HostVerdict.ALIVE:")
    and has(AUTOGROUP_HOST, "judge", "if stat.start_time != identity.get('startTime'):\n    return HostVerdict.DEAD")
    and has(MACOS_HOST, "judge", "if not same_start(proc.start, start):\n    return HostVerdict.DEAD")
    and has(MACOS_HOST, "kill", "verdict = judge(pid, identity)", "if verdict is HostVerdict.ALIVE:\n    try:\n        os.kill(pid, signals.SIGKILL)")
    and has(WIN_HOST, "_judge", "if win.process_created(process) != identity['created']:\n    return HostVerdict.DEAD")
    and before(WIN_HOST, "kill", "verdict = _judge(win, process, pid, identity)",
               "if verdict is HostVerdict.ALIVE:\n    win.terminate_process(process, HOST_KILL_EXIT)"),
    "GcSkipsNonCollectable": lambda: before(
        GC, "_collect", "if rules.active:", "if not rules.collectable:", "last = engine.read_manifest(paths)"
    ),
    "GcFinalCheck": lambda: before(
        GC, "_collect", "last = engine.read_manifest(paths)", "if not policy(last.status).collectable:", "_remove(paths)"
    ),
    # One thread, and ManifestWriter.write renames the record before it returns (ADR 0004): the
    # host's writes land in call order (the model's host makes each write in its own step).
    "HostSerializesWrites": lambda: before(
        WRITER, "ManifestWriter.write", "if self.closed:\n    return False",
        "record = self.current.replace(updated_at=time.time(), **changes)",
        "write_record(self._paths.manifest, record)", "self.current = record",
    ),
    "ReconcileSkipsTerminal": lambda: starts(
        RECONCILE, "reconcile", "if is_terminal(manifest.status):\n    return Reconciled(repair_marked(engine, paths, manifest), None)"
    ),
    # destroy --force alone, once the host is proven dead, reads and judges the group twice and
    # records destroyed without it only on an errno no retry changes (the model's CheckFails).
    "ForceSkipsUnreadableGroup": lambda: before(
        DESTROY, "_unchecked_group", "for attempt in range(2):", "group = _read_group(engine, paths)",
        "engine.platform.judge_group(group)", "except AgentTtyError as err:\n    if not unreadable(err):\n        raise",
        "if attempt == 0:\n    time.sleep(UNCHECKED_RETRY_S)",
    ) and before(
        DESTROY, "_force", "if verdict is HostVerdict.DEAD:\n    break", "again = engine.read_manifest(paths)",
        "blind = _unchecked_group(engine, paths, again)",
        "if blind is not None:\n    return DestroyOutcome(engine.record_destroyed(paths, again), already=False, group_unchecked=blind)",
        "group = _read_group(engine, paths)",
    ) and before(
        DESTROY, "destroy", "if force and not is_terminal(first.status):\n    return _force(engine, paths, first)",
        "if force:\n    blind = _unchecked_group(engine, paths, manifest)",
        "return DestroyOutcome(stop_leftovers_then_record_destroyed(engine, paths, manifest), already=False)",
    ) and has(ENGINE, "unreadable", "return err.code is ErrorCode.STORAGE_ERROR and err.details.get('errno') in UNREADABLE_ERRNOS"),
    "MissingLeafNeedsSameRoot": lambda: before(
        CGROUP, "_gone_leaf",
        "if type(root_id) is not int or os.fstat(root.fd).st_ino != root_id:\n    return False",
        "root.descend(parts, OWN_DEPTH)", "except FileNotFoundError:\n    return True",
    ) and has(CGROUP, "agent_tty_capture_program", "root_id = os.fstat(root.fd).st_ino", "'rootId': root_id")
    and has(CGROUP, "_verdict", "if _gone_leaf(group):\n    return GroupVerdict.GONE")
    and has(CGROUP, "agent_tty_group_alive", "if _gone_leaf(group):\n    return False"),
}

# ------------------------------------------------------------------ what the hashes cover

COVERED: dict[str, tuple[str, ...]] = {
    CREATE: ("HostLaunch.stop", "_launch_host", "create", "_give_up", "_wait_ready"),
    RECONCILE: ("reconcile", "_reread", "repair_marked"),
    DESTROY: (
        "destroy", "_unchecked_group", "_read_group", "force_skips_group", "stop_leftovers_then_record_destroyed",
        "_plain", "_force", "_force_without_manifest",
    ),
    GC: (
        "gc", "_way_out", "_collect", "_collect_incomplete", "_collect_unreadable_destroyed", "_kept_by_the_living",
        "_group_runs", "_remove",
    ),
    ENGINE: (
        "Engine.read_manifest", "Engine.host_record", "Engine.group", "Engine.judge_host", "Engine.stop_group",
        "Engine.wait_group_gone", "Engine.stop_group_and_wait", "Engine.unprovable", "Engine.write_manifest",
        "Engine.record_destroyed", "unreadable", "unlink_socket",
    ),
    HOST_MAIN: ("wait_for_manifest", "program_env", "main", "_start"),
    LOOP: ("Host._check_signals", "Host._check_exit", "Host._close", "Host.abandon", "Host.listen", "Host.dispatch"),
    # Host._op_destroy and Host._op_signal, moved into the op table (issue 25.1).
    HOST_OPS: ("Ops.dispatch", "Ops.destroy", "Ops.signal"),
    # Host.listen's and Host._close's socket steps, moved into the RPC server (issue 25.1).
    RPC_SERVER: ("RpcServer.listen", "RpcServer.stop_serving", "RpcServer.drop_all"),
    SHUTDOWN: (
        "ENDS_AS", "TRANSITIONS", "Shutdown._enter", "Shutdown.begin", "Shutdown.on_exit", "Shutdown.kill",
        "Shutdown.wait_group", "Shutdown.finish_exited", "Shutdown.finish_destroyed", "Shutdown.finish_gave_up",
        "Shutdown.write",
    ),
    WRITER: ("ManifestWriter.write",),
    FILES: ("write_atomic", "write_record", "write_marker", "exists"),
    STATUS: ("STATUS_POLICY",),
    DESTROY_CLI: ("destroy", "_runs_inside", "_rerun_in_new_session"),
    # linux_autogroup, split by job (issue 25.2): the hooks, the token's proof, the group, the
    # session's jobs, the host.
    AUTOGROUP: ("agent_tty_kill_group", "agent_tty_group_alive", "agent_tty_judge_host", "agent_tty_kill_host"),
    AUTOGROUP_PROOF: ("capture_token", "shares_host_pids"),
    AUTOGROUP_GROUP: (
        "judge", "_judge_leader", "_still_member", "frozen_judgement", "signal_proven", "kill", "_only_zombies_twice",
        "alive",
    ),
    AUTOGROUP_JOBS: ("_still_carrier", "_jobs", "_kill_carrier", "kill_jobs"),
    AUTOGROUP_HOST: ("judge", "kill"),
    CGROUP: (
        "_judge", "_verdict", "_gone_leaf", "_kill_leaf", "agent_tty_kill_group", "_populated", "agent_tty_group_alive",
        # ProgramStartsInLeaf, which the Cgroup runs assume (the leaf holds the program from its
        # spawn on: model/README): born in the leaf by clone3, or moved in before the exec.
        "agent_tty_spawn", "Birth.fork", "Birth.enter",
    ),
    CLONE_INTO: ("fork_into",),
    PTY_SPAWN: ("spawn_in_pty",),
    GROUPS: ("_checked", "signal_group", "probe_group"),
    MACOS_GROUP: ("judge", "_judge_members", "_still_member", "kill", "alive"),
    MACOS_HOST: ("judge", "kill"),
    WIN_JOB: ("_names_this_group", "_without_proof", "_open", "judge", "kill", "alive"),
    WIN_HOST: ("_judge", "judge", "kill"),
}

# Calls whose every site the model must know: manifest and marker writers, reconciles, kills and
# recursive removes. A new call site is drift even when every hash stays the same.
WATCHED_CALLS = frozenset({
    "write_record", "write_manifest", "write_marker", "record_destroyed", "reconcile", "rmtree",
    "kill_group", "kill_host", "signal_group", "killpg", "stop_group_and_wait",
})


def _hash(path: str, qualname: str) -> str:
    node = _find(path, qualname)
    if node is None:
        return "missing"
    dumped = ast.dump(_without_docstrings(node), annotate_fields=False, include_attributes=False)
    return hashlib.sha256(dumped.encode()).hexdigest()[:16]


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _call_sites() -> dict[str, int]:
    """"path::Function -> callee": how often, for every watched call in agent_tty/ and plugins/."""
    sites: dict[str, int] = {}
    files = sorted([*(_root / "agent_tty").rglob("*.py"), *(_root / "plugins").rglob("*.py")])
    for file in files:
        rel = file.relative_to(_root).as_posix()
        tree = ast.parse(file.read_text(), filename=rel)
        for scope, node in _walk_scoped(tree, ""):
            if isinstance(node, ast.Call) and _called_name(node) in WATCHED_CALLS:
                key = f"{rel}::{scope or '<module>'} -> {_called_name(node)}"
                sites[key] = sites.get(key, 0) + 1
    return dict(sorted(sites.items()))


def _walk_scoped(node: ast.AST, scope: str):  # type: ignore[no-untyped-def]
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{scope}.{child.name}" if scope else child.name
            yield from _walk_scoped(child, inner)
        else:
            yield scope, child
            yield from _walk_scoped(child, scope)


def _status_sets() -> dict[str, list[str]]:
    """Each policy column of STATUS_POLICY: the statuses where it is True."""
    node = _find(STATUS, "STATUS_POLICY")
    assert isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict)
    policy = _find(STATUS, "StatusPolicy")
    assert isinstance(policy, ast.ClassDef)
    fields = [s.target.id for s in policy.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    sets: dict[str, list[str]] = {name: [] for name in fields}
    for key, value in zip(node.value.keys, node.value.values, strict=True):
        assert isinstance(key, ast.Attribute) and isinstance(value, ast.Call)
        for name, arg in zip(fields, value.args, strict=False):
            if isinstance(arg, ast.Constant) and arg.value is True:
                sets[name].append(key.attr.lower())
    return sets


def _file_hash(path: str) -> str:
    file = _root / path
    return hashlib.sha256(file.read_bytes()).hexdigest()[:16] if file.exists() else "missing"


def collect(root: Path) -> dict:
    global _root
    _root = root
    _tree.cache_clear()
    return {
        "guards": {name: bool(check()) for name, check in GUARDS.items()},
        "statusSets": _status_sets(),
        "hashes": {f"{path}::{name}": _hash(path, name) for path, names in COVERED.items() for name in names},
        "modelFiles": {path: _file_hash(path) for path in MODEL_FILES},
        "callSites": _call_sites(),
    }


def compare(recorded: dict, current: dict) -> list[str]:
    """Every difference between the sync record and the code, in words."""
    lines: list[str] = []
    for name, value in current.get("guards", {}).items():
        was = recorded.get("guards", {}).get(name)
        if was != value:
            lines.append(f"fact {name} changed: was {_word(was)}, now {_word(value)}")
    for name, members in current.get("statusSets", {}).items():
        if recorded.get("statusSets", {}).get(name) != members:
            lines.append(f"status set {name} changed: now {', '.join(members)}")
    for section, what in (("hashes", "covered code"), ("modelFiles", "model file"), ("callSites", "call site")):
        old, new = recorded.get(section, {}), current.get(section, {})
        for key in sorted(set(old) | set(new)):
            if key not in old:
                lines.append(f"{what} added: {key}")
            elif key not in new:
                lines.append(f"{what} removed: {key}")
            elif old[key] != new[key]:
                lines.append(f"{what} changed: {key}")
    return lines


def _word(value: object) -> str:
    return {True: "true", False: "false", None: "absent"}.get(value, str(value))  # type: ignore[arg-type]


if __name__ == "__main__":
    facts = collect(Path(__file__).resolve().parent.parent)
    json.dump(facts, sys.stdout, indent=2, sort_keys=True)
    print()
    false = [name for name, value in facts["guards"].items() if not value]
    print(f"guards FALSE: {', '.join(false) or 'none'}", file=sys.stderr)
