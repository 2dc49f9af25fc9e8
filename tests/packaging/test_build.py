"""agent-tty's sdist and wheel build (the wheel from the sdist, as `python -m build` does), pass
`twine check --strict`, and say what they must: an SPDX license with its file, the classifiers,
typer with no upper bound, every module of the checkout."""

from __future__ import annotations

import configparser
import email.parser
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.packaging.conftest import ROOT_ONLY, copy_source, tail

pytestmark = [ROOT_ONLY, pytest.mark.timeout(600)]


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path
    python: Path
    """The interpreter of the temp venv that holds build and twine."""
    source: Path
    """The copy of the checkout they were built from (the checkout may change meanwhile)."""

    @property
    def version(self) -> str:
        text = (self.source / "agent_tty" / "__init__.py").read_text()
        return re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)[1]  # type: ignore[index]

    @property
    def declared_typer(self) -> Requirement:
        """typer's requirement in pyproject.toml (`typer>=0.19` now; `typer>=0.12` before)."""
        project = tomllib.loads((self.source / "pyproject.toml").read_text())["project"]
        return next(Requirement(d) for d in project["dependencies"] if Requirement(d).name == "typer")


@pytest.fixture(scope="session")
def dists(pypi: None, tmp_path_factory: pytest.TempPathFactory) -> Dists:
    tools = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True, capture_output=True, timeout=120)
    python = tools / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "build", "twine"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if installed.returncode != 0:
        pytest.skip(f"build and twine do not install here: {tail(installed.stderr, 3)}")
    source = copy_source(tmp_path_factory, "build-source")
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [str(python), "-m", "build", "--outdir", str(out), str(source)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, f"python -m build failed:\n{tail(built.stdout + built.stderr, 40)}"
    [sdist] = out.glob("*.tar.gz")
    [wheel] = out.glob("*.whl")
    return Dists(sdist, wheel, python, source)


def _wheel_file(dists: Dists, name: str) -> str:
    with zipfile.ZipFile(dists.wheel) as archive:
        return archive.read(f"agent_tty-{dists.version}.dist-info/{name}").decode()


def _metadata(text: str) -> Message:
    return email.parser.Parser().parsestr(text)


def _sdist_bytes(dists: Dists, name: str) -> bytes:
    with tarfile.open(dists.sdist) as archive:
        member = archive.extractfile(f"agent_tty-{dists.version}/{name}")
        assert member is not None, name
        return member.read()


def _sdist_file(dists: Dists, name: str) -> str:
    return _sdist_bytes(dists, name).decode()


def test_sdist_and_wheel_are_built(dists: Dists) -> None:
    assert dists.sdist.name == f"agent_tty-{dists.version}.tar.gz"
    assert dists.wheel.name == f"agent_tty-{dists.version}-py3-none-any.whl"


def test_twine_check_strict(dists: Dists) -> None:
    done = subprocess.run(
        [str(dists.python), "-m", "twine", "check", "--strict", str(dists.sdist), str(dists.wheel)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def _check_license_and_requirements(meta: Message, dists: Dists) -> None:
    assert meta["Name"] == "agent-tty"
    assert meta["Version"] == dists.version
    # License-Expression needs core metadata 2.4 (PEP 639).
    assert tuple(int(p) for p in meta["Metadata-Version"].split(".")) >= (2, 4), meta["Metadata-Version"]
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["License"] is None, "the old free-text License field next to License-Expression"
    classifiers = meta.get_all("Classifier") or []
    for expected in (
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.11",
    ):
        assert expected in classifiers, classifiers
    assert not [c for c in classifiers if c.startswith("License ::")], "PEP 639: no license classifier"
    assert meta["Requires-Python"] == ">=3.11"
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    [typer] = [r for r in requires if r.name == "typer"]
    assert typer == dists.declared_typer, f"typer as pyproject.toml declares it: {typer}"
    assert typer.marker is None and not typer.extras
    # No upper bound: one lower bound only, any typer from it to the newest.
    assert [s.operator for s in typer.specifier] == [">="], f"typer must have no upper bound: {typer}"


def test_wheel_metadata(dists: Dists) -> None:
    meta = _metadata(_wheel_file(dists, "METADATA"))
    _check_license_and_requirements(meta, dists)
    assert _wheel_file(dists, "licenses/LICENSE") == (dists.source / "LICENSE").read_text()
    assert (dists.source / "LICENSE").read_text().startswith("MIT License")


def test_sdist_metadata(dists: Dists) -> None:
    _check_license_and_requirements(_metadata(_sdist_file(dists, "PKG-INFO")), dists)
    assert _sdist_file(dists, "LICENSE") == (dists.source / "LICENSE").read_text()
    assert _sdist_file(dists, "pyproject.toml") == (dists.source / "pyproject.toml").read_text()


def test_wheel_holds_every_module(dists: Dists) -> None:
    """[tool.setuptools] lists the packages by hand: a new one missing there would not ship."""
    expected = {
        f"{installed}/{path.relative_to(dists.source / folder).as_posix()}"
        for folder, installed in (("agent_tty", "agent_tty"), ("plugins", "agent_tty_plugins"))
        for path in (dists.source / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    with zipfile.ZipFile(dists.wheel) as archive:
        shipped = set(archive.namelist())
    assert not expected - shipped, f"modules missing from the wheel: {sorted(expected - shipped)}"


def test_wheel_and_sdist_hold_the_shipped_fonts_and_their_licence(dists: Dists) -> None:
    """The screenshot fonts are package data (ADR 0039): a font, OFL.txt or SHA256SUMS left out
    of [tool.setuptools.package-data] would leave screenshots without glyphs or a licence."""
    folder = dists.source / "agent_tty" / "fonts"
    data = sorted(path.name for path in folder.iterdir() if path.suffix != ".py" and path.name != "__pycache__")
    assert "OFL.txt" in data and "SHA256SUMS" in data and any(name.endswith(".ttf") for name in data)
    with zipfile.ZipFile(dists.wheel) as archive:
        shipped = set(archive.namelist())
    assert not [name for name in data if f"agent_tty/fonts/{name}" not in shipped], "fonts data missing from the wheel"
    for name in data:
        assert _sdist_bytes(dists, f"agent_tty/fonts/{name}") == (folder / name).read_bytes(), name


def test_wheel_entry_points(dists: Dists) -> None:
    points = configparser.ConfigParser()
    points.optionxform = str  # type: ignore[assignment,method-assign]
    points.read_string(_wheel_file(dists, "entry_points.txt"))
    assert dict(points["console_scripts"]) == {"agent-tty": "agent_tty.cli.main:main"}
    assert dict(points["agent_tty.platform"]) == {
        "linux_cgroup": "agent_tty_plugins.linux_cgroup",
        "linux_autogroup": "agent_tty_plugins.linux_autogroup",
        "macos_ps": "agent_tty_plugins.macos_ps",
        "windows_conpty": "agent_tty_plugins.windows_conpty",
    }
    assert dict(points["pytest11"]) == {"agent_tty": "agent_tty.pytest_plugin"}


def test_a_pip_install_leaves_bytecode_so_the_first_call_compiles_nothing(dists: Dists, tmp_path: Path) -> None:
    """pip compiles the wheel's modules at install (uv needs --compile-bytecode: README), so the
    first command after install is as quick as the tenth (issue 26): the hot path's modules
    have their .pyc, and a first call writes none."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--no-deps", str(dists.wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, tail(installed.stderr, 10)
    [site] = (venv / "lib").glob("python3*/site-packages")
    package = site / "agent_tty"
    for module in ("cli/main.py", "cli/argtable.py", "cli/fastparse.py", "cli/output.py", "cli/commands/version.py"):
        source = package / module
        assert list(source.parent.joinpath("__pycache__").glob(f"{source.stem}.*.pyc")), f"no bytecode for {module}"
    before = sorted(str(p) for p in package.rglob("*.pyc"))
    done = subprocess.run([str(venv / "bin" / "agent-tty"), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(str(p) for p in package.rglob("*.pyc")) == before, "the first call compiled modules the install had not"
