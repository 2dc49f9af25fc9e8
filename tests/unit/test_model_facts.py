"""model/facts.py reads each guard from the code: removing the guard turns its fact FALSE, and a
comment or a re-indented line changes no fact and no hash."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


facts = _load("model_facts", ROOT / "model" / "facts.py")
mutations = _load("guard_mutations", ROOT / "scripts" / "guard_mutations.py")
# The mutation table's edits remove guards from the real code; those the model names as well.
SHARED = sorted(set(mutations.MUTATIONS) & set(facts.GUARDS))


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for part in ("agent_tty", "plugins", "model"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", ".cache", "results"))
    return tmp_path


def test_every_guard_reads_true_in_the_code() -> None:
    current = facts.collect(ROOT)
    assert [name for name, value in current["guards"].items() if not value] == []
    assert "missing" not in current["hashes"].values()


def test_the_mutation_table_covers_most_model_guards() -> None:
    assert len(SHARED) >= 20, SHARED


@pytest.mark.parametrize("guard", SHARED)
def test_removing_a_guard_turns_its_fact_false(tree: Path, guard: str) -> None:
    edits, _test = mutations.MUTATIONS[guard]
    for path, guarded, without in edits:
        file = tree / path
        file.write_text(file.read_text().replace(guarded, without))
    after = facts.collect(tree)
    assert after["guards"][guard] is False
    facts.collect(ROOT)  # leave the module pointing at the real tree


# macos_ps and windows_conpty: each guard the model claims for them, removed from that plugin
# alone (the Linux plugins keep theirs), turns the fact FALSE (issue 24, item 7).
PLUGIN_GUARDS = [
    ("KillsProgramGroup", "plugins/macos_ps/group.py",
     "            groups.signal_group(group.pid, signal)\n            return verdict", "            return verdict"),
    ("ProvesGroupOwnership", "plugins/macos_ps/group.py",
     "        if member is not None and _still_member(member, group.pid):\n            groups.signal_group",
     "        if True:\n            groups.signal_group"),
    ("ProbeCountsDeniedGroup", "plugins/macos_ps/group.py",
     "                    cannot_tell = True\n", "                    pass\n"),
    ("ReusedIdReadsGone", "plugins/macos_ps/group.py",
     "    if verdict is GroupVerdict.UNPROVEN:\n        return False  # ReusedIdReadsGone: the id now names someone else's group\n", ""),
    ("ProvesHostPid", "plugins/macos_ps/host.py",
     "    if not same_start(proc.start, start):\n        return HostVerdict.DEAD", "    if False:\n        return HostVerdict.DEAD"),
    ("KillsProgramGroup", "plugins/windows_conpty/job.py",
     "            win.terminate_job(job, KILL_EXIT_BASE + signal)", "            pass"),
    ("ProvesGroupOwnership", "plugins/windows_conpty/job.py",
     "    if job is None:\n        return verdict\n    win = layer.current()", "    win = layer.current()"),
    ("ProbeCountsDeniedGroup", "plugins/windows_conpty/job.py",
     "GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED)", "GroupVerdict.OWNED, GroupVerdict.UNSHARED)"),
    ("GcFreezesUnseenGroup", "plugins/windows_conpty/job.py", "    if active == 0:\n", "    if False:\n"),
    ("ProvesHostPid", "plugins/windows_conpty/host.py",
     "    if win.process_created(process) != identity[\"created\"]:\n        return HostVerdict.DEAD",
     "    if False:\n        return HostVerdict.DEAD"),
]


def _remove_one_guard(tree: Path, guard: str, path: str, guarded: str, without: str) -> None:
    """One edit removes the guard: its fact reads TRUE before and FALSE after (--drift-only STALE)."""
    file = tree / path
    text = file.read_text()
    assert text.count(guarded) == 1, f"{path}: the guard moved, update its table"
    assert facts.collect(tree)["guards"][guard] is True
    file.write_text(text.replace(guarded, without))
    assert facts.collect(tree)["guards"][guard] is False
    facts.collect(ROOT)


@pytest.mark.parametrize(("guard", "path", "guarded", "without"), PLUGIN_GUARDS, ids=lambda v: str(v)[:24])
def test_removing_a_guard_from_macos_ps_or_windows_conpty_turns_its_fact_false(
    tree: Path, guard: str, path: str, guarded: str, without: str
) -> None:
    _remove_one_guard(tree, guard, path, guarded, without)


def test_comments_and_layout_change_no_fact_and_no_hash(tree: Path) -> None:
    before = facts.collect(tree)
    for path in {path for path, _names in facts.COVERED.items()}:
        file = tree / path
        lines = []
        for line in file.read_text().splitlines():
            lines.append(line)
            # a comment after every statement that opens a block, and one more blank line
            if re.match(r"\s*(if|for|while|try|def)\b.*:\s*$", line):
                indent = re.match(r"\s*", line).group(0) + "    "  # type: ignore[union-attr]
                lines.append(f"{indent}# a comment that changes nothing")
        file.write_text("\n".join(lines) + "\n\n")
    after = facts.collect(tree)
    facts.collect(ROOT)
    assert after["guards"] == before["guards"]
    assert after["hashes"] == before["hashes"]
    assert after["callSites"] == before["callSites"]


def test_a_changed_line_in_a_covered_function_is_drift(tree: Path) -> None:
    before = facts.collect(tree)
    file = tree / "agent_tty/lifecycle/gc.py"
    file.write_text(file.read_text().replace("RM_RETRY_DELAYS_S, None", "RM_RETRY_DELAYS_S, 0.05, None"))
    after = facts.collect(tree)
    facts.collect(ROOT)
    assert facts.compare(before, after) == ["covered code changed: agent_tty/lifecycle/gc.py::_remove"]


@pytest.mark.parametrize(
    ("path", "guarded", "without", "where"),
    [
        ("plugins/linux_cgroup/clone_into.py", "flags=CLONE_INTO_CGROUP,", "flags=0,", "plugins/linux_cgroup/clone_into.py::fork_into"),
        ("plugins/linux_cgroup/__init__.py", '        with open(self.procs, "w") as handle:\n            handle.write("0")', "        pass",
         "plugins/linux_cgroup/__init__.py::Birth.enter"),
        ("plugins/_posix/pty_spawn.py", "            if before_exec is not None:\n                before_exec()\n", "",
         "plugins/_posix/pty_spawn.py::spawn_in_pty"),
    ],
    ids=["clone3-flag", "move-in", "before-exec"],
)
def test_a_removed_placement_of_the_program_is_drift(tree: Path, path: str, guarded: str, without: str, where: str) -> None:
    """ProgramStartsInLeaf is no guard constant of the model (the Cgroup runs assume it): the
    hashes of the spawn's functions stand for it, so removing it reads STALE."""
    before = facts.collect(tree)
    file = tree / path
    assert file.read_text().count(guarded) == 1, f"{path}: the guard moved, update this table"
    file.write_text(file.read_text().replace(guarded, without))
    after = facts.collect(tree)
    facts.collect(ROOT)
    assert facts.compare(before, after) == [f"covered code changed: {where}"]


def test_a_new_kill_site_is_drift(tree: Path) -> None:
    before = facts.collect(tree)
    file = tree / "agent_tty/lifecycle/engine.py"
    file.write_text(file.read_text() + "\n\ndef stray(platform, group):\n    platform.kill_group(group, 9)\n")
    after = facts.collect(tree)
    facts.collect(ROOT)
    assert facts.compare(before, after) == ["call site added: agent_tty/lifecycle/engine.py::stray -> kill_group"]


def test_the_model_the_runs_and_the_facts_name_the_same_guards() -> None:
    import json

    runs = json.loads((ROOT / "model" / "runs.json").read_text())
    spec = (ROOT / "model" / "SessionLifecycle.tla").read_text()
    constants = spec[spec.index("CONSTANTS") : spec.index("VARIABLES")]
    assert set(runs["guards"]) == set(facts.GUARDS)
    assert all(re.search(rf"\b{name}\b", constants) for name in runs["guards"])
    # every guard has a mutant run: the check can fail without it
    mutated = {name for run in runs["runs"] for name, value in run["constants"].items() if value is False and name in facts.GUARDS}
    assert mutated == set(facts.GUARDS)


# Guards the model got for issue 24 (item 3): removing each from the code turns its fact FALSE.
NEW_GUARDS = [
    ("ForceSkipsUnreadableGroup", "agent_tty/lifecycle/destroy.py",
     "            if not unreadable(err):\n                raise\n            reason = err.message", "            raise"),
    ("ForceSkipsUnreadableGroup", "agent_tty/lifecycle/destroy.py",
     "    blind = _unchecked_group(engine, paths, again)\n    if blind is not None:", "    blind = None\n    if blind is not None:"),
    ("ReconcileSkipsTerminal", "agent_tty/lifecycle/reconcile.py",
     "    if is_terminal(manifest.status):\n        return Reconciled(repair_marked(engine, paths, manifest), None)\n", ""),
]


@pytest.mark.parametrize(("guard", "path", "guarded", "without"), NEW_GUARDS, ids=lambda v: str(v)[:32])
def test_removing_a_newly_modelled_guard_turns_its_fact_false(
    tree: Path, guard: str, path: str, guarded: str, without: str
) -> None:
    _remove_one_guard(tree, guard, path, guarded, without)
