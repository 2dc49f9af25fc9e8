"""The contracts every process shares: error codes, the status policy, RPC messages."""
