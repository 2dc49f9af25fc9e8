"""The screen model (pyghostty where it installs, pyte elsewhere), keys, snapshots and exports."""
