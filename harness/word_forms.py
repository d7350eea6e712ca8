"""A word in its other forms: `currently` is "Current", `feature branch` is "feature branches" (the English Snowball
stemmer, snowballstemmer). An anchor names what a fact is about; the summary may inflect it. Pure functions, no I/O."""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

_STEMMER = snowballstemmer.stemmer("english")
# Lower-case words (a normal form), one of them long enough for its stem to say what it is: shorter ones, and
# anything holding digits or punctuation (a path, an identifier, a value), match only as written.
_INFLECTABLE = re.compile(r"(?=.*[a-z]{4})[a-z]+(?: [a-z]+)*")
_PLAIN_WORD = re.compile(r"(?<!\w)[a-z]+(?!\w)")  # a word standing alone, not a piece of an identifier


def inflectable(words: str) -> bool:
    return _INFLECTABLE.fullmatch(words) is not None


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word)


def in_any_form(text: str, words: str) -> bool:
    """`words` (normal form, one or more) in `text` (normal form) as the same run of words, each in any form."""
    stems = [_stem(word) for word in words.split(" ")]
    found = [_stem(word) for word in _PLAIN_WORD.findall(text)]
    return any(found[i:i + len(stems)] == stems for i in range(len(found) - len(stems) + 1))
