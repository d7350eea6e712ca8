"""Progress where no progress bar is drawn (output to a file or a CI log): a short line on stderr now and then,
so a long `run` or `cost` is never silent for minutes. On a terminal the bar says it and this stays quiet."""

from __future__ import annotations

import time
from typing import Callable

from rich.console import Console

from harness.render.console import stderr

EVERY_S = 30.0  # a CI log gets a line at most this often, and one for the last item


class Heartbeat:
    """`tick(name)` after each of `total` items; prints `<what>: N/total done (last: name), Ms` when EVERY_S
    has passed since the last line, and at the end. Silent on a terminal (the bar is there) or when quiet."""

    def __init__(self, what: str, total: int, *, quiet: bool = False, console: Console | None = None,
                 every_s: float = EVERY_S, clock: Callable[[], float] = time.monotonic):
        self.console = console or stderr()
        self.what, self.total, self.every_s, self.clock = what, total, every_s, clock
        self.silent = quiet or self.console.is_terminal
        self.done = 0
        self.started = self.last = clock()

    def tick(self, name: str, total: int | None = None) -> None:
        """One more item done (`total`: the count, when it was not known at the start)."""
        self.total = self.total if total is None else total
        self.done += 1
        now = self.clock()
        if self.silent or (now - self.last < self.every_s and self.done < self.total):
            return
        self.last = now
        self.console.print(f"{self.what}: {self.done}/{self.total} done (last: {name}), {now - self.started:.0f} s",
                           markup=False, highlight=False)
