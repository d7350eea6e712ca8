"""Matching a probe's items against a text, as EVALUATION.md states it.

Both sides are normalised the same way (case, whitespace, path separators, quotes, thousands separators,
trailing punctuation), then an item matches only on token boundaries: a number never inside a longer number
(`79` is not in `179`, `5` is not in `1.5`), a word never inside another word (`ok` is not in `token`).
A `none` item counts only where it is *stated*: a mention marked as history ("changed from 7421", "7421 -> 7555",
"not npm", "7421 (old)") states nothing. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from harness import probe_regex

_QUOTES = re.compile(r"[\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u00ab\u00bb]")
_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
_SPACE = re.compile(r"\s+")
_TRAILING = ".,;:!?"
_UNIT = re.compile(r"\n+|(?<=[.!?])\s+")
# A statement is a line or sentence of at most this many words. Across the 3,511 lines and sentences of the 15 real
# Claude Code summaries in shared/real-sessions the longest has 54 words (p99: 31); a keyword bag is one long run.
STATEMENT_WORDS = 60

# A none item preceded by one of these (at most two words in between, same clause) is mentioned as history.
_HISTORY_BEFORE = re.compile(
    r"\b(?:from|was|were|previously|formerly|earlier|originally|old|older|instead\s+of|rather\s+than|not|no\s+longer|"
    r"replac(?:e|es|ed|ing)|supersed(?:e|es|ed|ing)|used\s+to\s+be|prior|deprecated|dropped|removed|reverted|"
    r"abandoned|rejected|never|off|no)"
    r"(?:[^\w.;\n]+[\w/.-]+){0,2}[^\w.;\n]*$")
# ... or followed by an arrow or "to <value>", or a parenthesised history note.
_HISTORY_AFTER = re.compile(
    r"^[^\w\n]{0,3}(?:->|\u2192|=>|\u21d2|to\s+[\w/.-]|\(?\s*(?:old|previous|former|superseded|deprecated|"
    r"no\s+longer|was\s+replaced|replaced|before|earlier)\b)"
    # "the 0.10.3 pin was dropped", "iron-session was not added": at most one word, then the verdict
    r"|^(?:[^\w\n]+[\w-]+)?[^\w\n]+(?:was|were|is|is\s+being|has\s+been|have\s+been)\s+"
    r"(?:not\b|never\b|dropped|removed|replaced|reverted|abandoned|superseded|deprecated|rejected|retired|drained|"
    r"decommissioned)")


def normalise(text: str) -> str:
    """The one normal form for texts and items alike."""
    text = text.replace("\\", "/").lower()
    text = _QUOTES.sub(" ", text)
    text = _THOUSANDS.sub("", text)
    return _SPACE.sub(" ", text).strip()


def normalise_item(item: str) -> str:
    """An item's normal form, without trailing punctuation ("9090." asks for 9090)."""
    return normalise(item).strip(_TRAILING + " ")


class Haystack:
    """A text normalised once: a long context is asked many questions."""

    def __init__(self, raw: str):
        self.raw = raw

    @cached_property
    def text(self) -> str:
        return normalise(self.raw)

    @cached_property
    def statements(self) -> tuple[Haystack, ...]:
        """The lines and sentences of the text short enough to state something."""
        units = (u for u in _UNIT.split(self.raw) if u.strip())
        return tuple(Haystack(u) for u in units if len(u.split()) <= STATEMENT_WORDS)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _left_ok(text: str, start: int, item: str) -> bool:
    if start == 0 or not _word(item[0]):
        return True
    before = text[start - 1]
    if _word(before):
        return False
    # "5" inside "1.5" or "1,5": a decimal point between digits joins them into one number
    return not (item[0].isdigit() and before in ".," and start >= 2 and text[start - 2].isdigit())


def _right_ok(text: str, end: int, item: str) -> bool:
    if end == len(text) or not _word(item[-1]):
        return True
    after = text[end]
    if _word(after):
        return False
    return not (item[-1].isdigit() and after in ".," and end + 1 < len(text) and text[end + 1].isdigit())


def occurrences(text: str, item: str) -> list[int]:
    """Start offsets of `item` in `text` (both normalised) that sit on token boundaries."""
    found, start = [], text.find(item)
    while start != -1:
        if _left_ok(text, start, item) and _right_ok(text, start + len(item), item):
            found.append(start)
        start = text.find(item, start + 1)
    return found


def contains(haystack: Haystack, item: str) -> bool:
    return bool(occurrences(haystack.text, normalise_item(item)))


def stated_in(haystack: Haystack, item: str) -> bool:
    """`item` is in one of the text's statements (a list of hundreds of words states nothing)."""
    return any(contains(unit, item) for unit in haystack.statements)


def is_history(text: str, start: int, end: int) -> bool:
    """Whether the mention at text[start:end] is marked as a past or rejected value."""
    return bool(_HISTORY_BEFORE.search(text[max(0, start - 60):start])
                or _HISTORY_AFTER.match(text[end:end + 40]))


def states(haystack: Haystack, item: str) -> bool:
    """Whether `item` is stated as a current value somewhere (not only mentioned as history)."""
    key = normalise_item(item)
    return any(not is_history(haystack.text, s, s + len(key)) for s in occurrences(haystack.text, key))


@dataclass(frozen=True)
class Match:
    passed: bool
    missing: tuple[str, ...] = ()  # `all` items with no alternative present
    forbidden: tuple[str, ...] = ()  # `none` items stated as current
    regex_ok: bool = True

    @property
    def decided_by(self) -> str:
        """One line saying which item decided the outcome (for `cases grade`)."""
        if self.missing:
            return f"missing {self.missing[0]!r}"
        if self.forbidden:
            return f"states {self.forbidden[0]!r}, which must not be stated"
        if not self.regex_ok:
            return "the regex does not match"
        return "every item present, nothing forbidden stated"


def match_items(haystack: Haystack, all_items: tuple[tuple[str, ...], ...], none: tuple[str, ...] = (),
                regex: str | None = None, *, none_in: Haystack | None = None) -> Match:
    """`all`: every item (some alternative of it) present; `none`: none stated as current (in `none_in`, by
    default the same text); `regex`: searched in the raw text."""
    missing = tuple(item[0] for item in all_items if not any(contains(haystack, a) for a in item))
    where = haystack if none_in is None else none_in
    forbidden = tuple(n for n in none if states(where, n))
    regex_ok = regex is None or probe_regex.search(regex, haystack.raw)
    return Match(not missing and not forbidden and regex_ok, missing, forbidden, regex_ok)
