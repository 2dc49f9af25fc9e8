"""scripts/test's quick run covers every test file but tests/packaging, each once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("test_shards", ROOT / "scripts" / "test_shards.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shards_hold_every_test_file_once() -> None:
    module = _module()
    shards = module.shards()
    listed = [name for shard in shards for name in shard]
    assert len(listed) == len(set(listed))
    everything = {
        str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("test_*.py") if not path.is_relative_to(ROOT / "tests" / "packaging")
    }
    assert set(listed) == everything and Path(__file__).relative_to(ROOT).as_posix() in listed
    weights = [sum(module.weight(ROOT / name) for name in shard) for shard in shards]
    assert max(weights) - min(weights) <= max(module.weight(ROOT / name) for name in everything), weights
