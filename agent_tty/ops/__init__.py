"""What each command does, as functions of an Engine that return the command's JSON result.

The CLI (agent_tty.cli) and the Python API (agent_tty.api) both call these: one implementation
of every rule. An operation raises AgentTtyError with the contract's code; it prints nothing
and picks no exit code (a result such as `timedOut` is data the caller judges).
"""
