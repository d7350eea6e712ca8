"""The rich consoles every renderer prints to: stdout for results, stderr for progress and notes."""

from __future__ import annotations

import sys

from rich.console import Console

# Wide tables in CI logs and pipes; a terminal keeps its own width.
PIPE_WIDTH = 160


def stdout() -> Console:
    """A console on the current sys.stdout (made per call, so a redirected or captured stream is honoured)."""
    return Console(highlight=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)


def stderr() -> Console:
    return Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else PIPE_WIDTH)
