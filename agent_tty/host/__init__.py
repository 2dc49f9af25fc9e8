"""The per-session host process: owns the PTY, the event log and the manifest while it lives."""
