"""What a rotation of the event log costs the host: building the checkpoint of a screen with
a full scrollback (ADR 0015). Run: .venv/bin/python bench/checkpoint.py [ghostty|pyte]"""

from __future__ import annotations

import sys
import time

from agent_tty.terminal.checkpoint import checkpoint_bytes
from agent_tty.terminal.screen import SCROLLBACK_LINES, open_screen


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "ghostty"
    for cols, rows in ((80, 24), (200, 50)):
        # Rows of cols-1 characters, coloured: a full scrollback, none of it read before (the
        # host's screen has drawn N MiB of new rows since its last checkpoint).
        line = b"\x1b[32m%06d\x1b[0m " + b"abcdefghij" * (cols // 10)
        feed = b"\r\n".join(line[: cols + 7] % i for i in range(SCROLLBACK_LINES + rows))
        times = []
        for _ in range(3):
            screen = open_screen(cols, rows, None, backend)
            screen.feed(feed)
            start = time.perf_counter()
            data = checkpoint_bytes(screen)
            times.append(time.perf_counter() - start)
        print(f"{backend} {cols}x{rows}: {len(screen.scrollback())} rows of scrollback, checkpoint {len(data) / 1e6:.2f} MB, "
              f"median {sorted(times)[1] * 1000:.0f} ms, slowest {max(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
