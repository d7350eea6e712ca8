"""A regex alternation searched with only the alternatives a line can match.

`re` tries every alternative at every position of a line, and most lines can match only a few of them (no
digit, no '@', none of the keywords). An alternative that matches nowhere in a line never takes a position
from another, so leaving it out finds exactly the same matches. A `Need` says what a line must hold for an
alternative to match anywhere in it (a necessary condition, checked with `in`, far cheaper than the regex);
an alternative without one is always searched, so an edited pattern that lost its Need stays correct."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_DIGIT = re.compile(r"\d")  # the same digits the patterns' \d matches (any Unicode decimal digit)
# The only characters an ASCII letter matches under re.IGNORECASE whose str.lower() is not that letter: a line
# that holds one is not checked for words.
_ODD_FOLDS = re.compile("[\u0130\u0131\u017f]")


@dataclass(frozen=True)
class Need:
    digit: bool = False  # a digit somewhere
    chars: str = ""  # every one of these characters
    any_chars: str = ""  # at least one of these characters
    words: tuple[str, ...] = ()  # at least one of these (lower-case ASCII), case aside


class Alternation:
    """`(?:a)|(?:b)|...` compiled with `flags`, its finditer run with the alternatives the line can match."""

    def __init__(self, patterns: tuple[str, ...], needs: dict[str, Need], flags: int = 0):
        self.patterns = patterns
        self.flags = flags
        self.needs = tuple(needs.get(p) for p in patterns)
        self._regexes: dict[tuple[str, ...], re.Pattern[str]] = {}  # by the alternatives searched

    def finditer(self, line: str) -> Iterator[re.Match[str]]:
        wanted = self._possible(line)
        if not wanted:
            return iter(())
        regex = self._regexes.get(wanted)
        if regex is None:
            regex = self._regexes[wanted] = re.compile("|".join(f"(?:{p})" for p in wanted), self.flags)
        return regex.finditer(line)

    def _possible(self, line: str) -> tuple[str, ...]:
        digit = _DIGIT.search(line) is not None
        lower = None if _ODD_FOLDS.search(line) else line.lower()
        return tuple(p for p, need in zip(self.patterns, self.needs) if need is None or _holds(need, line, lower, digit))


def _holds(need: Need, line: str, lower: str | None, digit: bool) -> bool:
    return ((digit or not need.digit) and all(c in line for c in need.chars)
            and (not need.any_chars or any(c in line for c in need.any_chars))
            and (not need.words or lower is None or any(w in lower for w in need.words)))

