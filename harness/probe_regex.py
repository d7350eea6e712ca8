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
from typing import Any

import regex

from harness.errors import HarnessError

try:
    from re import _constants as sre_constants, _parser as sre_parser  # type: ignore[attr-defined]
except ImportError:  # Python < 3.11 names them sre_parse / sre_constants
    import sre_constants  # type: ignore[no-redef]
    import sre_parse as sre_parser  # type: ignore[no-redef]

FLAGS = regex.IGNORECASE | regex.MULTILINE
SEARCH_LIMIT_S = 5.0  # a probe regex on a long context takes milliseconds; one past this backtracks
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
    try:
        return regex.search(pattern, text, FLAGS, timeout=SEARCH_LIMIT_S, concurrent=True) is not None
    except TimeoutError:
        raise HarnessError(f"probe regex {pattern!r} ran past {SEARCH_LIMIT_S:g} s on a {len(text):,}-character "
                           f"text (it backtracks): simplify it or bound its repeats like {{0,40}}") from None
