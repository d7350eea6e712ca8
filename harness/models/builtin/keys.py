"""What a statement is about: the key under which a later statement supersedes an earlier one ('port' in "use
port 9090", the label of "Entire-Checkpoint: 764ea1a5fad1"), so a summary states the current value once."""

from __future__ import annotations

import re

from harness.models.builtin.facts import GIT_BRANCH
from harness.models.builtin.text import KEYED_VALUE, STOPWORDS, WORD

_LABEL = re.compile(r"^\W*([A-Za-z][\w -]{1,30}?)\s*:\s+\S")  # "Entire-Checkpoint: 764ea1a5fad1"
_SUPERSEDE_FILLER = {"actually", "now", "instead", "please", "let's", "lets", "ok", "okay", "so", "and", "the"}


def value_key(category: str, text: str) -> str | None:
    """A key under which a later statement supersedes an earlier one, e.g. 'port' in 'use port 9090'."""
    for match in KEYED_VALUE.finditer(text):
        if match.group(1).lower() not in STOPWORDS:
            return f"{category}:{match.group(1).lower()}"
    words = [w for w in WORD.findall(text.lower()) if w not in _SUPERSEDE_FILLER]
    return f"{category}:{' '.join(words)}" if words else None


def fact_key(line: str, values: tuple[str, ...]) -> str:
    """What a value line is about: its keyed value ('port 9090' -> port) so a new port replaces the old
    one, else the value itself, so the same value stated again is kept once."""
    if values[0].startswith("branch ") and GIT_BRANCH.match(line) and not line.startswith("["):
        return "facts:working branch"  # the branch git says it is on now replaces the one it was on
        # (a commit line names its branch too, but is kept by its hash: each commit is a value)
    label = _LABEL.match(line) if ":" in line else None  # a label ends in ':'; most value lines have none
    if label and not any(v in label.group(1) for v in values):
        return f"facts:{label.group(1).strip().lower()}"  # "Entire-Checkpoint: <id>": the newest id wins
    for match in KEYED_VALUE.finditer(line):
        word, value = match.group(1).lower(), match.group(2)
        if word not in STOPWORDS and (value in values or any(value in v or v in value for v in values)):
            return f"facts:{word}"  # (most often the value is one of the values: no need to look inside)
    return f"facts:{values[0].lower()}"
