"""Text helpers shared by the builtin model's modes: words, sentences, clipping, token counts, tool verbs.

The memoised helpers here (functools.lru_cache) are pure functions of their text: their memo cannot carry
state from one client to another, it only spares re-reading the same context lines for every probe.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest

MAX_ITEM_CHARS = 300


HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])|\n+")
WORD = re.compile(r"[a-z0-9_]+(?:[./:-][a-z0-9_]+)*")
PATH = re.compile(r"(?<![\w@])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z][\w]{0,7}\b|(?<![\w@])(?:[\w.-]+/)+[\w.-]+")
ERROR_LINE = re.compile(r"\b(\w*(Error|Exception)\b:?|Traceback|FAILED|FATAL|fatal:|error:|ERROR\b|panic:)", re.I)
# A word and the value after it ("port 9090", "timeout=30s"). The word is taken whole and never given back
# (possessive) where it is at most 31 letters: then giving letters back cannot find a match (the value would
# have followed the whole word too), only cost time on every word of every line. A longer run backtracks.
KEYED_VALUE = re.compile(r"\b((?=[a-z][a-z_-]{31})[a-z][a-z_-]{1,30}|[a-z][a-z_-]{1,30}+)"
                         r"\s*(?:to|=|:|is|of|at|on)?\s*[`'\"]?(\d[\w.:/-]*|v\d[\w.-]*)", re.I)
DECISION_CUES = re.compile(r"\b(decided|decide|decision|instead|chose|choose|going with|go with|rather than|"
                            r"switch(ed)? to|opted)\b", re.I)
TYPED_ERROR = re.compile(r"\b[\w.]*(Error|Exception)\b:")

_READ_TOOLS = ("read", "view", "cat", "open", "get", "show", "grep", "search", "find", "list", "ls")
_EDIT_TOOLS = ("edit", "replace", "patch", "update", "modify", "str_replace", "apply")
_CREATE_TOOLS = ("write", "create", "new", "save", "touch")
_DELETE_TOOLS = ("delete", "remove", "rm", "unlink")

STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto about as is are was were be been
    being do does did done have has had having it its this that these those there here what which who whom whose
    when where why how i you he she we they me him her us them my your our their mine yours can could would should
    will shall may might must not no yes so than too very just also only any all some each every such own same
    other more most much many few up down out over under again further once please answer question number name
    exact exactly give tell say reply respond word words only session user assistant one use used using tell
    currently now current latest still conversation summary earlier written compaction""".split()
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    if len(word) > 4 and word.endswith("e") and not word.endswith(("ee", "ie", "ye")):
        return word[:-1]  # delete / deleted / deletes, migrate / migrated: one stem with the stripped forms
    if len(word) == 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]  # refs, bugs, logs: a short plural is its noun
    return word


# a commit or checkpoint hash: hex with a digit and a letter (a bare number or word is not one)
HASH = r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}"
_LONG_HASH = re.compile(r"^(?=[0-9a-f]{8})" + HASH + "$")
SHORT_HASH = 7
_CAMEL = re.compile(r"([a-z])([A-Z])")
_JOINERS = re.compile(r"[./:_-]")


@lru_cache(maxsize=262144)  # the same context lines are scored for every probe
def content_words(text: str) -> frozenset[str]:
    """Lower-cased words with stopwords removed; identifiers and paths also contribute their parts."""
    words: set[str] = set()
    # CamelCase identifiers also count by their parts: ModuleNotFoundError answers "which error".
    text = _CAMEL.sub(r"\1 \2", text) + " " + text
    for token in WORD.findall(text.lower()):
        parts = [token, *_JOINERS.split(token)] if _JOINERS.search(token) else [token]
        for part in parts:
            if part and part not in STOPWORDS:
                words.add(stem(part))
        if _LONG_HASH.match(token):  # a commit named by its short hash: 164ceba is 164ceba4dd15...
            words.add(token[:SHORT_HASH])
    return frozenset(words)


# The letters outside ASCII that re's IGNORECASE matches to an ASCII letter without lower-casing to it (the
# Kelvin sign lower-cases to k): found by a scan of every code point, Python 3.11.
_ODD_FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def folded(text: str) -> str:
    """The text lower-cased as a case-insensitive regex reads its letters: a word a re.I pattern must match
    that is not `in` this text is not in the text, so the pattern need not be searched."""
    if text.isascii() or not any(odd in text for odd in "\u0130\u0131\u017f"):  # translate costs, `in` not
        return text.lower()
    return text.translate(_ODD_FOLDS).lower()


def sentences(text: str) -> list[str]:
    return [s.strip(" -*•\t") for s in _SENTENCE_SPLIT.split(text) if s and s.strip(" -*•\t")]


def clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def request_tokens(request: ModelRequest) -> int:
    """o200k tokens of the request, counted per part (cached: a session's messages recur in every call)."""
    parts = [request.system or "", *(json.dumps(t, sort_keys=True) for t in request.tools),
             *(message_text(m) for m in request.messages)]
    return sum(count_cached(part) for part in parts if part)


@lru_cache(maxsize=16384)
def count_cached(text: str) -> int:
    return _tokens.count(text) + 1  # + the separator between parts


def message_text(message: ChatMessage) -> str:
    calls = " ".join(f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in message.tool_calls)
    return f"{message.role}: {message.content}" + (f" {calls}" if calls else "")


def last_user(request: ModelRequest) -> ChatMessage | None:
    for message in reversed(request.messages):
        if message.role == "user":
            return message
    return None


def tool_action(name: str) -> str:
    lower = name.lower()
    for words, action in ((_CREATE_TOOLS, "created"), (_EDIT_TOOLS, "edited"), (_DELETE_TOOLS, "deleted"),
                          (_READ_TOOLS, "read")):
        if any(w in lower for w in words):
            return action
    return f"used by {name}"
