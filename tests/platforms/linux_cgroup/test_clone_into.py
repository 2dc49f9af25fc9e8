"""clone_into.fork_into against the real kernel: a child born in its leaf, the refusals that fall
back to fork + move (and the ones that are errors), and a host with threads, which never clones."""

from __future__ import annotations

import _imp
import ctypes
import errno
import os
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import default_mechanism

linux = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux only")
cgroup = pytest.mark.skipif(default_mechanism() != "linux_cgroup", reason="this user cannot make cgroup leaves here")


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    """Each test starts with no remembered refusal, and leaves none behind."""
    from agent_tty_plugins.linux_cgroup import clone_into

    saved = clone_into._refused
    clone_into._refused = None
    yield
    clone_into._refused = saved


@pytest.fixture
def leaf() -> Iterator[Path]:
    from agent_tty_plugins.linux_cgroup import probe

    placement = probe()[1]
    assert placement is not None
    folder = placement.parent / f"test-clone-{os.getpid()}"
    folder.mkdir()
    yield folder
    folder.rmdir()


def _cgroup_of_child(start: object) -> str:
    """Start a child with `start()` (a fork); it reports its /proc/self/cgroup and ends."""
    read, write = os.pipe()
    pid = start()  # type: ignore[operator]
    if pid == 0:
        try:
            os.write(write, Path("/proc/self/cgroup").read_bytes())
        finally:
            os._exit(0)
    os.close(write)
    text = os.read(read, 65536).decode()
    os.close(read)
    os.waitpid(pid, 0)
    return next(line[3:] for line in text.splitlines() if line.startswith("0::"))


def _alone(body: Callable[[], None]) -> None:
    """Run `body` in a forked child: it has one thread, whatever this pytest process started
    before (a library a test ran in-process, PyAV's decoder say, may leave worker threads, and
    fork_into refuses a process with threads, as it should)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            body()
            code = 0
        except pytest.skip.Exception as skipped:
            print(f"skipped: {skipped}")
            code = 77
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 77:
        pytest.skip("the child skipped (its reason is above)")
    assert code == 0, "the test failed in its single-threaded child (its traceback is above)"


@cgroup
def test_a_child_is_born_in_the_leaf(leaf: Path) -> None:
    _alone(lambda: _born_in_the_leaf(leaf))


def _born_in_the_leaf(leaf: Path) -> None:
    from agent_tty_plugins.linux_cgroup import clone_into, cgroup2_mount, probe
    import agent_tty_plugins.linux_cgroup as plugin

    plugin._probed = None  # probed again here: the parent's probe saw its threads

    if probe()[0].details.get("start") != "clone3":
        pytest.skip(f"no clone3 into a cgroup here: {probe()[0].details.get('start')}")
    fd = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        assert _cgroup_of_child(lambda: clone_into.fork_into(fd)) == "/" + str(leaf.relative_to(cgroup2_mount()))
    finally:
        os.close(fd)
    assert not _imp.lock_held(), "the import lock PyOS_BeforeFork took is released"


@linux
def test_a_folder_that_is_not_a_cgroup_falls_back_and_is_not_remembered(tmp_path: Path) -> None:
    _alone(lambda: _not_a_cgroup(tmp_path))


def _not_a_cgroup(tmp_path: Path) -> None:
    from agent_tty_plugins.linux_cgroup import clone_into

    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with pytest.raises(clone_into.Unavailable) as raised:
            clone_into.fork_into(fd)
    finally:
        os.close(fd)
    if clone_into._refused is None:  # this kernel has clone3 into a cgroup: it said EBADF
        assert "EBADF" in str(raised.value)
    assert not _imp.lock_held()


@cgroup
def test_a_removed_leaf_is_an_error_as_a_write_into_it_would_be(leaf: Path) -> None:
    _alone(lambda: _removed_leaf(leaf))


def _removed_leaf(leaf: Path) -> None:
    from agent_tty_plugins.linux_cgroup import clone_into, probe
    import agent_tty_plugins.linux_cgroup as plugin

    plugin._probed = None  # probed again here: the parent's probe saw its threads

    if probe()[0].details.get("start") != "clone3":
        pytest.skip("no clone3 into a cgroup here")
    fd = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    leaf.rmdir()
    try:
        with pytest.raises(OSError) as raised:
            clone_into.fork_into(fd)
        assert raised.value.errno in (errno.ENOENT, errno.ENODEV) and not isinstance(raised.value, clone_into.Unavailable)
    finally:
        os.close(fd)
        leaf.mkdir()  # for the fixture's rmdir


@linux
def test_a_process_with_threads_never_clones(tmp_path: Path) -> None:
    from agent_tty_plugins.linux_cgroup import clone_into

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with pytest.raises(clone_into.Unavailable, match="threads"):
            clone_into.fork_into(0)
    finally:
        stop.set()
        thread.join()
    assert clone_into._refused is None, "a thread is no reason to give clone3 up for good"


@cgroup
def test_with_threads_the_child_forks_and_moves_itself_in(leaf: Path) -> None:
    """Birth's fallback: fork, then the child writes itself into cgroup.procs before it goes on."""
    from agent_tty_plugins.linux_cgroup import Birth, cgroup2_mount

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    birth = Birth(leaf, cgroup2_mount())
    try:

        def start() -> int:
            pid = birth.fork()
            if pid == 0:
                birth.enter()
            return pid

        assert _cgroup_of_child(start) == birth.path
    finally:
        birth.close()
        stop.set()
        thread.join()
    assert not birth.born and "threads" in birth.way()


# The refusals themselves, from a stand-in for the kernel: syscall() returns -1 with each errno.
@pytest.mark.parametrize(
    ("number", "remembered", "error"),
    [
        (errno.ENOSYS, True, None), (errno.EPERM, True, None), (errno.E2BIG, True, None), (errno.EINVAL, True, None),
        (errno.EBUSY, False, None), (errno.EOPNOTSUPP, False, None), (errno.EBADF, False, None),
        (errno.EAGAIN, False, errno.EAGAIN), (errno.ENOMEM, False, errno.ENOMEM), (errno.EACCES, False, errno.EACCES),
        (errno.ENOENT, False, errno.ENOENT),
    ],
)
@linux
def test_each_refusal_falls_back_or_is_the_error_the_move_would_meet(
    monkeypatch: pytest.MonkeyPatch, number: int, remembered: bool, error: int | None
) -> None:
    _alone(lambda: _refusal(monkeypatch, number, remembered, error))


def _refusal(monkeypatch: pytest.MonkeyPatch, number: int, remembered: bool, error: int | None) -> None:
    from agent_tty_plugins.linux_cgroup import clone_into

    real = clone_into._bind()

    def refuse(*_args: object) -> int:
        ctypes.set_errno(number)
        return -1

    monkeypatch.setattr(clone_into, "_call", (real[0], real[1], refuse, real[3]))
    with pytest.raises((OSError, clone_into.Unavailable)) as raised:
        clone_into.fork_into(0)
    if error is None:
        assert isinstance(raised.value, clone_into.Unavailable)
    else:
        assert raised.value.errno == error and not isinstance(raised.value, clone_into.Unavailable)
    assert (clone_into._refused is not None) is remembered
    assert not _imp.lock_held()
    if remembered:  # no second try in this process
        monkeypatch.setattr(clone_into, "_call", None)
        with pytest.raises(clone_into.Unavailable):
            clone_into.fork_into(0)
