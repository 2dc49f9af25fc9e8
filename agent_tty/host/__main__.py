"""`python -m agent_tty.host SESSION_ID CREATE_PID HOME`: the detached host that create launches."""

import sys

from agent_tty.host.main import main

raise SystemExit(main(sys.argv[1:]))
