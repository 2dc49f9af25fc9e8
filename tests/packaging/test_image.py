"""The Dockerfile builds, unmodified, and its image works.

scripts/build-image-offline builds it with Podman on a stand-in for `python:3.12-slim` made by
debootstrap (no container registry is reachable here; docs/containers.md, "Building the image
here"). The image then runs with runc, as the runtime would start it:

- its default command, `agent-tty doctor`, names the mechanism and Ghostty's screen;
- as its non-root user, a session is created, driven, read back and destroyed, and nothing of it
  is left running in the container;
- started as root (`--user 0`) with no writable cgroup2, the entrypoint drops to `agent` and doctor
  says linux_autogroup and why linux_cgroup was not chosen.

Root only (apt-get, debootstrap, rootful Podman). Skips where Debian's mirror cannot be reached
(probed first) or PyPI cannot (the conftest's probe); a build that fails is a failure. The stand-in
base stays cached (AGENT_TTY_IMAGE_CACHE, default /var/tmp/agent-tty-image) between runs; the image
and every container are removed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.packaging.conftest import REPO, ROOT_ONLY, tail

pytestmark = [ROOT_ONLY, pytest.mark.timeout(1800)]

SCRIPT = REPO / "scripts" / "build-image-offline"
MIRROR = os.environ.get("AGENT_TTY_DEBIAN_MIRROR", "http://deb.debian.org/debian")
BUILD_TIMEOUT = 1500

RUN = [
    "run", "--rm", "--pull=never", "--network", "none",
    "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
]  # fmt: skip
"""`podman run` as this host allows (the runtime, runc, is among the script's global flags): the
image of the storage only, no network (none is needed, and a bridge would change the host's), and
limits below the host's hard ones (Podman's default nofile is above them, and root here has no
CAP_SYS_RESOURCE to raise them)."""

IDLE = 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done'
"""A PID 1 that keeps the container up and reaps what is reparented to it (as `--init` would)."""


@dataclass(frozen=True)
class Image:
    tag: str
    podman_args: list[str]
    """The global flags of the script's own storage (`--root`, `--runroot`, `--runtime runc`, ...)."""

    def podman(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman", *self.podman_args, *args], capture_output=True, text=True, timeout=timeout)


def _mirror_unreachable() -> str | None:
    """Why apt-get and debootstrap cannot reach Debian's mirror, or None (one small GET)."""
    url = f"{MIRROR}/dists/bookworm/Release"
    try:
        with urllib.request.urlopen(url, timeout=15) as answer:
            if b"Codename:" not in answer.read(4096):
                return f"{url} is not a Debian Release file"
    except OSError as error:
        return f"{url}: {error}"
    return None


def _run_script(*args: str) -> tuple[int | None, str]:
    """The script's exit status and output (stderr merged in order); past BUILD_TIMEOUT its whole
    process group (podman build with it) is stopped, and the status is None."""
    script = subprocess.Popen(
        [str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        out, _ = script.communicate(timeout=BUILD_TIMEOUT)
        return script.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(script.pid, signal.SIGTERM)
        try:
            out, _ = script.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(script.pid, signal.SIGKILL)
            out, _ = script.communicate()
        return None, out + f"\n(stopped after {BUILD_TIMEOUT} s)"


@pytest.fixture(scope="module")
def image(pypi: None) -> Iterator[Image]:
    """The image, built by the script under a tag of this run's own; removed afterwards."""
    why = _mirror_unreachable()
    if why is not None:
        pytest.skip(f"Debian's mirror is unreachable (apt-get and debootstrap need it): {why}")
    tag = f"localhost/agent-tty-test:{uuid.uuid4().hex[:12]}"
    listed = subprocess.run([str(SCRIPT), "--podman-args"], capture_output=True, text=True, timeout=30, check=True)
    built = Image(tag, listed.stdout.splitlines())
    started = time.monotonic()
    try:
        returncode, out = _run_script("--tag", tag)
        took = time.monotonic() - started
        if returncode == 3:
            # Not root, not Debian, the mirror gone since the probe, or the tools do not install.
            pytest.skip(f"this machine cannot build the image: {tail(out, 1)}")
        if returncode != 0:
            pytest.fail(
                f"scripts/build-image-offline failed (exit {returncode}) after {took:.0f} s:\n{tail(out, 60)}",
                pytrace=False,
            )
        print(f"\nbuild-image-offline {took:.1f} s: {out.strip().splitlines()[-1]}")
        # Whether this machine runs containers at all, asked of the stand-in base (not our image,
        # whose entrypoint is under test): a runtime the kernel or a sandbox refuses is no fault
        # of the image's.
        probe = built.podman(*RUN, "docker.io/library/python:3.12-slim", "true")
        if probe.returncode != 0:
            pytest.skip(f"the image built, but this machine cannot run containers: {tail(probe.stderr, 3)}")
        yield built
    finally:
        built.podman("rmi", "--force", tag)
        subprocess.run([str(SCRIPT), "--release"], capture_output=True, timeout=60)
        print(f"image tests {time.monotonic() - started:.1f} s in all (build, runs, removal)")


def _ok(done: subprocess.CompletedProcess[str], what: str) -> str:
    assert done.returncode == 0, f"{what} exited {done.returncode}:\n{tail(done.stdout + done.stderr, 30)}"
    return done.stdout


def _doctor_lines(out: str) -> dict[str, str]:
    """doctor's `key   value` lines before its plugin list."""
    lines = {}
    for line in out.split("plugins:", 1)[0].splitlines():
        key, _, value = line.partition(" ")
        lines[key] = value.strip()
    return lines


def test_default_command_is_doctor(image: Image) -> None:
    out = _ok(image.podman(*RUN, image.tag), "the image's default command")
    assert re.search(r"^screen +ghostty$", out, re.M), f"doctor does not report Ghostty's screen:\n{out}"
    mechanism = _doctor_lines(out).get("mechanism", "")
    assert re.fullmatch(r"linux_cgroup|linux_autogroup", mechanism), f"doctor names no Linux mechanism:\n{out}"
    assert re.search(rf"^  ok {mechanism} \(rank \d+\)", out, re.M), out


def test_a_session_as_the_user(image: Image) -> None:
    name = f"agent-tty-test-{uuid.uuid4().hex[:12]}"
    _ok(image.podman(*RUN, "--detach", "--name", name, image.tag, "bash", "-c", IDLE), "podman run --detach")
    try:

        def cli(*args: str) -> str:
            return _ok(image.podman("exec", name, "agent-tty", *args, timeout=90), f"agent-tty {' '.join(args)}")

        assert _ok(image.podman("exec", name, "id", "-un"), "id").strip() == "agent"
        created = json.loads(cli("create", "--json", "--", "bash"))["result"]
        sid = created["sessionId"]
        assert created["status"] == "running", created
        ran = json.loads(cli("run", "--json", sid, "echo hi"))["result"]
        assert ran["completed"] and ran["exitStatus"] == 0, ran
        cli("wait", sid, "--text", "hi", "--timeout", "30s")
        screen = cli("snapshot", sid)
        assert "hi" in [line.strip() for line in screen.splitlines()], f"no line `hi` on the screen:\n{screen}"
        destroyed = json.loads(cli("destroy", "--json", sid))["result"]
        assert destroyed["status"] == "destroyed", destroyed
        listed = json.loads(cli("list", "--all", "--json"))["result"]["sessions"]
        assert [(s["sessionId"], s["status"]) for s in listed] == [(sid, "destroyed")], listed

        # Nothing of the session is left: only PID 1, its sleep and this ps (a zombie would show).
        left = []
        for line in _ok(image.podman("exec", name, "ps", "-e", "-o", "pid=,ppid=,stat=,args="), "ps").splitlines():
            pid, ppid, stat, args = line.split(None, 3)
            if pid == "1" or (ppid == "1" and args == "sleep 3600") or args.startswith("ps -e"):
                continue
            left.append(line.strip())
        assert not left, f"left running in the container after destroy: {left}"
    finally:
        image.podman("rm", "--force", "--time", "5", name)


def test_root_without_a_writable_cgroup_gets_autogroup(image: Image) -> None:
    out = _ok(
        image.podman(*RUN, "--user", "0", image.tag, "sh", "-c", "id -un && exec agent-tty doctor"),
        "doctor started as root",
    )
    user, _, doctor = out.partition("\n")
    assert user == "agent", f"the entrypoint did not drop to agent:\n{out}"
    assert _doctor_lines(doctor).get("mechanism") == "linux_autogroup", doctor
    why = re.search(r"^  -- linux_cgroup \(rank \d+\): (.+)$", doctor, re.M)
    assert why and why[1].strip(), f"doctor does not say why linux_cgroup was not chosen:\n{doctor}"
    print(f"\nlinux_cgroup not chosen: {why[1]}")
