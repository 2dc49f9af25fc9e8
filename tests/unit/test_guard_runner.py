"""The mutation runner's verdicts: only a failed test is red, and anything but red fails the run
(CI runs scripts/guard_mutations.py through scripts/test-mutations and fails on its exit status)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUARDED = "def allowed(n):\n    if n < 0:\n        return False\n    return True\n"


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("guard_mutations", ROOT / "scripts" / "guard_mutations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tree with one guard and two tests: one sees the guard, one passes without it."""
    (tmp_path / "guarded.py").write_text(GUARDED)
    (tmp_path / "test_guarded.py").write_text(
        "from guarded import allowed\n\n\n"
        "def test_sees_the_guard():\n    assert not allowed(-1)\n\n\n"
        "def test_blind():\n    assert allowed(1)\n\n\n"
        "def test_skipped():\n    import pytest\n    pytest.skip('needs root')\n\n\n"
        # Sees the missing guard only on its second run, as a race test that loses by chance.
        "def test_by_chance():\n    import pathlib\n    seen = pathlib.Path(__file__).with_name('tried')\n"
        "    if seen.exists():\n        assert not allowed(-1)\n    seen.touch()\n"
    )
    return tmp_path


GUARD = ("guarded.py", "    if n < 0:\n        return False\n", "")


@pytest.mark.parametrize(
    ("edit", "node", "status", "verdict"),
    [
        (GUARD, "test_guarded.py::test_sees_the_guard", 0, "1 of 1 entries red in"),
        (GUARD, "test_guarded.py::test_blind", 1, "0 of 1 entries red (1 GREEN)"),
        (GUARD, "test_guarded.py::test_by_chance", 0, "1 of 1 entries red in"),
        (("guarded.py", "    if n < 1:\n", ""), "test_guarded.py::test_sees_the_guard", 1, "(1 STALE)"),
        (GUARD, "test_guarded.py::test_no_such_test", 1, "(1 NO VERDICT)"),
        (GUARD, "test_guarded.py::test_skipped", 1, "(1 NO VERDICT)"),
        (("guarded.py", "    if n < 0:\n", "    if n < undefined_bound:\n"), "test_guarded.py::test_sees_the_guard", 1, "(1 BROKEN)"),
        (("guarded.py", "    if n < 0:\n", "    if n < (:\n"), "test_guarded.py::test_sees_the_guard", 1, "(1 BROKEN)"),
    ],
    ids=["red", "green", "red-on-a-retry", "stale", "no-such-test", "skipped", "undefined-name", "syntax-error"],
)
def test_only_a_failed_test_is_red(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    edit: tuple[str, str, str], node: str, status: int, verdict: str,
) -> None:
    runner = _runner()
    monkeypatch.setattr(runner, "MUTATIONS", {"Guard": ([edit], node)})
    assert runner.main([], root=project) == status
    assert verdict in capsys.readouterr().out.splitlines()[-1]
    assert (project / "guarded.py").read_text() == GUARDED  # restored


def test_an_unknown_entry_is_refused(project: Path) -> None:
    assert _runner().main(["NoSuchGuard"], root=project) == 2


def test_a_red_on_a_retry_is_named_weak(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    runner = _runner()
    monkeypatch.setattr(runner, "MUTATIONS", {"Guard": ([GUARD], "test_guarded.py::test_by_chance")})
    assert runner.main([], root=project) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "red (weak): green on 1 of 2 tries" in lines[0]
    assert lines[-1].endswith("; red only on a retry: Guard")
