"""`python -m agent_tty`: the same entry point as the `agent-tty` script."""

from agent_tty.cli.main import main

raise SystemExit(main())
