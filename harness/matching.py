"""Matching a probe's items against a text, as EVALUATION.md states it.

Both sides are normalised the same way (case, whitespace, path separators, quotes, thousands separators,
trailing punctuation), then an item matches only on token boundaries: a number never inside a longer number
(`79` is not in `179`, `5` is not in `1.5`), a word never inside another word (`ok` is not in `token`).
A `none` item counts only where it is *stated*: a mention marked as history ("changed from 7421", "7421 -> 7555",
"not npm", "7421 (old)") states nothing. An `all` item stated as absent ("not 8080", "no small ones") is not
present. In a summary or a long answer an item counts only where a statement binds it to the probe's referent
(an anchor beside it, or in the statement's heading): presence bound to what it is about, not layout.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import islice
from typing import Iterable

from harness import probe_regex
from harness.statements import statements
from harness.word_forms import in_any_form, inflectable

_QUOTES = re.compile(r"[\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u00ab\u00bb]")
_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
_SPACE = re.compile(r"\s+")
_TRAILING = ".,;:!?"
# An `all` item right after one of these (an article or "any" between at most) is stated as absent: "no small
# ones", "not 8080", "never retried", "don't retry" (quotes are spaces by then: "don t").
_NEGATED = re.compile(r"(?:\b(?:no|not|never|without|nor|no\s+longer)|\w+n\s+t)(?:\s+(?:a|an|the|any))?\s+$")
# Words of a question that name nothing (the fallback anchor is a content word of the question).
_QUESTION_FILLER = frozenset("""
what which who whom whose when where why how is are was were be been being do does did done has have had the a an
of in on at to for from by with about into onto over under after before during since until and or but not no
this that these those there here it its they them their we our you your he she his her i me my any some each
every all both either neither one ones other same such than then so as if whether just only also still now
currently current exactly right now yet ever again first last next session agent user assistant asked ask told
tell say said says use used using make made want wanted wants need needed needs should would could will can may
might must shall going get got find found keep kept name named give given value values thing things way
""".split())

# A none item preceded by one of these (at most two words in between, same clause) is mentioned as history.
_HISTORY_BEFORE = re.compile(
    r"\b(?:from|was|were|previously|formerly|earlier|originally|initially|old|older|instead\s+of|rather\s+than|not|no\s+longer|"
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


@lru_cache(maxsize=8192)  # a probe's few items are looked up in thousands of texts
def normalise_item(item: str) -> str:
    """An item's normal form, without trailing punctuation ("9090." asks for 9090)."""
    return normalise(item).strip(_TRAILING + " ")


class Haystack:
    """A text normalised once: a long context is asked many questions. A statement also knows its heading."""

    def __init__(self, raw: str, heading: str = "", code: bool = False):
        self.raw = raw
        self.heading = heading
        self.code = code  # a line of a code block: `none` reads statements, not quoted code

    @classmethod
    def joined(cls, raws: Iterable[str], forms: dict[str, str]) -> Haystack:
        """The texts joined by line breaks, its normal form made of theirs (`forms`: raw -> normal form, kept
        across calls): a case's contexts repeat the same messages, each normalised once, not once per context.
        Equal to normalising the joined text: the normal form is made character by character except where
        whitespace runs collapse, a line break ends a run of letters (for lower-casing) and no thousands
        separator reaches across it."""
        raws = list(raws)
        haystack = cls("\n".join(raws))
        parts = (forms[raw] if raw in forms else forms.setdefault(raw, normalise(raw)) for raw in raws)
        haystack.__dict__["text"] = " ".join(part for part in parts if part)  # preset cached_property
        return haystack

    @cached_property
    def text(self) -> str:
        return normalise(self.raw)

    @cached_property
    def statements(self) -> tuple[Haystack, ...]:
        """The text's statements, each with what binds it (harness.statements: a Markdown document's structure,
        or the lines and clauses of plain text)."""
        return tuple(Haystack(s.text, s.context, s.code) for s in statements(self.raw))

    @cached_property
    def heading_text(self) -> str:
        return normalise(self.heading)


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


class Texts:
    """Many texts (a session's messages, in order) normalised once each and searched together: which of the first
    `end` hold an item, as `contains` finds it in each. They are joined with a line break, which no normal form
    holds: a match never spans two texts, and each text's edges read as its own (a line break is no word)."""

    def __init__(self, raws: Iterable[str], forms: dict[str, str] | None = None):
        self._raws = iter(raws)  # normalised only as far as a search reaches
        self._forms = {} if forms is None else forms  # raw -> normal form, perhaps shared (Haystack.joined)
        self._starts: list[int] = []
        self._joined = ""

    def holding(self, item: str, end: int) -> set[int]:
        """The positions (below `end`) of the texts in which `item` occurs on token boundaries."""
        self._read(end)
        key = normalise_item(item)
        if not key:  # no offsets to place; each text answers for itself, as `contains` would
            return {i for i in range(end) if occurrences(self._text(i), key)}
        stop = self._starts[end] if end < len(self._starts) else len(self._joined)
        found = set()
        start = self._joined.find(key, 0, stop)
        while start != -1:
            if _left_ok(self._joined, start, key) and _right_ok(self._joined, start + len(key), key):
                found.add(bisect_right(self._starts, start) - 1)
            start = self._joined.find(key, start + 1, stop)
        return found

    def _read(self, end: int) -> None:
        forms = self._forms
        texts = [forms[raw] if raw in forms else forms.setdefault(raw, normalise(raw))
                 for raw in islice(self._raws, max(0, end - len(self._starts)))]
        offset = len(self._joined)
        for text in texts:
            self._starts.append(offset)
            offset += len(text) + 1
        self._joined += "".join(f"{text}\n" for text in texts)

    def _text(self, index: int) -> str:
        stop = self._starts[index + 1] if index + 1 < len(self._starts) else len(self._joined)
        return self._joined[self._starts[index]:stop - 1]


def negated(text: str, start: int) -> bool:
    """Whether the mention starting at text[start] is stated as absent ("not 8080", "no small ones")."""
    return bool(_NEGATED.search(text[max(0, start - 24):start]))


_SUFFIX = re.compile(r"(?:ing|ed|es|s|ly)$")


def question_anchors(question: str) -> tuple[str, ...]:
    """The fallback referent of a probe without `anchor`: the content words of its question, each as its stem
    and any ending ("remains" asks for `remain*`, which "remaining" holds)."""
    words = (w.strip("./-") for w in re.findall(r"[\w./-]+", normalise(question)))
    stems = (_stem(w) for w in words if w not in _QUESTION_FILLER and len(w) > 2)
    return tuple(dict.fromkeys(stems))


def _stem(word: str) -> str:
    if not word.isalpha() or len(word) < 5:
        return word
    stem = _SUFFIX.sub("", word)
    return (stem if len(stem) >= 4 else word) + "*"


def anchor_in(text: str, anchor: str) -> bool:
    """An anchor on token boundaries; one ending in `*` is a word's beginning (`remain*`: "remains", "remaining"); a
    plain word also in its other forms (English Snowball stem: `currently` is "Current", `conflict` "conflicts")."""
    if not anchor.endswith("*"):
        key = normalise_item(anchor)
        return bool(occurrences(text, key)) or (inflectable(key) and in_any_form(text, key))
    stem = normalise_item(anchor[:-1])
    return any(_left_ok(text, start, stem) for start in _finds(text, stem))


def _finds(text: str, key: str):
    start = text.find(key)
    while start != -1:
        yield start
        start = text.find(key, start + 1)


# An anchor binds a fact when it stands within this many words of it in the same statement: a quoted request of 70
# words binds its own facts; a run of hundreds of words (a bag) binds only what happens to sit side by side.
BESIDE_WORDS = 10


def beside(text: str, start: int, end: int, words: int = BESIDE_WORDS) -> str:
    """The words around text[start:end] (at most `words` each side; a normal form has one space between words),
    the whole token that holds the mention blanked: an item never anchors itself, and a path, URL or identifier
    that carries a word with the fact (`docs/architecture/x.md`, `pull/89`) does not say what the fact is about."""
    start, end = token_around(text, start, end)
    before = " ".join(text[:start].split(" ")[-(words + 1):])
    after = " ".join(text[end:].split(" ")[:words + 1])
    return before + " " * (end - start) + after


# What ends a token: a space (the normal form's only whitespace) or `=`, which binds a name to its value
# (`vite_relay_url=wss://...`, `--port=9090`) as "the port is" does.
_TOKEN_ENDS = " ="


def token_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the token(s) of a normal form that hold text[start:end] (read outward as far as the token
    runs, not across the text: a bag's statement is one long line)."""
    while start > 0 and text[start - 1] not in _TOKEN_ENDS:
        start -= 1
    while end < len(text) and text[end] not in _TOKEN_ENDS:
        end += 1
    return start, end


def anchored(text: str, start: int, end: int, anchors: tuple[str, ...], words: int = BESIDE_WORDS) -> bool:
    """One of `anchors` stands beside the mention at text[start:end] (within `words` words)."""
    near = beside(text, start, end, words)
    return any(anchor_in(near, a) for a in anchors)


def bound_in(unit: Haystack, item: str, anchors: tuple[str, ...] | None, negatable: bool = True) -> bool:
    """`item` stated (not negated, when `negatable`) in `unit`, with one of `anchors` (any one will do) beside it
    or in the statement's heading, when anchors are given."""
    key = normalise_item(item)
    spans = [s for s in occurrences(unit.text, key) if not (negatable and negated(unit.text, s))]
    if not spans or anchors is None:
        return bool(spans)
    return _bound(unit, key, spans, anchors)


def _bound(unit: Haystack, key: str, spans: list[int], anchors: tuple[str, ...]) -> bool:
    """One of `anchors` beside one of the mentions of `key` at `spans`, or in the statement's heading."""
    heading = blank_tokens(unit.heading_text, key)  # a heading that repeats the fact's token binds by its other words
    return (any(anchored(unit.text, s, s + len(key), anchors) for s in spans)
            or any(anchor_in(heading, a) for a in anchors))


def blank_tokens(text: str, key: str) -> str:
    """`text` with every token that holds `key` blanked."""
    for start in occurrences(text, key):
        left, right = token_around(text, start, start + len(key))
        text = text[:left] + " " * (right - left) + text[right:]
    return text


def stated_in(haystack: Haystack, item: str, anchors: tuple[str, ...] | None = None, negatable: bool = True) -> bool:
    """`item` stated in one of the text's statements beside the probe's referent (an anchor): a fact counts where
    it is bound to what it is about, not where it merely occurs in a run of words."""
    return last_stated_in(haystack, item, anchors, negatable) >= 0


def last_stated_in(haystack: Haystack, item: str, anchors: tuple[str, ...] | None = None,
                   negatable: bool = True) -> int:
    """The index of the last statement that states `item` as `stated_in` reads it; -1 where none does."""
    units = haystack.statements
    return next((i for i in range(len(units) - 1, -1, -1) if bound_in(units[i], item, anchors, negatable)), -1)


def is_history(text: str, start: int, end: int) -> bool:
    """Whether the mention at text[start:end] is marked as a past or rejected value."""
    return bool(_HISTORY_BEFORE.search(text[max(0, start - 60):start])
                or _HISTORY_AFTER.match(text[end:end + 40]))


def states(haystack: Haystack, item: str) -> bool:
    """Whether `item` is stated as a current value somewhere (not only mentioned as history)."""
    key = normalise_item(item)
    return any(not is_history(haystack.text, s, s + len(key)) for s in occurrences(haystack.text, key))


# A clause that asks ("50 commits on a branch...?") states no value.
_QUESTION = re.compile(r"\?\W*$")
# A statement marked done ("✅ Add the type", "[x] ...", "Done: ..."): for what remains, it is history.
_DONE = re.compile(r"^[\W_]*(?:\u2705|\u2611|\u2714|\[x\]|done\b|completed?\b)", re.IGNORECASE)


def last_stated_about(haystack: Haystack, item: str, anchors: tuple[str, ...] | None,
                      done_is_history: bool = False) -> int:
    """The index of the last statement that states `item` as the current value of what the probe asks; -1 where none
    does. Not as history, not in a question, not in a line of code (quoted code and commands hold old values without
    stating them), and bound to one of `anchors` as an expected fact is (a stale value said of something else states
    nothing about the referent). With `done_is_history` (a question of what remains), an entry marked done states
    nothing that remains."""
    key = normalise_item(item)
    units = haystack.statements
    for index in range(len(units) - 1, -1, -1):
        unit = units[index]
        if unit.code or _QUESTION.search(unit.text) or (done_is_history and _DONE.search(unit.raw)):
            continue
        spans = [s for s in occurrences(unit.text, key) if not is_history(unit.text, s, s + len(key))]
        if spans and (anchors is None or _bound(unit, key, spans, anchors)):
            return index
    return -1


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


# An answer longer than this many words is read statement by statement with the probe's anchors, as a summary is:
# a terse answer ("8080") names no referent, a paragraph that lists values must bind the asked one to it.
LONG_ANSWER_WORDS = 40
# A question that itself asks about an absence ("which files must the agent not modify?") is answered by a negated
# item: the negation is what is asked, not a denial of the item.
_NEGATIVE_QUESTION = re.compile(r"\b(?:not|never|no|cannot|without|forbid\w*|avoid\w*|prohibit\w*|\w+n\s+t)\b")


def asks_absence(question: str) -> bool:
    return bool(_NEGATIVE_QUESTION.search(normalise(question)))


def present(haystack: Haystack, item: str, *, negatable: bool = True) -> bool:
    """`item` occurs somewhere not stated as absent (with `negatable` false, anywhere)."""
    text = haystack.text
    return any(not (negatable and negated(text, s)) for s in occurrences(text, normalise_item(item)))


def match_items(haystack: Haystack, all_items: tuple[tuple[str, ...], ...], none: tuple[str, ...] = (),
                regex: str | None = None, *, none_in: Haystack | None = None,
                anchors: tuple[str, ...] | None = None, negatable: bool = True) -> Match:
    """`all`: every item (some alternative of it) present and not negated (when `negatable`), bound to one of
    `anchors` in a statement when the text is long (over LONG_ANSWER_WORDS); `none`: none stated as current (in
    `none_in`, by default the same text); `regex`: searched in the raw text."""
    long = anchors is not None and len(haystack.text.split()) > LONG_ANSWER_WORDS

    def found(alternative: str) -> bool:
        if long:
            return any(bound_in(unit, alternative, anchors, negatable) for unit in haystack.statements)
        return present(haystack, alternative, negatable=negatable)

    missing = tuple(item[0] for item in all_items if not any(found(a) for a in item))
    where = haystack if none_in is None else none_in
    forbidden = tuple(n for n in none if states(where, n))
    regex_ok = regex is None or probe_regex.search(regex, haystack.raw)
    return Match(not missing and not forbidden and regex_ok, missing, forbidden, regex_ok)
