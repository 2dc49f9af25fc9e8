"""Show that each guard's test can fail: remove the guard, run its test, expect red, restore.

    .venv/bin/python scripts/guard_mutations.py [GUARD ...]

Needs an editable install (pip install -e .), so that the CLI processes run the mutated tree; it
edits the tree in place, so CI runs it in a copy of its own (scripts/test-mutations). Each
mutation replaces one exact snippet. Verdicts: `red (ok)` (pytest reported a failed test),
`GREEN` (the test passed without the guard), `STALE` (a snippet no longer matches: the guard
moved, update the table), `BROKEN` (the mutated file does not compile, or gains an undefined
name: a red from it would prove nothing), `NO VERDICT` (pytest did not run the test: skipped,
a collection or usage error, no such test) and `HUNG` (pytest outlived its time). Any verdict but
red makes the exit status 1; the last line sums them up.

A test that passes without its guard runs again, up to TRIES times: a race test that forces its
order fails on its first try, but one whose mutant loses only by chance (a scan that happens to
see a member) may pass once on a busy machine. A red on a later try reads `red (weak)`: it counts
as red, and the last line names it, as a test to make deterministic.
"""

from __future__ import annotations

import ast
import builtins
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIES = 3

# guard: ([(file, guard code, the code without the guard), ...], test that must fail without it)
Edit = tuple[str, str, str]
MUTATIONS: dict[str, tuple[list[Edit], str]] = {
    "ProvesGroupOwnership": (
        [(
            "plugins/linux_autogroup/group.py",
            "    verdict, member = judge(group)\n    if verdict is GroupVerdict.GONE and signal == signals.SIGKILL:",
            "    verdict, member = judge(group)\n    if verdict is GroupVerdict.UNPROVEN:\n        groups.signal_group(group.pid, signal)\n    if verdict is GroupVerdict.GONE and signal == signals.SIGKILL:",
        )],
        "tests/integration/test_never_kill_unrelated.py::test_reused_group_id_is_never_signalled[linux_autogroup-destroy-force]",
    ),
    "KillsProgramGroup": (
        [("plugins/_posix/groups.py", "        os.killpg(_checked(pgid), signal)", "        os.kill(_checked(pgid), signal)")],
        "tests/integration/test_lifecycle.py::test_destroy_ends_a_group_that_ignores_hangup[linux_autogroup-True]",
    ),
    "ReconcileRecordsExit": (
        [("agent_tty/lifecycle/reconcile.py", "    if last.exit_code is not None or last.exit_signal is not None:", "    if False:")],
        "tests/integration/test_lifecycle.py::test_host_death_after_the_program_exit_keeps_the_exit",
    ),
    "GcKeepsLiveGroup": (
        [("agent_tty/lifecycle/gc.py", "    if manifest.status is not Status.DESTROYED and _group_runs(engine, engine.group(paths)):", "    if False:")],
        "tests/integration/test_lifecycle.py::test_destroy_stops_what_an_exited_program_left",
    ),
    "DestroyStopsLeftovers": (
        [(
            "agent_tty/lifecycle/destroy.py",
            "    if not engine.stop_group_and_wait(engine.group(paths)):\n        raise engine.group_not_ended(paths, engine.group(paths), \"a process of the session's program group is still running\")\n    return engine.record_destroyed(paths, manifest)",
            "    return engine.record_destroyed(paths, manifest)",
        )],
        "tests/integration/test_lifecycle.py::test_destroy_stops_what_an_exited_program_left",
    ),
    "ReRunsInNewSession": (
        [("agent_tty/ops/destroy.py", "    elif _runs_inside(engine, paths, session_id):", "    elif False:")],
        "tests/integration/test_lifecycle.py::test_destroy_from_inside_the_program_reruns_outside",
    ),
    # Off Windows the two are redundant with each other: the host's marker check stops a
    # session whose create gave up before the start-up write, the SIGTERM stops it at any time.
    "CreateStopsOnGiveUp+HostChecksCreateFailed": (
        [
            ("agent_tty/lifecycle/create.py", "        pass\n    host.stop()", "        pass"),
            ("agent_tty/host/main.py", "    if exists(paths.create_failed_marker):\n        host.shutdown.begin(Reason.CREATE_FAILED)", "    if False:\n        pass"),
        ],
        "tests/integration/test_lifecycle.py::test_create_that_gives_up_stops_its_session",
    ),
    "ManifestWriteNeedsFolder": (
        [
            (
                "agent_tty/storage/files.py",
                '    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")\n',
                '    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")\n    os.makedirs(path.parent, exist_ok=True)\n',
            ),
            (
                "agent_tty/storage/files.py",
                '    """An empty marker file, created without creating its folder."""\n',
                '    """An empty marker file, created without creating its folder."""\n    os.makedirs(path.parent, exist_ok=True)\n',
            ),
        ],
        "tests/integration/test_lifecycle.py::test_gc_and_destroy_race_on_removed_folder",
    ),
    "ProvesHostPid": (
        [(
            "plugins/linux_autogroup/host.py",
            "    if stat.start_time != identity.get(\"startTime\"):\n        return HostVerdict.DEAD  # another process took the pid (R19)\n",
            "",
        )],
        "tests/integration/test_never_kill_unrelated.py::test_reused_host_pid_is_never_killed_by_destroy_force",
    ),
    # The same guard when host.json cannot be read: without it destroy --force kills the
    # manifest's hostPid on a guess (issue 24: only a missing host.json was tested).
    "ProvesHostPid-unreadable-host.json": (
        [(
            "agent_tty/lifecycle/destroy.py",
            "    if host is not None and host.pid == manifest.host_pid:\n        engine.platform.kill_host(host.mechanism, host.pid, host.identity)\n",
            "    if host is not None and host.pid == manifest.host_pid:\n        engine.platform.kill_host(host.mechanism, host.pid, host.identity)\n"
            "    elif host is None and manifest.host_pid is not None:\n        __import__(\"os\").kill(manifest.host_pid, 9)\n",
        )],
        "tests/integration/test_force_unreadable.py::test_an_unreadable_host_json_kills_no_live_host",
    ),
    "HostWaitsForManifest": (
        [("agent_tty/host/main.py", "        parent_alive = os.getppid() == create_pid", "        parent_alive = False")],
        "tests/integration/test_lifecycle.py::test_host_waits_for_a_slow_create",
    ),
    "UnprovableGroupBlocksEnd": (
        [("agent_tty/lifecycle/engine.py", "        return group is None and manifest.child_pid is not None", "        return False")],
        "tests/integration/test_review_findings.py::test_a_missing_program_record_blocks_the_end_of_an_active_session",
    ),
    "FreezesUnseenGroup": (
        [("plugins/linux_autogroup/group.py", "    if token_of(group) is None or not procfs.proc_shows_own_pid_space():\n        return GroupVerdict.GONE\n", "    return GroupVerdict.GONE\n")],
        "tests/integration/test_fork_chain.py::test_a_chain_no_scan_shows_is_kept_and_ended_through_the_freeze[linux_autogroup-destroy]",
    ),
    # docs/lifecycle.md's hand mutation: gc trusts "only zombies" without freezing first. Both
    # freeze mutations stayed green while the scans' recent pids saw the chain; the test holds
    # those reads stale (issue 24.1).
    "GcFreezesUnseenGroup": (
        [("plugins/linux_autogroup/group.py", "    if probe is groups.Probe.FOUND:\n        frozen = frozen_judgement(group)\n", "    if probe is groups.Probe.FOUND:\n        frozen = GroupVerdict.GONE\n")],
        "tests/integration/test_fork_chain.py::test_a_chain_no_scan_shows_is_kept_and_ended_through_the_freeze[linux_autogroup-gc-then-destroy]",
    ),
    "ReconcileRereads": (
        [
            ("agent_tty/lifecycle/reconcile.py", "    again = _reread(engine, paths)\n", "    again = manifest\n"),
            ("agent_tty/lifecycle/reconcile.py", "    last = _reread(engine, paths)\n", "    last = again\n"),
        ],
        "tests/integration/test_replays.py::test_reconcile_rereads_before_it_writes",
    ),
    # The seed's mutant: each host write of session.json an independent asynchronous write, so
    # a held start-up write (running) lands after the exit write.
    "HostSerializesWrites": (
        [(
            "agent_tty/host/writer.py",
            "        write_record(self._paths.manifest, record)\n",
            "        __import__(\"threading\").Thread(target=write_record, args=(self._paths.manifest, record)).start()\n",
        )],
        "tests/integration/test_replays.py::test_host_writes_land_in_call_order",
    ),
    # ReconcileSkipsTerminal alone is redundant (the seed's mutant-ReconcileSkipsTerminal passes:
    # the re-reads return on a terminal copy too; its test stays green without it, by hand in
    # docs/lifecycle.md). Without all three terminal returns a reconcile rewrites the record.
    "ReconcileSkipsTerminal+RereadsSkipTerminal": (
        [
            ("agent_tty/lifecycle/reconcile.py", "    if is_terminal(manifest.status):\n        return Reconciled(repair_marked(engine, paths, manifest), None)\n", ""),
            ("agent_tty/lifecycle/reconcile.py", "    if is_terminal(again.status):\n        return Reconciled(repair_marked(engine, paths, again), \"dead\")\n", ""),
            ("agent_tty/lifecycle/reconcile.py", "    if is_terminal(last.status):\n        return Reconciled(repair_marked(engine, paths, last), \"dead\")\n", ""),
        ],
        "tests/integration/test_replays.py::test_reconciles_leave_a_terminal_record_alone",
    ),
    "HostStopsAfterTerminalWrite": (
        [("agent_tty/host/writer.py", "            self.closed = True\n", "            pass\n")],
        "tests/unit/test_writer.py::test_nothing_after_a_terminal_record",
    ),
    "RecordsProgramSync": (
        [
            (
                "agent_tty/host/main.py",
                "    ended = _start_up_write(host, paths, lambda: write_record(paths.program, ProgramRecord(version=1, mechanism=mechanism, pid=program.pid, proof=proof)))\n",
                "    ended = None\n",
            ),
            (
                "agent_tty/host/main.py",
                "    ended = _start_up_write(host, paths, lambda: writer.write(status=Status.RUNNING, host_pid=os.getpid(), child_pid=program.pid))\n",
                "    ended = _start_up_write(host, paths, lambda: writer.write(status=Status.RUNNING, host_pid=os.getpid(), child_pid=program.pid))\n"
                "    ended = ended or _start_up_write(host, paths, lambda: write_record(paths.program, ProgramRecord(version=1, mechanism=mechanism, pid=program.pid, proof=proof)))\n",
            ),
        ],
        "tests/integration/test_replays.py::test_host_death_in_its_start_up_write_leaves_a_named_program",
    ),
    "StartGate": (
        [("agent_tty/host/main.py", "        program = platform.spawn(request)\n", "        program = platform.spawn(request)\n        program.release()\n")],
        "tests/integration/test_replays.py::test_host_death_before_program_json_leaves_no_program",
    ),
    "InsideCheckReadsEnv": (
        [("agent_tty/ops/destroy.py", '    if os.environ.get("AGENT_TTY_SESSION_ID") == session_id:\n        return True\n', "")],
        "tests/integration/test_replays.py::test_destroy_run_by_the_program_before_the_start_up_write",
    ),
    "ReconcileRepairsDestroyed": (
        [("agent_tty/lifecycle/reconcile.py", '    if exists(paths.destroyed_marker):\n        return Reconciled(engine.record_destroyed(paths, last), "dead")\n', "")],
        "tests/integration/test_replays.py::test_reconcile_repairs_a_destroyed_it_wrote_over",
    ),
    "ReconcileRepairsMarked": (
        [("agent_tty/lifecycle/reconcile.py", "    if manifest.status is Status.DESTROYED or not exists(paths.destroyed_marker):\n", "    if True:\n")],
        "tests/integration/test_replays.py::test_reconcile_repairs_a_marked_failed_a_killed_reconcile_left",
    ),
    "TokenNamesProgram": (
        [("plugins/linux_autogroup/proof.py", "            if leads_own_session:\n                return {", "            if True:\n                return {")],
        "tests/platforms/linux_autogroup/test_contract.py::test_no_token_for_a_child_that_shows_the_hosts_session",
    ),
    "UnsharedGroupReadsUnknown": (
        [("plugins/linux_autogroup/proof.py", "def shares_host_pids(group: GroupRef) -> bool:\n", "def shares_host_pids(group: GroupRef) -> bool:\n    return True\n")],
        "tests/platforms/linux_cgroup/test_namespaces.py::test_cli_in_another_pid_namespace_destroys_an_ended_session",
    ),
    "CreateRecordsHost": (
        [("agent_tty/lifecycle/create.py", "        if identity is not None:\n            write_record(paths.host,", "        if False:\n            write_record(paths.host,")],
        "tests/platforms/linux_cgroup/test_namespaces.py::test_cli_in_another_pid_namespace_reads_a_starting_host_through_host_json",
    ),
    "DestroyKeepsExitCode": (
        [("agent_tty/lifecycle/engine.py", "            ended_at=manifest.ended_at or now,\n            failure=None,", "            ended_at=manifest.ended_at or now,\n            failure=None,\n            exit_code=None,")],
        "tests/integration/test_lifecycle.py::test_program_exit_is_recorded_with_its_code",
    ),
    "DestroyRecordsDestroyed": (
        [("agent_tty/lifecycle/destroy.py", "    return DestroyOutcome(engine.record_destroyed(paths, again), already=False)\n", "    return DestroyOutcome(again, already=False)\n")],
        "tests/integration/test_lifecycle.py::test_destroy_ends_a_group_that_ignores_hangup[linux_autogroup-True]",
    ),
    "ReusedIdReadsGone": (
        [("plugins/linux_autogroup/group.py", "        return False  # ReusedIdReadsGone", "        return True  # ReusedIdReadsGone")],
        "tests/integration/test_never_kill_unrelated.py::test_reused_group_id_is_never_signalled[linux_autogroup-destroy]",
    ),
    "FallbackNeedsFolder": (
        [("plugins/linux_autogroup/group.py", "    if not group.folder.is_dir():\n        return GroupVerdict.GONE, None  # FallbackNeedsFolder", "    if False:\n        return GroupVerdict.GONE, None  # FallbackNeedsFolder")],
        "tests/platforms/linux_autogroup/test_contract.py::test_no_token_proves_only_a_matching_leader",
    ),
    "MissingLeafNeedsSameRoot": (
        [(
            "plugins/linux_cgroup/__init__.py",
            "        if type(root_id) is not int or os.fstat(root.fd).st_ino != root_id:\n            return False  # MissingLeafNeedsSameRoot",
            "        if False:\n            return False  # MissingLeafNeedsSameRoot",
        )],
        "tests/platforms/linux_cgroup/test_namespaces.py::test_gc_outside_the_cgroup_namespace_keeps_a_running_leaf",
    ),
    # Wave 2: the vantage-point and trust guards (docs/lifecycle.md, ADR 0008).
    "HostJsonOutranksHostPid": (
        [("agent_tty/lifecycle/engine.py", "            if record.pid == manifest.host_pid or verdict is not HostVerdict.DEAD:", "            if record.pid == manifest.host_pid:")],
        "tests/integration/test_contradicting_records.py::test_an_edited_host_pid_never_reads_a_live_host_dead[linux_autogroup-reaped-list]",
    ),
    "GcChecksTheLiving": (
        [("agent_tty/lifecycle/gc.py", "    kept = _kept_by_the_living(engine, paths, last)\n    if kept is not None:\n        return kept\n", "")],
        "tests/integration/test_contradicting_records.py::test_gc_keeps_a_destroyed_manifest_whose_host_runs[linux_autogroup-no-program-record]",
    ),
    "JobsOfTheSession": (
        [(
            "plugins/linux_autogroup/group.py",
            "verdict in (GroupVerdict.OWNED, GroupVerdict.GONE) and jobs.kill_jobs(group):",
            "verdict in (GroupVerdict.OWNED, GroupVerdict.GONE) and False:",
        )],
        "tests/integration/test_shell_jobs.py::test_destroy_ends_the_jobs_of_an_interactive_shell",
    ),
    "IncompleteFinalCheck": (
        [("agent_tty/lifecycle/gc.py", "    if exists(paths.manifest):\n        return \"a manifest appeared meanwhile: gc judges it next time\"\n", "")],
        "tests/integration/test_incomplete_folders.py::test_a_swapped_in_manifest_stops_the_removal",
    ),
    "ManifestlessForce": (
        [(
            "agent_tty/lifecycle/destroy.py",
            "    elif not engine.stop_group_and_wait(group):\n        raise engine.group_not_ended(paths, group, \"a process of the session's program group is still running\")",
            "    elif False:\n        pass",
        )],
        "tests/integration/test_unreadable_manifest.py::test_destroy_force_stops_a_live_session_whose_manifest_cannot_be_read[empty]",
    ),
    "RemovesThroughCheckedFd": (
        [("agent_tty/storage/fs.py", "            shutil.rmtree(name, dir_fd=self.fd)", "            shutil.rmtree(self.path / name)")],
        "tests/integration/test_fd_removal.py",
    ),
    "CreateRecordsHostPid": (
        [("agent_tty/lifecycle/create.py", "        engine.write_manifest(paths, manifest.replace(host_pid=host.pid))", "        engine.write_manifest(paths, manifest)")],
        "tests/integration/test_lifecycle.py::test_create_waits_for_a_slow_host_start_up_write",
    ),
    "RemovedFolderEndsSession": (
        [("agent_tty/host/loop.py", "        if self.folder_identity is None or self._folder_identity() == self.folder_identity:", "        if True:")],
        "tests/integration/test_orphaned_hosts.py::test_a_host_whose_home_was_removed_ends_its_session",
    ),
    "ReapDatesMembers": (
        [("plugins/macos_ps/group.py", "                elif leader_held or (reaped is not None and started_by(member.start, reaped)):", "                elif True:")],
        "tests/integration/test_reused_session_id.py",
    ),
    # ProgramStartsInLeaf (ADR 0045), on each of its paths: born in the leaf by clone3 (the flag,
    # and the child's check that it is there), or forked beside the host and moved in by itself.
    "ProgramStartsInLeaf-born": (
        [
            ("plugins/linux_cgroup/clone_into.py", "    args = CloneArgs(flags=CLONE_INTO_CGROUP,", "    args = CloneArgs(flags=0,"),
            ("plugins/linux_cgroup/__init__.py", "        if self.born and own_cgroup() == self.path:\n            return", "        if self.born:\n            return"),
        ],
        "tests/platforms/linux_cgroup/test_cgroup.py::test_the_program_is_in_its_leaf_at_its_first_instruction[born-in-leaf]",
    ),
    "ProgramStartsInLeaf-moved": (
        [("plugins/linux_cgroup/__init__.py", '        with open(self.procs, "w") as handle:\n            handle.write("0")', "        pass")],
        "tests/platforms/linux_cgroup/test_cgroup.py::test_the_program_is_in_its_leaf_at_its_first_instruction[moved-in]",
    ),
}


# pytest's own per-test timeout (pyproject: 120 s) turns a hang inside a test into a red; this
# bounds the whole pytest process (a hang outside any test, e.g. in a fixture's teardown).
PYTEST_TIMEOUT = 300


def run_test(node: str, root: Path = ROOT) -> tuple[int | None, str]:
    """Run one test node, stopping at its first failure: (pytest's exit code or None if it hung, output)."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", node]
    # A session of its own, so that a hung pytest and whatever it started end together.
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=PYTEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        _stop(process)
        out, _ = process.communicate()
        return None, out.decode(errors="replace")
    except BaseException:  # SIGTERM or ^C: the test must not go on against a restored tree
        _stop(process)
        raise
    return process.returncode, out.decode(errors="replace")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT first, so that pytest's fixtures destroy the sessions they made (the hosts run in
    sessions of their own, out of reach of the kill below), then SIGKILL to pytest's session."""
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _unbound_names(text: str) -> set[str]:
    """Names the file reads but never binds, and that are no builtin: a mutation that adds one
    fails with a NameError, a red that says nothing about the guard. Coarser than pyflakes (a
    name bound anywhere counts as bound everywhere), but with no dependency."""
    tree = ast.parse(text)
    read: set[str] = set()
    bound = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__package__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return read - bound


def _broken(path: str, original: str, mutated: str) -> str | None:
    """Why the mutated file is not a fair mutation (it must compile and add no undefined name)."""
    try:
        compile(mutated, path, "exec")
    except SyntaxError as error:
        return f"{path} does not compile: {error}"
    new = _unbound_names(mutated) - _unbound_names(original)
    return f"{path} gains undefined names: {', '.join(sorted(new))}" if new else None


def _tail(output: str, lines: int = 25) -> str:
    return "\n".join("    " + line for line in output.rstrip().splitlines()[-lines:])


def main(names: list[str], root: Path = ROOT) -> int:
    unknown = [name for name in names if name not in MUTATIONS]
    if unknown:
        print(f"no such entry: {', '.join(unknown)}", file=sys.stderr)
        return 2
    verdicts: dict[str, str] = {}
    started = time.monotonic()
    for guard in names or list(MUTATIONS):
        edits, node = MUTATIONS[guard]
        began = time.monotonic()
        originals = {path: (root / path).read_text() for path, _, _ in edits}
        mutated = dict(originals)
        verdict = ""
        for path, guarded, without in edits:
            if mutated[path].count(guarded) != 1:
                verdict = "STALE"
                detail = f"its guard code is not (exactly once) in {path}"
                break
            mutated[path] = mutated[path].replace(guarded, without)
        if not verdict:
            broken = [why for path in mutated if (why := _broken(path, originals[path], mutated[path]))]
            if broken:
                verdict, detail = "BROKEN", "; ".join(broken)
        output = ""
        if not verdict:
            try:
                for path, text in mutated.items():
                    (root / path).write_text(text)
                for attempt in range(1, TRIES + 1):
                    code, output = run_test(node, root)
                    if not (code == 0 and " passed" in output.rstrip().rsplit("\n", 1)[-1]):
                        break
            finally:
                for path, text in originals.items():
                    (root / path).write_text(text)
            if code == 1 and attempt == 1:
                verdict, detail = "red (ok)", ""
            elif code == 1:
                verdict, detail = "red (weak)", f"green on {attempt - 1} of {attempt} tries: make the test force its order"
            elif code == 0 and " passed" not in output.rstrip().rsplit("\n", 1)[-1]:
                verdict, detail = "NO VERDICT", "the test was skipped (the namespace tests need root)"
            elif code == 0:
                verdict, detail = "GREEN", f"the test cannot see this guard ({TRIES} tries)"
            elif code is None:
                verdict, detail = "HUNG", f"pytest ran longer than {PYTEST_TIMEOUT} s and was killed"
            else:
                verdict, detail = "NO VERDICT", f"pytest exit {code}: the test did not run"
        verdicts[guard] = verdict
        seconds = time.monotonic() - began
        print(f"{guard:44} without the guard: {verdict}{': ' + detail if detail else ''}  ({seconds:.0f} s)  [{node}]", flush=True)
        if verdict not in ("red (ok)", "red (weak)", "STALE", "BROKEN") and output:
            print(_tail(output), flush=True)
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    missed = [guard for guard, verdict in verdicts.items() if not verdict.startswith("red")]
    weak = [guard for guard, verdict in verdicts.items() if verdict == "red (weak)"]
    total = len(verdicts)
    red = counts.pop("red (ok)", 0) + counts.pop("red (weak)", 0)
    others = ", ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items()))
    elapsed = time.monotonic() - started
    # The entries that are not red are named on this last line: a CI log is often read from its end.
    print(f"guard_mutations: {red} of {total} entries red{' (' + others + ')' if others else ''} in {elapsed / 60:.1f} min"
          + (f"; not red: {', '.join(missed)}" if missed else "")
          + (f"; red only on a retry: {', '.join(weak)}" if weak else ""))
    return 0 if red == total else 1


if __name__ == "__main__":
    # CI may stop the run with SIGTERM: main's finally must still restore the tree.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    raise SystemExit(main(sys.argv[1:]))
