"""Exact values a session states: ports, ids, hashes, paths, branches, versions, credentials, counts with units.

A summary that keeps "the port" but not "5432" has lost the fact. The summarizer keeps the lines that state
such values, each as its own short statement, in an exact-values section with a budget of its own.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from harness.models.builtin.alternation import Alternation, Need
from harness.models.builtin.outputs import is_bookkeeping, script_echo

MAX_FACT_CHARS = 160

_PATTERNS = (
    r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|[\w-]+\.(?:local|internal|com|io|dev|net|org)):\d{2,5}\b",
    r"\bport\s+\d{2,5}\b",
    r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b",  # ENT-109, PRO-89
    r"(?<![\w/])#\d{1,6}\b",  # PR #170, issue #89
    r"\b(?:PR|pull request|issue)\s+#?\d{1,6}\b",
    r"\bv?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b",  # 1.3.2, v2.1.7
    r"\b[0-9a-f]{7,40}\b",  # commit or checkpoint hashes (a digit and a letter are checked below)
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",  # UUIDs
    r"[\w.+-]+@[\w-]+\.[\w.]+",  # e-mail addresses (seed accounts)
    r"\b(?:password|passwd|pwd|token|api[_ ]key|secret|user(?:name)?|login)\s*[:=]\s*\S+",
    r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|minutes|min|h|hours|days|KB|MB|GB|TB|%|px|pt|rem|"
    r"lines?|insertions?|deletions?|commits?|files?|tests?|checkpoints?|tokens?|requests?|retries|workers?)\b",
    r"(?:^|\s)(?:/[\w.@-]+){2,}/?",  # absolute paths
    # a branch name is named as one and has a separator in it (feat/colours, alex/ent-221-hooks)
    r"\b(?:branch|checkout(?: -b)?|switch(?: -c)?)\s+['\"`]?[\w.-]+[/-][\w./-]+",
)
# What a line must hold for each pattern to match in it (alternation.py): most lines skip most patterns.
_NEEDS = {_PATTERNS[0]: Need(digit=True, chars=":"), _PATTERNS[1]: Need(digit=True),
          _PATTERNS[2]: Need(digit=True, chars="-"), _PATTERNS[3]: Need(digit=True, chars="#"),
          _PATTERNS[4]: Need(digit=True), _PATTERNS[5]: Need(digit=True, chars="."), _PATTERNS[7]: Need(chars="-"),
          _PATTERNS[8]: Need(chars="@"), _PATTERNS[9]: Need(any_chars=":="), _PATTERNS[10]: Need(digit=True),
          _PATTERNS[11]: Need(chars="/"), _PATTERNS[12]: Need(any_chars="/-")}
_VALUE = Alternation(_PATTERNS, _NEEDS, re.I)
# git names the branch it is on, any name ("main" too): "On branch X", "Switched to (a new) branch 'X'",
# and a commit's first line "[X 1a2b3c4] message". That is the working branch, a value later steps need.
GIT_BRANCH = re.compile(r"^(?:On branch |Switched to (?:a new )?branch '?|\[)([\w./-]+?)'?(?:$| (?:\(root-commit\) )?"
                        r"[0-9a-f]{7,12}\] )")
_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_DIGIT, _HEX_LETTER = re.compile(r"\d"), re.compile(r"[a-f]")
_BARE_PATH = re.compile(r"^\S+$")  # a line that is one path or word: a listing entry, not a statement
# Listings (numbered source lines, diffs, tables of hashes) state nothing on their own.
_LISTING = re.compile(r"^\s*(\d+\s*(→|:|\||-)|[+-]{1,3}\s|@@|[│├└|]|```|\{|\}|[\w.]+\s*\($)")
# Many lines of one output that open with the same word ("ok  pkg/a 3.1s", "ok  pkg/b 2.9s") are a run's
# report line by line: past a few, its last line stands for the rest.
_LEAD_WORD = re.compile(r"^([A-Za-z]+)\b")
MAX_SAME_LEAD = 3


def _real_value(match: str) -> bool:
    text = match.strip().lstrip(":#")
    if _HEX.match(text):  # a hash mixes digits and letters; a bare word or number is not one
        return bool(_DIGIT.search(text) and _HEX_LETTER.search(text))
    return len(text) >= 2


@lru_cache(maxsize=262144)
def values_in(line: str) -> tuple[str, ...]:
    """The exact values a line states, in order, without repeats."""
    found: list[str] = []
    for match in _VALUE.finditer(line):
        value = match.group(0).strip().rstrip(".,;:)")
        if _real_value(value) and value not in found:
            found.append(value)
    return tuple(found)


@lru_cache(maxsize=65536)
def fact_lines(text: str, *, listing_ok: bool = False) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(line, its values) for each line of a message that states an exact value; long lines are cut to the
    sentence that holds the first value."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for raw in text.splitlines():
        line = " ".join(raw.split()).strip(" -*•")
        if not line or (not listing_ok and (_LISTING.match(raw) or _BARE_PATH.match(line) or is_bookkeeping(line))):
            continue
        branch = _branch(line)
        values = (tuple(dict.fromkeys(branch + values_in(line))) if branch else values_in(line)) or script_echo(raw)
        if values:
            out.append((line if len(line) <= MAX_FACT_CHARS else _around(line, values[0]), values))
    return tuple(out) if listing_ok else _collapse_runs(out)


def _branch(line: str) -> tuple[str, ...]:
    match = GIT_BRANCH.match(line)
    return (f"branch {match.group(1)}",) if match else ()


def _collapse_runs(found: list[tuple[str, tuple[str, ...]]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    words = [lead.group(1) if (lead := _LEAD_WORD.match(line)) else None for line, _ in found]
    many = {word for word, count in Counter(words).items() if word is not None and count > MAX_SAME_LEAD}
    if not many:
        return tuple(found)
    last = {word: max(i for i, (line, _) in enumerate(found) if line.startswith(word)) for word in many}
    return tuple(pair for i, (pair, word) in enumerate(zip(found, words)) if word not in many or last[word] == i)


def _around(line: str, value: str) -> str:
    if len(line) <= MAX_FACT_CHARS:
        return line
    at = max(0, line.find(value))
    start = max(0, at - MAX_FACT_CHARS // 3)
    piece = line[start:start + MAX_FACT_CHARS].strip()
    return ("…" if start else "") + piece + ("…" if start + MAX_FACT_CHARS < len(line) else "")
