"""A context cut into scored units (lines, sentences, tool-call arguments), and the cache of analysed contexts.

The per-context work (units, words, document frequencies) is kept in a `ContextCache` owned by whoever asks
(a BuiltinClient, an Emulator), since one context is asked many questions; two owners never share one.
The per-line helpers are memoised with lru_cache: pure functions of a line, so their memo holds no state.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from harness.models.base import ChatMessage, ModelRequest
from harness.models.builtin.noise import user_words
from harness.models.builtin.text import (ERROR_LINE, HEADING, KEYED_VALUE, STOPWORDS, TYPED_ERROR, content_words,
                                         sentences)


_ASSERT_LINE = re.compile(r"\b(want|wanted|expected|got|assert\w*|should (be|equal|have))\b", re.I)
_CODE_LINE = re.compile(r"^\s*(\d+[:\s→-]|[0-9a-f]{7,40}\s|[│├└]|[{}()\[\];]+$)")


@dataclass(frozen=True)
class Context:
    """One analysed context: its units and, per unit, where it came from and what it looks like."""

    units: list[str]
    roles: list[str]  # system / user / assistant / tool / call
    messages: list[int]
    said: list[bool]
    words: list[frozenset[str]]
    lengths: list[int]
    postings: dict[str, list[int]]
    stale: set[int]
    first_user: int  # message index of the first user message
    avg_length: float
    code: list[bool]
    parent: list[int]  # for a tool result's units: the message that made the call; else the unit's own message
    by_message: dict[int, list[int]]
    errorish: list[bool]


def _call_units(call) -> tuple[list[str], list[str]]:
    """A tool call as a short header ('bash: pytest -q') and the lines of its long arguments."""
    short: list[str] = []
    long_lines: list[str] = []
    for key, value in sorted(call.arguments.items()):
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        if len(text) <= 200 and "\n" not in text:
            short.append(f"{key}={text}")
        else:
            long_lines.append(text)
    header = f"{call.name}: " + ", ".join(short) if short else call.name
    return [header], long_lines


def _message_key(message: ChatMessage) -> tuple:
    calls = tuple((c.id, c.name, json.dumps(c.arguments, sort_keys=True)) for c in message.tool_calls)
    return (message.role, message.content, message.tool_call_id, calls)


CONTEXT_CACHE_SIZE = 8  # a case asks its probes of a few contexts at a time


class ContextCache:
    """Analysed contexts by content, the oldest dropped first. Locked: `acomplete` runs requests in threads."""

    def __init__(self, size: int = CONTEXT_CACHE_SIZE) -> None:
        self.size = size
        self._contexts: dict[tuple, Context] = {}
        self._lock = threading.Lock()

    def get(self, request: ModelRequest) -> Context:
        """The analysed context of a request: everything before its last message (the question)."""
        key = (request.system or "", tuple(_message_key(m) for m in request.messages[:-1]))
        with self._lock:
            found = self._contexts.get(key)
        if found is None:
            found = build_context(request)
            with self._lock:
                while len(self._contexts) >= self.size:
                    self._contexts.pop(next(iter(self._contexts)))
                self._contexts[key] = found
        return found


def build_context(request: ModelRequest) -> Context:
    units: list[str] = []
    roles: list[str] = []
    messages: list[int] = []
    texts: list[tuple[str, str, int]] = [(request.system or "", "system", -1)]
    first_user = -1
    caller: dict[str, int] = {}
    parents: dict[int, int] = {}
    for index, message in enumerate(request.messages[:-1]):
        for call in message.tool_calls:
            caller[call.id] = index
        if message.role == "tool":
            parents[index] = caller.get(message.tool_call_id or "", index - 1)
        if message.role == "user":
            said, harness = _user_parts(message.content)
            if said and first_user < 0:
                first_user = index
            texts += [(said, "user", index), (harness, "system", index)]
            continue
        texts.append((message.content, message.role, index))
        for call in message.tool_calls:
            headers, long_lines = _call_units(call)
            texts += [(h, "call", index) for h in headers]
            texts += [(t, "tool", index) for t in long_lines]
    for text, role, index in texts:
        found = _units_of(text) if role != "call" else (text,)
        units.extend(found)
        roles.extend([role] * len(found))
        messages.extend([index] * len(found))
    words = [content_words(u) for u in units]
    postings: dict[str, list[int]] = {}
    for position, ws in enumerate(words):
        for w in ws:
            postings.setdefault(w, []).append(position)
    said = [r in ("system", "user", "assistant") for r in roles]
    lengths = [len(ws) for ws in words]
    stale = _superseded(units, {i for i, s in enumerate(said) if s and roles[i] != "system"})
    flags = [_tool_flags(u) if not s else (False, False) for s, u in zip(said, units)]
    code = [f[1] for f in flags]
    parent = [parents.get(m, m) if r == "tool" else m for r, m in zip(roles, messages)]
    by_message: dict[int, list[int]] = {}
    for position, message in enumerate(messages):
        by_message.setdefault(message, []).append(position)
    errorish = [f[0] if not s else _said_error(u) for f, s, u in zip(flags, said, units)]
    return Context(units, roles, messages, said, words, lengths, postings, stale, first_user,
                    (sum(lengths) / len(lengths)) if sum(lengths) else 1.0, code, parent, by_message, errorish)


def _user_parts(text: str) -> tuple[str, str]:
    """A user turn as (the user's own words, what the harness put in it: injected instructions, command
    echoes, skill bodies, 'continue' prompts). The harness text is still read, as the system's, not the user's."""
    said = user_words(text)
    if said == text.strip():
        return said, ""
    kept = set(said.splitlines())
    return said, "\n".join(line for line in text.splitlines() if line.strip() and line.rstrip() not in kept)


_ERROR_HINTS = ("rror", "xception", "fail", "fatal", "panic", "want", "expect", "got", "assert", "should",
                "traceback", "enoent", "refused", "denied", "timeout", "timed out")


@lru_cache(maxsize=262144)
def _tool_flags(unit: str) -> tuple[bool, bool]:
    """(looks like an error or a failed assertion, looks like a code/listing line) for a printed unit."""
    lower = unit.lower()
    errorish = any(h in lower for h in _ERROR_HINTS) and bool(
        TYPED_ERROR.search(unit) or ERROR_LINE.search(unit) or _ASSERT_LINE.search(unit))
    return errorish, bool(_CODE_LINE.match(unit))


@lru_cache(maxsize=65536)
def _said_error(unit: str) -> bool:
    return bool(TYPED_ERROR.search(unit) or ERROR_LINE.search(unit))


@lru_cache(maxsize=16384)
def _units_of(text: str) -> tuple[str, ...]:
    units: list[str] = []
    for line in text.splitlines():
        line = line.strip(" -*•\t")
        if not line:
            continue
        heading = HEADING.match(line)
        units.extend(sentences(heading.group(2) if heading else line))
    return tuple(units)


@lru_cache(maxsize=65536)
def _keyed_values(unit: str) -> tuple[tuple[str, str], ...]:
    return tuple((m.group(1).lower(), m.group(2).lower()) for m in KEYED_VALUE.finditer(unit)
                 if m.group(1).lower() not in STOPWORDS)


def _superseded(units: list[str], said: set[int]) -> set[int]:
    """Units whose keyed value (e.g. 'port 8080') is restated with another value later on."""
    latest: dict[str, tuple[int, str]] = {}
    stale: set[int] = set()
    for position in sorted(said):
        for key, value in _keyed_values(units[position]):
            earlier = latest.get(key)
            if earlier is not None and earlier[0] < position and earlier[1] != value:
                stale.add(earlier[0])
            latest[key] = (position, value)
    return stale
