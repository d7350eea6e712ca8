"""The shape of the token a question asks for: a question that names the kind of thing it wants ("which test",
"which commit", "the id of", "which branch", "which function") is answered by a line holding a token of that
kind, and not by a line that only repeats the question's own words ("Let me check all callers of X").

A classic step of retrieval question answering (answer-type detection): the kind is read from the question's
nouns, and each kind is a token pattern that any session of any project writes the same way."""

from __future__ import annotations

import re

from harness.models.builtin.text import HASH

# the question names the kind as the thing it asks for: "which test", "what is the newest commit", "the name of the
# git branch", "the id of"; not as the subject of something else it asks ("what did the config test fail on")
_ASKED = r"\b(?:(?:which|what)(?:\s+(?:is|was|are|were))?(?:\s+the)?|(?:name|id|number) of the)(?:\s+[\w'-]+){{0,2}}\s+{}\b"
_NOT_ASKED = r"(?!\s+(?:fail|failed|fails|expect|expected|report|reported|raise|raised|hit))"


def _asks(kinds: str) -> re.Pattern[str]:
    return re.compile(_ASKED.format(f"(?:{kinds})") + _NOT_ASKED, re.I)


# (question pattern, answer token pattern); the first question pattern that matches decides the kind
_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (_asks(r"tests?|test cases?|test functions?"),
     re.compile(r"\bTest[A-Z0-9]\w+|\btest_\w+|\b\w+\.(test|spec)\.\w+\b")),
    (_asks(r"commits?|sha|hash"),
     re.compile(rf"\b{HASH}\b")),
    (_asks(r"branch(?:es)?"),
     re.compile(r"(?<![\w/.])[A-Za-z][\w.-]*/[\w.-]*[A-Za-z0-9](?![\w/]*\.\w{1,5}\b)(?![\w/])|"
                r"\b(main|master|trunk|develop)\b")),
    (re.compile(r"\b(?:the (?:id|number) of|(?:which|what)(?:\s+[\w'-]+){0,2}\s+(?:id|ids|identifier)\b)", re.I),
     re.compile(rf"\b\d{{3,}}\b|\b(?=[0-9a-f]{{8}}){HASH}\b|#\d+\b")),
    (_asks(r"functions?|methods?|helpers?|helper functions?|handlers?|class(?:es)?|types?|structs?|constants?|"
           r"variables?|fields?|keys?|settings?|flags?|options?|lint (?:rule|error|complaint)s?"),
     re.compile(r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+\b|\w+\(\)")),
)
PRESENT = 2.0  # a unit holding a new token of the asked kind
ABSENT = 0.6   # a unit with none: it may still say it in words, so it is not ruled out


def answer_shape(question: str) -> re.Pattern[str] | None:
    """The token pattern of the kind of thing the question asks for, or None for a question of no such kind."""
    for asks, token in _KINDS:
        if asks.search(question):
            return token
    return None


def holds_new_token(unit: str, shape: re.Pattern[str], question: str) -> bool:
    """The unit holds a token of the asked shape that the question does not already name."""
    asked = question.lower()
    return any(match.group(0).lower().strip("#()") not in asked for match in shape.finditer(unit))


def shape_weight(unit: str, shape: re.Pattern[str] | None, question: str) -> float:
    if shape is None:
        return 1.0
    return PRESENT if holds_new_token(unit, shape, question) else ABSENT
