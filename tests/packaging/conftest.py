"""How agent-tty installs: the fixtures and helpers of tests/packaging.

These tests build the package and ask PyPI, through this suite's own pip, what an install would
get on machines other than this one. They run once, in the root pass of scripts/test (a module
skips when not root), and skip when PyPI cannot be reached. Everything is built from a copy of
the checkout in a temp folder, so no build/ or *.egg-info is left in the source tree.

`AGENT_TTY_TEST_WHEEL=/path/to/agent_tty-*.whl` makes the resolution tests judge that wheel
instead of one built from this checkout (how a deliberately broken wheel is shown to fail).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]

ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="packaging tests run once, in the root pass of the suite (they build and ask PyPI)",
)

PYTHON = (3, 11)
"""The interpreter every target is resolved for (CPython, the lowest agent-tty supports)."""

PIP_TIMEOUT = 300


def pip(*args: str, timeout: float = PIP_TIMEOUT, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """This suite's own pip (`sys.executable -m pip`), quiet about its own version."""
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    return subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def tail(text: str, lines: int = 15) -> str:
    """The end of pip's output without its noise about missing local index folders."""
    kept = [line for line in text.splitlines() if "is ignored: it is neither a file nor a directory" not in line]
    return "\n".join(kept[-lines:])


# --- the machines an install is judged on --------------------------------------------------------


def _manylinux(glibc_minor: int, arch: str) -> list[str]:
    """Every platform tag pip on a glibc 2.`glibc_minor` machine accepts, best first.

    pip's --platform does not expand a PEP 600 tag (manylinux_2_28 does not bring manylinux_2_17
    or manylinux2014 with it, pip 23.x), while pip running on such a machine accepts them all:
    so every one is passed."""
    lowest = 5 if arch in ("x86_64", "i686") else 17
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    tags = []
    for minor in range(glibc_minor, lowest - 1, -1):
        tags.append(f"manylinux_2_{minor}_{arch}")
        if minor in legacy:
            tags.append(f"{legacy[minor]}_{arch}")
    return tags


def _musllinux(musl_minor: int, arch: str) -> list[str]:
    return [f"musllinux_1_{minor}_{arch}" for minor in range(musl_minor, -1, -1)]


def _macos(major: int, minor: int, arch: str) -> list[str]:
    """pip expands a macosx tag itself; the same expansion (packaging's) is passed explicitly so
    the result does not depend on the pip version."""
    return list(mac_platforms((major, minor), arch))


_PYTHON_ENV = {
    "implementation_name": "cpython",
    "implementation_version": f"{PYTHON[0]}.{PYTHON[1]}.9",
    "platform_python_implementation": "CPython",
    "python_version": f"{PYTHON[0]}.{PYTHON[1]}",
    "python_full_version": f"{PYTHON[0]}.{PYTHON[1]}.9",
}


def _linux_env(arch: str) -> dict[str, str]:
    return {
        **_PYTHON_ENV,
        "os_name": "posix",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": arch,
        "platform_release": "6.1.0-18-amd64" if arch == "x86_64" else "6.1.0-18-arm64",
        "platform_version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1",
    }


def _macos_env(major: int, arch: str) -> dict[str, str]:
    # macOS 11 is Darwin 20, 13 is Darwin 22, 14 is Darwin 23: platform_release is Darwin's.
    darwin = major + 9
    return {
        **_PYTHON_ENV,
        "os_name": "posix",
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "platform_machine": arch,
        "platform_release": f"{darwin}.6.0",
        "platform_version": f"Darwin Kernel Version {darwin}.6.0",
    }


_WINDOWS_ENV = {
    **_PYTHON_ENV,
    "os_name": "nt",
    "sys_platform": "win32",
    "platform_system": "Windows",
    "platform_machine": "AMD64",
    "platform_release": "10",
    "platform_version": "10.0.19045",
}


@dataclass(frozen=True)
class Target:
    """A machine an install is judged on: the platform tags its pip accepts and its PEP 508
    marker environment (what `packaging.markers.default_environment()` says there)."""

    name: str
    platforms: tuple[str, ...]
    env: Mapping[str, str]

    def tags(self) -> set[Tag]:
        """The wheel tags pip would accept there for CPython 3.11."""
        return set(cpython_tags(PYTHON, ["cp311"], self.platforms)) | set(
            compatible_tags(PYTHON, "cp311", self.platforms)
        )


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("manylinux_2_17_x86_64", tuple(_manylinux(17, "x86_64")), _linux_env("x86_64")),
        Target("manylinux_2_28_x86_64", tuple(_manylinux(28, "x86_64")), _linux_env("x86_64")),
        Target("manylinux_2_17_aarch64", tuple(_manylinux(17, "aarch64")), _linux_env("aarch64")),
        Target("manylinux_2_28_aarch64", tuple(_manylinux(28, "aarch64")), _linux_env("aarch64")),
        Target("musllinux_1_2_x86_64", tuple(_musllinux(2, "x86_64")), _linux_env("x86_64")),
        Target("musllinux_1_2_aarch64", tuple(_musllinux(2, "aarch64")), _linux_env("aarch64")),
        Target("macosx_11_0_x86_64", tuple(_macos(11, 0, "x86_64")), _macos_env(11, "x86_64")),
        Target("macosx_13_0_x86_64", tuple(_macos(13, 0, "x86_64")), _macos_env(13, "x86_64")),
        Target("macosx_14_0_arm64", tuple(_macos(14, 0, "arm64")), _macos_env(14, "arm64")),
        Target("win_amd64", ("win_amd64",), _WINDOWS_ENV),
    )
}


# --- markers, evaluated for the target ------------------------------------------------------------


def applies(requirement: Requirement, env: Mapping[str, str], extras: Iterable[str] = ()) -> bool:
    """Whether `requirement` is installed on a machine with marker environment `env` when the
    package it belongs to is installed with `extras`."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({**env, "extra": extra}) for extra in ("", *extras))


def bare(requirement: Requirement) -> str:
    """The requirement without its marker (already evaluated for the target)."""
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"


def requires_dist(metadata_text: str) -> list[Requirement]:
    return [
        Requirement(line.split(":", 1)[1].strip())
        for line in metadata_text.splitlines()
        if line.startswith("Requires-Dist:")
    ]


def wheel_metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
        return archive.read(name).decode()


# --- resolving through pip ---------------------------------------------------------------------


@dataclass
class Resolution:
    """What pip resolves for a target: `ok`, the packages (canonical name → version), the files
    it would install, and for a failure pip's last lines."""

    target: Target
    requirements: list[str]
    ok: bool
    packages: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    error: str = ""
    added: list[str] = field(default_factory=list)
    """Requirements of dependencies that apply on the target but not here, added by hand."""
    host_only: list[str] = field(default_factory=list)
    """Packages pip took in only because a dependency's marker holds here, not on the target."""

    def describe(self) -> str:
        if not self.ok:
            return f"{self.target.name}: FAILS for {self.requirements}\n{self.error}"
        return f"{self.target.name}: {sorted(self.packages.items())}"


def _pip_resolve(target: Target, requirements: list[str], workdir: Path) -> tuple[dict | None, str]:
    report = workdir / f"report-{uuid.uuid4().hex}.json"
    done = pip(
        "install",
        "--dry-run",
        "--ignore-installed",
        "--only-binary=:all:",
        # pip 23 refuses --platform without --target even with --dry-run; nothing is written.
        "--target",
        str(workdir / f"target-{uuid.uuid4().hex}"),
        "--implementation",
        "cp",
        "--python-version",
        f"{PYTHON[0]}.{PYTHON[1]}",
        "--abi",
        "cp311",
        *(f"--platform={p}" for p in target.platforms),
        "--report",
        str(report),
        "--quiet",
        *requirements,
    )
    if done.returncode != 0:
        return None, tail(done.stderr + done.stdout)
    return json.loads(report.read_text()), ""


def _closure(report: dict, target: Target, top: list[Requirement]) -> tuple[list[Requirement], set[str]]:
    """Walk the resolved packages' own requirements with the target's markers.

    pip evaluates every marker against the interpreter it runs in, never the target (pypa/pip
    #6117, #10050): a dependency's `platform_system == "Windows"` requirement is dropped when
    resolving for win_amd64 here. Returns the requirements that apply on the target but are
    missing or unmet in the resolution, and the packages the target needs."""
    resolved = {str(canonicalize_name(item["metadata"]["name"])): item["metadata"] for item in report["install"]}
    missing: list[Requirement] = []
    needed: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    queue = list(top)
    while queue:
        requirement = queue.pop()
        name = str(canonicalize_name(requirement.name))
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        meta = resolved.get(name)
        if meta is None or not requirement.specifier.contains(meta["version"], prereleases=True):
            missing.append(requirement)
            continue
        needed.add(name)
        for line in meta.get("requires_dist", []):
            dependency = Requirement(line)
            if applies(dependency, target.env, requirement.extras):
                queue.append(dependency)
    return missing, needed


def resolve(target: Target, requirements: Iterable[Requirement], workdir: Path) -> Resolution:
    """Resolve `requirements` (already chosen for the target) with the target's wheels, then
    add whatever a dependency needs on the target that pip, reading markers here, left out."""
    top = [Requirement(bare(r)) for r in requirements]
    wanted = [bare(r) for r in top]
    added: list[str] = []
    for _ in range(5):
        report, error = _pip_resolve(target, wanted + added, workdir)
        if report is None:
            return Resolution(target, wanted + added, ok=False, error=error, added=added)
        missing, needed = _closure(report, target, top + [Requirement(a) for a in added])
        if not missing:
            break
        added += [bare(m) for m in missing if bare(m) not in added]
    else:
        raise AssertionError(f"{target.name}: the resolution did not settle: {added}")
    packages = {str(canonicalize_name(i["metadata"]["name"])): i["metadata"]["version"] for i in report["install"]}
    files = [i["download_info"]["url"].rsplit("/", 1)[-1] for i in report["install"]]
    host_only = sorted(set(packages) - needed)
    return Resolution(target, wanted + added, True, packages, files, added=added, host_only=host_only)


def resolve_wheel_here(wheel: Path, extras: str, target: Target, workdir: Path) -> Resolution:
    """pip's own resolution of the wheel file for `target`, markers read here (no help)."""
    spec = f"agent-tty{extras} @ {wheel.as_uri()}"
    report, error = _pip_resolve(target, [spec], workdir)
    if report is None:
        return Resolution(target, [spec], ok=False, error=error)
    packages = {str(canonicalize_name(i["metadata"]["name"])): i["metadata"]["version"] for i in report["install"]}
    files = [i["download_info"]["url"].rsplit("/", 1)[-1] for i in report["install"]]
    return Resolution(target, [spec], True, packages, files)


def foreign_files(resolution: Resolution) -> list[str]:
    """Files in a resolution that are not wheels the target accepts (should be none)."""
    accepted = resolution.target.tags()
    bad = []
    for name in resolution.files:
        if not name.endswith(".whl"):
            bad.append(name)
            continue
        *_, tags = parse_wheel_filename(name)
        if not (set(tags) & accepted):
            bad.append(name)
    return bad


# --- fixtures --------------------------------------------------------------------------------------


def _ignore(folder: str, names: list[str]) -> set[str]:
    """What a copy of the checkout leaves out: what .gitignore lists, and the venv and git."""
    here = Path(folder).resolve()
    skip = {n for n in names if n in {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache"}}
    skip |= {n for n in names if n.endswith(".egg-info") or n in {"build", "dist"}}
    for parent, name in (("model", ".cache"), ("model", "results"), ("bench", "results")):
        if here == REPO / parent and name in names:
            skip.add(name)
    return skip


@pytest.fixture(scope="session")
def pypi(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skips every packaging test when PyPI cannot be reached (probed once: one Windows wheel's
    metadata, which no local wheel folder of this machine holds)."""
    where = tmp_path_factory.mktemp("pypi-probe")
    try:
        probe = "--dry-run --ignore-installed --no-deps --only-binary=:all: --platform=win_amd64"
        python = "--python-version=3.11 --implementation=cp --abi=cp311 --timeout=10 --retries=0 -q"
        done = pip("install", *probe.split(), *python.split(), f"--target={where}", "pywinpty", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.skip("PyPI is unreachable: pip did not answer within 60 s")
    if done.returncode != 0:
        pytest.skip(f"PyPI is unreachable (pip got no win_amd64 pywinpty from it): {tail(done.stderr, 1)}")


@pytest.fixture(autouse=True)
def _needs_pypi(pypi: None) -> None:
    """Every packaging test skips, with the probe's reason, where PyPI cannot be reached."""


def copy_source(tmp_path_factory: pytest.TempPathFactory, purpose: str) -> Path:
    """A fresh copy of the checkout without .git, .venv or build output, to build in (each
    build its own: setuptools leaves build/ and *.egg-info where it builds)."""
    target = tmp_path_factory.mktemp(purpose) / "agent-tty"
    shutil.copytree(REPO, target, ignore=_ignore)
    return target


def _setuptools_version() -> Version | None:
    try:
        return Version(importlib_metadata.version("setuptools"))
    except importlib_metadata.PackageNotFoundError:
        return None


@pytest.fixture(scope="session")
def wheel(pypi: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """agent-tty's wheel, built once from the copy (or the one AGENT_TTY_TEST_WHEEL names)."""
    given = os.environ.get("AGENT_TTY_TEST_WHEEL")
    if given:
        return Path(given).resolve()
    source = copy_source(tmp_path_factory, "wheel-source")
    out = tmp_path_factory.mktemp("wheel")
    # The build backend wants setuptools>=77: without build isolation only if this venv has it.
    setuptools = _setuptools_version()
    isolation = [] if setuptools is None or setuptools < Version("77") else ["--no-build-isolation"]
    done = pip("wheel", "--no-deps", *isolation, "--quiet", "-w", str(out), str(source))
    assert done.returncode == 0, f"pip wheel failed:\n{tail(done.stderr + done.stdout, 40)}"
    [built] = out.glob("agent_tty-*.whl")
    return built
