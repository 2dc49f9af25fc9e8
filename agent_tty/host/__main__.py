"""`python -m agent_tty.host SESSION_ID CREATE_PID HOME`: the detached host that create launches
(`--standby CREATE_PID HOME`: a spare one a long-lived client starts ahead, agent_tty.api)."""

import sys

from agent_tty.host.main import STANDBY, main, standby_main

if sys.argv[1:2] == [STANDBY]:
    raise SystemExit(standby_main(sys.argv[2:]))
raise SystemExit(main(sys.argv[1:]))
