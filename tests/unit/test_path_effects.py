"""Every file-system or socket effect outside the storage layer is one we reviewed (ADR 0008).

A path that came from a record must reach open/unlink/rmtree/connect only through
agent_tty/storage's checked helpers (O_NOFOLLOW, owner checks, directory fds, the socket
folder check). This scan lists every such call elsewhere in the core; a new one fails here until
someone checks where its path comes from and adds it below with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "agent_tty"

FUNCTIONS = {
    "open", "os.open", "os.fdopen", "os.unlink", "os.remove", "os.rmdir", "os.rename", "os.replace",
    "os.mkdir", "os.makedirs", "os.chmod", "os.symlink", "os.link", "shutil.rmtree", "shutil.move",
}
METHODS = {
    "connect", "bind", "unlink", "rmdir", "read_text", "read_bytes", "write_text", "write_bytes",
    "mkdir", "open", "rename", "touch", "symlink_to", "hardlink_to",
}

REVIEWED = {
    # Font files of installed packages (JetBrains Mono, the fallback fonts), read for their cmap.
    ("terminal/glyphs.py", "read_coverage", "open"),
    # --install-completion: the user's own completion folder under $HOME/XDG dirs, not a record's.
    ("cli/main.py", "_completion", ".mkdir"),
    ("cli/main.py", "_completion", ".write_text"),
    # `python -m agent_tty.cli.parse`: a developer regenerates agent_tty/cli/argtable.py beside it.
    ("cli/parse.py", "<module>", ".write_text"),
    # PyAV's container over an in-memory buffer (io.BytesIO): no path at all (ADR 0044).
    ("terminal/video.py", "_av", ".open"),
    # The user's own --file argument, named on the command line, not in a record.
    ("ops/live.py", "read_input_file", "open"),
    ("ops/live.py", "file_chunks", "open"),
    # A batch paste step's `file`, given by the caller in the steps, opened to refuse it up front.
    ("ops/batch.py", "_check_paste", "open"),
    # /proc/self/status, cgroup and attr/current of our own process: fixed paths no record names.
    ("platform/inherited.py", "_read", "open"),
    # The host's own files in its own checked session folder, through storage/fs.py.
    ("host/main.py", "_start", ".open"),  # EventLog.open
    # storage/fs.py's open where opens cannot refuse a link: fs checks the fd after it.
    # /proc/<pgid>/comm of the terminal's foreground group (tcgetpgrp): a kernel file, read only.
    ("platform/system.py", "foreground", "open"),
    ("platform/system.py", "open_file", "os.open"),
    # The Home's own folders, made by storage/home.py under the folder it checked, and a new
    # session folder under the Home's checked sessions/ (create ran Home.ensure).
    ("platform/system.py", "mkdir_private", "os.mkdir"),
    # storage/fs.py's rename where there are no folder fds: two names in one checked folder.
    ("platform/system.py", "replace", "os.replace"),
    ("platform/win32_files.py", "replace", "os.replace"),
    # A spare host lets go of its client's pipe: /dev/null, a fixed path no record names.
    ("host/main.py", "standby_main", "os.open"),
    # The host binds the socket path that trusted_socket_path checked (a private folder of ours),
    # through the system layer's transport.
    ("platform/system.py", "listen", "os.unlink"),
    ("platform/system.py", "listen", ".bind"),
    ("platform/system.py", "listen", "os.chmod"),
    ("platform/system.py", "connect", ".connect"),
    ("host/rpc_server.py", "stop_serving", "os.unlink"),
    # The loopback transport (docs/adr/0021): the address file at that same checked socket path,
    # written and read through storage/fs.py (a leftover under a new name is unlinked in that
    # folder); bind and connect name 127.0.0.1 only.
    ("platform/loopback.py", "_publish", "os.unlink"),
    ("platform/loopback.py", "listen", ".bind"),
    ("platform/loopback.py", "connect", ".connect"),
    # Every caller passes engine.socket(manifest) (trusted_socket_path); the peer's uid is checked.
    ("protocol/rpc.py", "_connect_once", ".connect"),
}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def effects(root: Path) -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("storage/"):
            continue  # the checked helpers themselves
        if relative.startswith("testing/"):
            continue  # the plugin kit: files in the temp folder it made, never a record's path
        scope: list[str] = []

        class Visitor(ast.NodeVisitor):
            def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
                scope.append(node.name)
                self.generic_visit(node)
                scope.pop()

            visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

            def visit_Call(self, node: ast.Call) -> None:
                name = _dotted(node.func)
                if name in FUNCTIONS:
                    found.add((relative, ".".join(scope) or "<module>", name))
                elif isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
                    found.add((relative, ".".join(scope) or "<module>", "." + node.func.attr))
                self.generic_visit(node)

        Visitor().visit(ast.parse(path.read_text(), str(path)))
    return found


def test_no_unreviewed_path_effect_in_the_core() -> None:
    new = effects(CORE) - REVIEWED
    assert not new, (
        "file-system or socket calls outside agent_tty/storage that no one reviewed: route a path from a "
        f"record through the storage helpers, or add the call to REVIEWED with why its path is safe: {sorted(new)}"
    )


def test_the_reviewed_list_names_only_real_calls() -> None:
    stale = REVIEWED - effects(CORE)
    assert not stale, f"REVIEWED names calls that no longer exist: {sorted(stale)}"


def test_the_scan_sees_a_planted_call(tmp_path: Path) -> None:
    module = tmp_path / "lifecycle" / "planted.py"
    module.parent.mkdir()
    module.write_text("import os\n\ndef forget(manifest):\n    os.unlink(manifest.socket_path)\n")
    assert effects(tmp_path) == {("lifecycle/planted.py", "forget", "os.unlink")}


SOCKET_READS = {
    ("lifecycle/engine.py", "Engine.socket"),  # trusted_socket_path
    ("lifecycle/engine.py", "unlink_socket"),  # remove_socket
    ("host/main.py", "_start"),  # trusted_socket_path, then listen
    ("lifecycle/create.py", "create"),  # the path create itself just chose
    ("ops/sessions.py", "inspect"),  # shown, never used
    ("host/rpc_server.py", "RpcServer.__init__"),  # the server's own attribute of that name
    ("host/rpc_server.py", "RpcServer.listen"),
    ("host/rpc_server.py", "RpcServer.stop_serving"),
    ("protocol/rpc.py", "Connection.__init__"),  # its own attribute: a path its caller checked (Engine.socket)
    ("protocol/rpc.py", "Connection._open"),
}


def socket_reads(root: Path) -> set[tuple[str, str]]:
    """Where the core reads an attribute named socket_path (a manifest's is a record's path)."""
    found: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("storage/"):
            continue
        scope: list[str] = []

        class Visitor(ast.NodeVisitor):
            def _scoped(self, node: ast.AST, name: str) -> None:
                scope.append(name)
                self.generic_visit(node)
                scope.pop()

            def visit_ClassDef(self, node: ast.ClassDef) -> None:
                self._scoped(node, node.name)

            def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
                self._scoped(node, node.name)

            def visit_Attribute(self, node: ast.Attribute) -> None:
                if node.attr == "socket_path":
                    found.add((relative, ".".join(scope)))
                self.generic_visit(node)

        Visitor().visit(ast.parse(path.read_text(), str(path)))
    return found


def test_a_recorded_socket_path_is_used_only_through_the_checks() -> None:
    assert socket_reads(CORE) == SOCKET_READS, "a new use of a manifest's socket_path: go through Engine.socket"
