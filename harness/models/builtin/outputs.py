"""A tool's output as the summarizer reads it: the lines themselves, without a task runner's per-line tags.

Monorepo task runners (turbo, nx, lerna, `pnpm -r`) tag every line of each package's output with the package
and task ("web:lint: src/a.ts:1:8 ..."). The tag hides what the line is (a diagnostic, a test's pass), so it
goes before the output is read. Lines that only log a passing test or a build cache's hit carry no value a
summary keeps: the failures and the totals say what the run found.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TASK_TAG = re.compile(r"^(@?[\w.-]+(?:/[\w.-]+)?):([\w-]+): ?", re.M)
MIN_TAGGED = 3  # a few tagged lines make a runner's output, one is a line that happens to hold a colon
_PASSED = re.compile(r"^\s*(\(pass\)|--- PASS\b|PASS\s)")
_CACHE_LOG = re.compile(r"\bcache (hit|miss|bypass)\b", re.I)
# A script runner (npm, yarn, pnpm, bun) echoes the command a script stands for: what `bun run verify` does.
_SCRIPT_ECHO = re.compile(r"^\$ (\S+(?: \S+){2,})$")


@lru_cache(maxsize=4096)  # read by the summary and again by its fill pass
def untagged(output: str) -> str:
    """The output with a task runner's per-line tags removed, when most of its lines carry one."""
    lines = [line for line in output.splitlines() if line.strip()]
    most = output.count(":") // 2  # a tag holds two colons: no more lines than this can carry one
    if most < MIN_TAGGED or most * 2 < len(lines):
        return output
    tagged = sum(bool(_TASK_TAG.match(line)) for line in lines)
    if tagged < MIN_TAGGED or tagged * 2 < len(lines):
        return output
    return _TASK_TAG.sub("", output)


def is_bookkeeping(line: str) -> bool:
    """A line that logs a passing test or a build cache's hit: it states no fact of the session."""
    return bool(_PASSED.match(line) or _CACHE_LOG.search(line))


def script_echo(line: str) -> tuple[str, ...]:
    """The command a script runner echoes before running it ('$ turbo run lint test'), as a value; else ()."""
    echo = _SCRIPT_ECHO.match(line.strip())
    return (echo.group(1),) if echo else ()
