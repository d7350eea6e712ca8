"""A regex alternation searched with only the alternatives a line can match.

`re` tries every alternative at every position of a line, and most lines can match only a few of them (no
digit, no '@', no '/'). An alternative that matches nowhere in a line never takes a position from another, so
leaving it out finds exactly the same matches. A `Need` says what a line must hold for an alternative to match
anywhere in it (a necessary condition, checked with `in`, far cheaper than the regex); an alternative without
one is always searched, so a pattern edited without its Need is still searched wherever it can match."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_DIGIT = re.compile(r"\d")  # the same digits the patterns' \d matches (any Unicode decimal digit)


@dataclass(frozen=True)
class Need:
    digit: bool = False  # a digit somewhere
    chars: str = ""  # every one of these characters
    any_chars: str = ""  # at least one of these characters


class Alternation:
    """`(?:a)|(?:b)|...` compiled with `flags`, its finditer run with the alternatives the line can match."""

    def __init__(self, patterns: tuple[str, ...], needs: dict[str, Need], flags: int = 0):
        self.patterns = patterns
        self.flags = flags
        self.needs = tuple(needs.get(p) for p in patterns)
        self._chars = tuple(sorted({c for n in self.needs if n is not None for c in n.chars + n.any_chars}))
        # A line's signature (digit or not, which of the characters it holds) to the regex for it: a few dozen.
        self._by_signature: dict[tuple[bool, tuple[bool, ...]], re.Pattern[str] | None] = {}

    def finditer(self, line: str) -> Iterator[re.Match[str]]:
        signature = (_DIGIT.search(line) is not None, tuple(map(line.__contains__, self._chars)))
        regex = self._by_signature.get(signature, False)
        if regex is False:
            regex = self._by_signature[signature] = self._regex(self.possible(*signature))
        return iter(()) if regex is None else regex.finditer(line)

    def possible(self, digit: bool, held: tuple[bool, ...]) -> tuple[str, ...]:
        """The alternatives a line can match that has a digit or not and holds these of the characters."""
        chars = {c for c, there in zip(self._chars, held) if there}
        return tuple(p for p, need in zip(self.patterns, self.needs)
                     if need is None or ((digit or not need.digit) and chars.issuperset(need.chars)
                                         and (not need.any_chars or not chars.isdisjoint(need.any_chars))))

    def _regex(self, wanted: tuple[str, ...]) -> re.Pattern[str] | None:
        return re.compile("|".join(f"(?:{p})" for p in wanted), self.flags) if wanted else None  # re caches it
