"""The guard mutation table still points at real code: a moved guard must be re-pointed, not
silently dropped from the proof (scripts/guard_mutations.py runs the mutations themselves)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_guard_snippet_is_in_its_file_exactly_once() -> None:
    spec = importlib.util.spec_from_file_location("guard_mutations", ROOT / "scripts" / "guard_mutations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for guard, (edits, node) in module.MUTATIONS.items():
        for path, guarded, _without in edits:
            assert (ROOT / path).read_text().count(guarded) == 1, f"{guard}: its code moved in {path}"
        test_file, _, name = node.partition("::")
        assert name.split("[")[0] in (ROOT / test_file).read_text(), f"{guard}: {node} is gone"


def test_lifecycle_doc_lists_every_guard_the_runner_proves() -> None:
    spec = importlib.util.spec_from_file_location("guard_mutations", ROOT / "scripts" / "guard_mutations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = (ROOT / "docs" / "lifecycle.md").read_text()
    for guard, (_edits, node) in module.MUTATIONS.items():
        assert f"| {guard} | `{node}` |" in doc, f"docs/lifecycle.md's guard table lacks {guard}"
    assert f"({len(module.MUTATIONS)} entries.)" in doc
