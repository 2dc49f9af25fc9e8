"""How a session's age is shown by list."""

from __future__ import annotations

import time


def age_text(created_at: float) -> str:
    seconds = max(0, int(time.time() - created_at))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
