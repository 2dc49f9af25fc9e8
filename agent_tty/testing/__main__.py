"""Run the behavioural kit, then agent-tty's integration suite pinned to a mechanism.

    python -m agent_tty.testing MECHANISM [--suite DIR] [--kit-only] [-- PYTEST-ARGS...]

MECHANISM names an installed plugin (a built-in or an entry point of `agent_tty.platform`).
The kit (agent_tty.testing.check_plugin_behaviour) runs first; then `python -m pytest DIR` with
AGENT_TTY_MECHANISM=MECHANISM, so that every CLI the tests start gets the pin (tests about another
mechanism pin their own). The suite is agent-tty's `tests/integration`, which is not in the wheel:
DIR is that folder of a checkout of agent-tty at the installed version (default:
./tests/integration). The tests need agent-tty's `test` extra: `pip install 'agent-tty[test]'`.

Exit status: 0 when both passed, 1 when the kit failed (its message starts with the broken
promise's tag), pytest's own status when the suite failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any


def load_plugin(mechanism: str) -> Any:
    """The plugin object installed for `mechanism`, as the core would load it."""
    from agent_tty.platform.manager import BUILTIN_PLUGINS, ENTRY_POINT_GROUP

    if mechanism in BUILTIN_PLUGINS:
        return importlib.import_module(BUILTIN_PLUGINS[mechanism][0])
    from importlib.metadata import entry_points

    found = list(entry_points(group=ENTRY_POINT_GROUP, name=mechanism))
    if not found:
        raise LookupError(
            f"no installed plugin provides the mechanism {mechanism!r} (an entry point named so in the "
            f"{ENTRY_POINT_GROUP!r} group, or a built-in: {', '.join(sorted(BUILTIN_PLUGINS))})"
        )
    return found[0].load()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_tty.testing",
        description="Run the behavioural contract kit and agent-tty's integration suite pinned to MECHANISM.",
    )
    parser.add_argument("mechanism", help="the mechanism name (the plugin's entry point name)")
    parser.add_argument(
        "--suite",
        type=Path,
        default=Path("tests/integration"),
        help="agent-tty's tests/integration folder, from a checkout at the installed version (default: %(default)s)",
    )
    parser.add_argument("--kit-only", action="store_true", help="run the behavioural kit only")
    parser.epilog = "Arguments after -- go to pytest (-x, -k EXPR, ...)."
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.pytest_args = pytest_args

    suite = args.suite.resolve()
    if not args.kit_only:
        missing = [name for name in ("pytest", "pytest_timeout") if importlib.util.find_spec(name) is None]
        if missing:
            print(
                f"the integration suite needs {', '.join(missing)}: pip install 'agent-tty[test]'", file=sys.stderr
            )
            return 2
        if not (suite / "conftest.py").is_file() and not (suite.parent / "conftest.py").is_file():
            print(
                f"no integration suite at {suite}: it is not in the wheel. Check out agent-tty's source at the "
                "installed version and pass --suite CHECKOUT/tests/integration (or --kit-only)",
                file=sys.stderr,
            )
            return 2

    try:
        plugin = load_plugin(args.mechanism)
    except Exception as err:  # noqa: BLE001 - any failure to load is reported
        print(f"cannot load the plugin for {args.mechanism!r}: {type(err).__name__}: {err}", file=sys.stderr)
        return 2

    from agent_tty.testing import check_plugin_behaviour

    print(f"== behavioural kit: {args.mechanism}", flush=True)
    try:
        report = check_plugin_behaviour(plugin, args.mechanism)
    except AssertionError as err:
        print(f"FAILED {err}", flush=True)
        return 1
    for name in report.passed:
        print(f"passed  {name}")
    for name, reason in report.skipped.items():
        print(f"skipped {name}: {reason}")
    if args.kit_only:
        return 0

    print(f"== integration suite {suite}, pinned to {args.mechanism}", flush=True)
    env = {**os.environ, "AGENT_TTY_MECHANISM": args.mechanism}
    # The suite imports its helpers as `tests.conftest`: run it from the checkout's root, where
    # agent-tty's pytest configuration (timeouts, markers) is read too.
    root = suite.parent.parent if suite.parent.name == "tests" else suite.parent
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(suite), *args.pytest_args]
    import subprocess

    return subprocess.call(command, cwd=root, env=env)


if __name__ == "__main__":
    sys.exit(main())
