"""A tool step told in one line: the call (name and the first line of each argument), its command, and
the line of its output that says what failed."""

from __future__ import annotations

import re
from functools import lru_cache

from harness.models.builtin.text import ERROR_LINE, clip, folded

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


# What an output line says when it reports a failure: "error:", "fatal:", a FAIL line, "unable to ..."; a line
# that only contains the word (`formatPluginError`, "throws typed validation error") reports none.
_REPORTED = re.compile(r"(\berror|\bfatal|\bpanic|\bERROR|\bFAIL(ED)?)(\[\w.-]+\])?:|^\W*(FAIL|FAILED|ERROR|--- FAIL)\b|"
                       r"^Traceback|\bunable to\b|\bcould not\b|\bcannot\b|\bcan't\b|\bnot found\b|\bno such\b", re.I)
# What a line must hold (folded) for _REPORTED to match in it: most lines of a long output hold none, and the
# `in` checks cost a fraction of the search.
_REPORT_WORDS = ("error", "fatal", "panic", "fail", "traceback", "unable to", "could not", "cannot", "can't",
                 "not found", "no such")
_EXIT_CODE = re.compile(r"^Exit code \d+$")  # the harness's first line of a failed command, not its message
_STRUCTURED = re.compile(r"^\s*[\[{]")  # a JSON document (an API response) is data, even when a field says error
MAX_ERROR_LINES = 2  # "two compile errors": the second distinct one is often the one that matters
_SAYS_ERROR = re.compile(r":\s*(fatal )?error\b", re.I)  # a diagnostic's severity, not "an error in Swift 6"
MAX_DETAIL_LINES = 3


@lru_cache(maxsize=4096)  # the summary reads each output, and its fill pass reads the failed ones again
def error_line(output: str) -> str:
    """The most telling error lines: compiler diagnostics (errors before warnings), else the last
    'XyzError: ...' line, else the first line that reports a failure; '' when the output reports none."""
    lower = output.lower()
    if _STRUCTURED.match(output) or not any(
            word in lower for word in ("error", "exception", "traceback", "fail", "fatal", "panic", "unable")):
        return ""
    lines = _said_lines(output)
    diagnostics = [line for line in lines if _is_diagnostic(line)]
    if diagnostics:
        errors = [line for line in diagnostics if _SAYS_ERROR.search(line)] or \
            [line for line in diagnostics if "error" in line.lower()] or diagnostics
        return _joined(errors)
    typed = [line for line in lines if ("Error" in line or "Exception" in line)
             and re.match(r"^[\w.]*(Error|Exception)\b", line)]
    if typed:
        return clip(typed[-1])
    reported = [lines[i] for i in _reporting(output)]
    flagged = [line for line in reported if ERROR_LINE.search(line)] or reported
    return clip(flagged[0]) if flagged else ""


def error_details(output: str) -> list[str]:
    """The lines of a failed step's output that report its failure, whole: diagnostics that say error, else
    the lines that report one, each with the line after it when it ends in a colon (the device it could not
    find, the value it expected)."""
    if _STRUCTURED.match(output):
        return []
    lines = _said_lines(output)
    picked = [i for i, line in enumerate(lines) if _is_diagnostic(line) and _SAYS_ERROR.search(line)] or \
        [i for i in _reporting(output) if not _is_diagnostic(lines[i])]
    details = [f"{lines[i]} {lines[i + 1]}" if lines[i].endswith(":") and i + 1 < len(lines) else lines[i]
               for i in picked]
    return list(dict.fromkeys(clip(d) for d in details))[:MAX_DETAIL_LINES]


def first_line(output: str) -> str:
    """The first line of a failed step's output that says something (not the bare 'Exit code 1')."""
    lines = _said_lines(output)
    return clip(lines[0]) if lines else ""


@lru_cache(maxsize=256)  # error_line and error_details read the same failed output in one summary
def _said_lines(output: str) -> tuple[str, ...]:
    """The output's lines, stripped, without blank ones and the harness's 'Exit code N'."""
    return tuple(said for line in output.splitlines() if (said := line.strip()) and not _EXIT_CODE.match(said))


@lru_cache(maxsize=256)
def _reporting(output: str) -> tuple[int, ...]:
    """Where in _said_lines(output) a line reports a failure."""
    return tuple(i for i, line in enumerate(_said_lines(output)) if _reports(line))


def _is_diagnostic(line: str) -> bool:
    return ":" in line and bool(_DIAGNOSTIC.match(line))  # a diagnostic has "path:line"


def _reports(line: str) -> bool:
    """The line reports a failure (_REPORTED), searched only when it holds one of the words it needs."""
    return any(map(folded(line).__contains__, _REPORT_WORDS)) and bool(_REPORTED.search(line))


def _joined(lines: list[str]) -> str:
    distinct = list(dict.fromkeys(clip(line, 200) for line in lines))
    return clip("; ".join(distinct[:MAX_ERROR_LINES]))


_CD_PREFIX = re.compile(r"^\s*(cd\s+\S+\s*(&&|;)\s*)+")
MIN_RUNS = 2  # a command run twice is how this project builds or tests, not a one-off look
MAX_COMMAND_CHARS = 240


def command_key(command: str) -> str | None:
    """What a shell command is, for knowing it again: its program and first word that is not a flag
    (`xcodebuild build`, `bun run`, `go test`), after any `cd <dir> &&`; None for no command."""
    words = _CD_PREFIX.sub("", command).split()
    if not words:
        return None
    rest = [w for w in words[1:] if not w.startswith("-")]
    return " ".join([words[0], *rest[:1]]).lower()


def recurring_command(command: str) -> str:
    """The command as the summary keeps it: one line, its `cd` prefix dropped, clipped."""
    return clip(_CD_PREFIX.sub("", " ".join(command.split())), MAX_COMMAND_CHARS)
