"""The quick test run's shards: every test file but tests/packaging, in SHARDS lists of about
equal weight, for scripts/test to run side by side (the tests mostly wait on real processes).

    python3 scripts/test_shards.py K      # the files of shard K (0-based), one a line

A file's weight is its number of test functions, each integration-style one (it starts real
hosts) counting WAITING times a unit test. Shards are filled greedily, heaviest file first, so
the split is the same on every machine.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARDS = 2
WAITING = 20
"""How many unit tests one test that starts real sessions weighs, roughly (measured: a unit test
takes ~0.2 s, an integration test ~4 s)."""
_TEST = re.compile(r"^(?:async )?def test_", re.MULTILINE)


def test_files() -> list[Path]:
    tests = ROOT / "tests"
    return sorted(
        path for path in tests.rglob("test_*.py") if "packaging" not in path.relative_to(tests).parts
    )


def weight(path: Path) -> int:
    count = max(1, len(_TEST.findall(path.read_text())))
    return count if path.relative_to(ROOT).parts[1] == "unit" else count * WAITING


def shards(count: int = SHARDS) -> list[list[str]]:
    loads = [0] * count
    chosen: list[list[str]] = [[] for _ in range(count)]
    for path in sorted(test_files(), key=lambda p: (-weight(p), str(p))):
        lightest = loads.index(min(loads))
        loads[lightest] += weight(path)
        chosen[lightest].append(str(path.relative_to(ROOT)))
    return [sorted(files) for files in chosen]


if __name__ == "__main__":
    print("\n".join(shards()[int(sys.argv[1])]))
