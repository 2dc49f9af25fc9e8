"""The multi-process lifecycle engine: create, reconcile, destroy, gc. It knows no platform."""
