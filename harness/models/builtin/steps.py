"""A tool step told in one line: the call (name and the first line of each argument), its command, and
the line of its output that says what failed."""

from __future__ import annotations

import re

from harness.models.builtin.text import ERROR_LINE, clip

_DIAGNOSTIC = re.compile(r"^\S+\.\w+:\d+(?::\d+)?:?\s+\S")  # path:line:col: message (compilers, linters)


def step_of(name: str, arguments: dict) -> str:
    """A tool call in one line: its name and the first line of each string argument, clipped."""
    parts = [f"{key}={clip(value.strip().splitlines()[0], 80)}" for key, value in sorted(arguments.items())
             if isinstance(value, str) and value.strip()]
    return clip(f"{name}: {', '.join(parts)}" if parts else name, 240)


def command_of(arguments: dict) -> str:
    for key in ("cmd", "command", "script"):
        if isinstance(arguments.get(key), str):
            return clip(arguments[key], 80)
    return ""


def error_line(output: str) -> str:
    """The most telling error line: the last 'XyzError: ...' line, else the first line that looks like one."""
    lower = output.lower()
    if not any(word in lower for word in ("error", "exception", "traceback", "fail", "fatal", "panic")):
        return ""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    diagnostics = [line for line in lines if _DIAGNOSTIC.match(line)]
    if diagnostics:
        return clip(diagnostics[0])
    typed = [line for line in lines if ("Error" in line or "Exception" in line)
             and re.match(r"^[\w.]*(Error|Exception)\b", line)]
    if typed:
        return clip(typed[-1])
    flagged = [line for line in lines if ERROR_LINE.search(line)]
    return clip(flagged[0]) if flagged else ""
