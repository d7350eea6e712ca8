"""A probe's `regex`: refused when a case is loaded if its shape backtracks catastrophically, and searched
with a time limit on the `regex` engine, which releases the GIL while it matches (so Ctrl-C is honoured at
once in a run, whose cases match on worker threads) and stops a search that runs past its limit.

The load-time check finds the classic shapes of exponential backtracking: a quantifier over something that
is itself unboundedly repeated (`(a+)+`, `(.*)*`, `(\\w+\\s?)*`), and a repeated alternation with two equal
alternatives (`(a|a)*`). It reads the pattern with the standard library's own parser (`re._parser`: the
one that compiles every `re` pattern); other shapes that backtrack are stopped by the time limit.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Iterable

import regex

from harness.errors import HarnessError

try:
    from re import _constants as sre_constants, _parser as sre_parser  # type: ignore[attr-defined]
except ImportError:  # Python < 3.11 names them sre_parse / sre_constants
    import sre_constants  # type: ignore[no-redef]
    import sre_parse as sre_parser  # type: ignore[no-redef]

FLAGS = regex.IGNORECASE | regex.MULTILINE
SEARCH_LIMIT_S = 5.0  # wall time; a probe regex on a long context takes milliseconds; one past this backtracks
FIRST_TRY_CPU_S = 0.05  # searched in the caller's thread first: every sound regex ends well within this
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None))
_UNBOUNDED = sre_constants.MAXREPEAT


def risky_shape(pattern: str) -> str | None:
    """Why `pattern` can backtrack catastrophically, or None. The pattern must already compile."""
    return _risk(list(sre_parser.parse(pattern)), repeated=False)


def _risk(items: list[tuple[Any, Any]], repeated: bool) -> str | None:
    """`repeated`: these items sit inside an unbounded quantifier."""
    for op, av in items:
        if op in _REPEATS and op is not None:
            low, high, body = av
            unbounded = high == _UNBOUNDED
            if unbounded and repeated:
                return "a quantifier inside an unbounded quantifier (like `(a+)+` or `(.*)*`) backtracks " \
                       "exponentially: make the inner part match a fixed length, or bound it like {0,40}"
            if found := _risk(list(body), repeated or unbounded):
                return found
        elif op == sre_constants.BRANCH:
            alternatives = av[1]
            if repeated and len({repr(list(a)) for a in alternatives}) < len(alternatives):
                return "a repeated alternation with two equal alternatives (like `(a|a)*`) backtracks " \
                       "exponentially: list each alternative once"
            for alternative in alternatives:
                if found := _risk(list(alternative), repeated):
                    return found
        elif op == sre_constants.SUBPATTERN:
            if found := _risk(list(av[-1]), repeated):
                return found
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if found := _risk(list(av[1]), repeated):
                return found
    return None


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` (case-insensitive, ^ and $ at line ends) is found in `text`, within the time limit."""
    return search_any(pattern, (text,))


def search_any(pattern: str, texts: Iterable[str]) -> bool:
    """Whether `pattern` is found in any of `texts`, all of them searched within one SEARCH_LIMIT_S of wall
    time. The `regex` engine's own timeout counts the searching thread's CPU time, which on a loaded machine
    is a fraction of the wall time (2 s of CPU took 6.4 s on this 2-core machine at load 10): a search that
    outlives a short first try runs on a thread of its own, given up at the wall-clock deadline."""
    deadline = time.monotonic() + SEARCH_LIMIT_S
    longest = 0
    for text in texts:
        longest = max(longest, len(text))
        try:
            found = _engine(pattern, text, min(FIRST_TRY_CPU_S, SEARCH_LIMIT_S))
        except TimeoutError:
            found = _search_until(pattern, text, deadline)
        if found is None:
            raise HarnessError(f"probe regex {pattern!r} ran past {SEARCH_LIMIT_S:g} s on a {longest:,}-character "
                               f"text (it backtracks): simplify it or bound its repeats like {{0,40}}")
        if found:
            return True
    return False


def _engine(pattern: str, text: str, cpu_limit_s: float) -> bool:
    return regex.search(pattern, text, FLAGS, timeout=cpu_limit_s, concurrent=True) is not None


def _search_until(pattern: str, text: str, deadline: float) -> bool | None:
    """The search on a daemon thread, waited for until `deadline`: None when it is not done by then (the
    thread stops by itself within SEARCH_LIMIT_S of CPU time)."""
    outcome: list[bool | None] = []

    def work() -> None:
        try:
            outcome.append(_engine(pattern, text, SEARCH_LIMIT_S))
        except TimeoutError:
            outcome.append(None)

    worker = threading.Thread(target=work, name="probe-regex", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    return outcome[0] if outcome else None
