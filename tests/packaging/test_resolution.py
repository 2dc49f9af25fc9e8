"""agent-tty resolves on every platform it may be installed on, pyghostty exactly where it has
wheels, the `fast` extra fails only where the documented limit says, and the MCP SDK with its HTTP
stack comes with the `mcp` extra only (ADR 0035), which resolves everywhere.

pip reads environment markers from the interpreter it runs in, not from --platform (pypa/pip
#6117, #10050): resolving the wheel for macosx_14_0_arm64 here drops pyghostty, because
`sys_platform == 'darwin'` is false on this Linux. So each target's markers are evaluated here,
with packaging, in that target's marker environment (conftest.TARGETS), for agent-tty's own
Requires-Dist and then for every resolved dependency's; pip resolves the requirements that apply
with --only-binary=:all: and every platform tag the target accepts. Only
test_pip_agrees_on_this_machine gives pip the wheel itself, for the one target whose markers
are this machine's.
"""

from __future__ import annotations

import functools
import platform
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.packaging.conftest import (
    ROOT_ONLY,
    TARGETS,
    Resolution,
    applies,
    bare,
    foreign_files,
    requires_dist,
    resolve,
    resolve_wheel_here,
    wheel_metadata,
)

pytestmark = [ROOT_ONLY, pytest.mark.timeout(600)]

MACOS_13_UP = {"macosx_13_0_x86_64", "macosx_14_0_arm64"}

DEFAULT_HAS_PYGHOSTTY = MACOS_13_UP
"""By default pyghostty comes only where every machine can take its wheel: macOS 13+."""

FAST = {
    "manylinux_2_28_x86_64": "with",
    "manylinux_2_28_aarch64": "with",
    "macosx_13_0_x86_64": "with",
    "macosx_14_0_arm64": "with",
    "macosx_11_0_x86_64": "without",
    "win_amd64": "without",
    # The documented limit: a marker cannot see libc or its version, so `agent-tty[fast]` on
    # glibc < 2.27 or musl asks for a wheel that does not exist, and pip says so.
    "manylinux_2_17_x86_64": "fails",
    "manylinux_2_17_aarch64": "fails",
    "musllinux_1_2_x86_64": "fails",
    "musllinux_1_2_aarch64": "fails",
}

MCP_STACK = ("mcp", "mcp-types", "starlette", "uvicorn", "sse-starlette", "httpx", "httpx2", "python-multipart", "pyjwt")
"""The MCP SDK and what it brings for its HTTP transports: none of it in a default install."""

HOST = f"manylinux_2_28_{platform.machine()}" if sys.platform == "linux" else None
"""The target whose marker environment is this machine's (pip reads markers right for it)."""


def _has_pyghostty(resolution: Resolution) -> bool:
    return "pyghostty" in resolution.packages


@pytest.fixture(scope="session")
def resolutions(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Resolution]:
    """Every resolution this module judges, run concurrently once."""
    requirements = requires_dist(wheel_metadata(wheel))
    workdir = tmp_path_factory.mktemp("resolve")
    asked: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
    for name, target in TARGETS.items():
        for mode, extras in (("default", ()), ("fast", ("fast",)), ("mcp", ("mcp",))):
            chosen = [r for r in requirements if applies(r, target.env, extras)]
            asked[(mode, name)] = (name, tuple(sorted({bare(r) for r in chosen})))
    # The check itself must be able to fail: pyghostty as an unconditional default dependency.
    musl = TARGETS["musllinux_1_2_x86_64"]
    broken = [r for r in requirements if r.name != "pyghostty"] + [Requirement("pyghostty>=0.1.3")]
    asked[("unconditional-pyghostty", musl.name)] = (
        musl.name,
        tuple(sorted({bare(r) for r in broken if applies(r, musl.env)})),
    )
    # One pip run for each distinct (target, requirements): on macOS 13+ the default install
    # already has pyghostty, elsewhere off Linux `fast` adds nothing.
    signatures = sorted(set(asked.values()))
    jobs: list[Callable[[], Resolution]] = [
        functools.partial(resolve, TARGETS[name], [Requirement(r) for r in chosen], workdir)
        for name, chosen in signatures
    ]
    if HOST in TARGETS:
        jobs.append(functools.partial(resolve_wheel_here, wheel, "[fast]", TARGETS[HOST], workdir))
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=5) as pool:
        results = list(pool.map(lambda job: job(), jobs))
    done = {key: results[signatures.index(signature)] for key, signature in asked.items()}
    if HOST in TARGETS:
        done[("wheel[fast]", HOST)] = results[-1]
    print(f"\n{len(jobs)} pip resolutions in {time.monotonic() - started:.1f} s")
    for (mode, name), r in sorted(done.items(), key=lambda item: (item[0][1], item[0][0])):
        state = f"{len(r.packages)} packages" if r.ok else "FAILS: " + r.error.splitlines()[-1]
        notes = "".join(
            f" {label} {values}" for label, values in (("added", r.added), ("host-only", r.host_only)) if values
        )
        print(f"  {name:24} {mode:24} {state}{' +pyghostty' if 'pyghostty' in r.packages else ''}{notes}")
    return done


@pytest.mark.parametrize("name", list(TARGETS))
def test_default_install_resolves(name: str, resolutions: dict[tuple[str, str], Resolution]) -> None:
    resolution = resolutions[("default", name)]
    assert resolution.ok, resolution.describe()
    assert not foreign_files(resolution), f"not wheels for {name}: {foreign_files(resolution)}"
    assert _has_pyghostty(resolution) == (name in DEFAULT_HAS_PYGHOSTTY), resolution.describe()
    # The terminal and screen a session needs are there on every platform.
    windows = name.startswith("win")
    for package in ("typer", "click", "pluggy", "pyte", "pillow", "fontpkg-jetbrains-mono", "psutil"):
        assert package in resolution.packages, resolution.describe()
    # The terminal: ptyprocess (POSIX-only) off Windows, pywinpty (ConPTY) on it, never both.
    assert ("ptyprocess" in resolution.packages) != windows, resolution.describe()
    assert ("pywinpty" in resolution.packages) == windows, resolution.describe()
    # No MCP SDK and no HTTP stack: `agent-tty mcp` is the `mcp` extra's (issue 29.10).
    assert not [p for p in MCP_STACK if p in resolution.packages], resolution.describe()


@pytest.mark.parametrize("name", list(TARGETS))
def test_mcp_extra(name: str, resolutions: dict[tuple[str, str], Resolution]) -> None:
    """`agent-tty[mcp]` installs everywhere the default does, with the SDK on top of it."""
    resolution = resolutions[("mcp", name)]
    assert resolution.ok, resolution.describe()
    assert not foreign_files(resolution), f"not wheels for {name}: {foreign_files(resolution)}"
    assert "mcp" in resolution.packages and "mcp-types" in resolution.packages, resolution.describe()
    default = resolutions[("default", name)]
    assert set(default.packages) <= set(resolution.packages), sorted(set(default.packages) - set(resolution.packages))


@pytest.mark.parametrize("name", list(TARGETS))
def test_fast_extra(name: str, resolutions: dict[tuple[str, str], Resolution]) -> None:
    resolution = resolutions[("fast", name)]
    expected = FAST[name]
    if expected == "fails":
        assert not resolution.ok, (
            "agent-tty[fast] resolved where pyghostty had no wheel (if it ships one here now, move "
            f"this platform in FAST and say so in docs/USAGE.md): {resolution.describe()}"
        )
        assert "pyghostty" in resolution.error, resolution.error
        # The same machine's default install does not have that problem.
        assert resolutions[("default", name)].ok
        return
    assert resolution.ok, resolution.describe()
    assert not foreign_files(resolution), f"not wheels for {name}: {foreign_files(resolution)}"
    assert _has_pyghostty(resolution) == (expected == "with"), resolution.describe()


def test_every_target_is_judged() -> None:
    assert set(FAST) == set(TARGETS)
    assert DEFAULT_HAS_PYGHOSTTY <= set(TARGETS)


def test_unconditional_pyghostty_would_fail(resolutions: dict[tuple[str, str], Resolution]) -> None:
    """The resolution check can go red: pyghostty as a plain default dependency breaks musl."""
    resolution = resolutions[("unconditional-pyghostty", "musllinux_1_2_x86_64")]
    assert not resolution.ok, resolution.describe()
    assert "pyghostty" in resolution.error, resolution.error


@pytest.mark.skipif(HOST not in TARGETS, reason="needs Linux on x86_64 or aarch64")
def test_pip_agrees_on_this_machine(resolutions: dict[tuple[str, str], Resolution]) -> None:
    """Where the target's markers are this machine's, pip given the wheel itself
    (`agent-tty[fast] @ file://...`, every marker its own) resolves exactly what the marker
    evaluation above resolves: the evaluation is pip's, only moved to the target."""
    assert HOST is not None
    ours = resolutions[("fast", HOST)]
    pips = resolutions[("wheel[fast]", HOST)]
    assert pips.ok, pips.describe()
    assert ours.ok, ours.describe()
    assert not ours.added and not ours.host_only, ours.describe()
    assert {n: v for n, v in pips.packages.items() if n != "agent-tty"} == ours.packages
