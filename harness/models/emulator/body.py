"""A request body parsed from where it stopped being the previous one. A runtime re-sends its whole history with
every request, and the runtimes put it first (after the model): a body that begins as the route's previous one
did has that history's items, byte for byte, at the same places, so they are the objects already parsed and
only what follows is parsed. The result is what `parse_body` gives (json.loads, strict); anything this reader
does not expect (a body that is no object, bad JSON, a value JSON refuses) is left to `parse_body`, which
parses it whole or says what is wrong."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from harness.models.emulator.request_schema import HISTORY, no_constant, parse_body

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's
_SCAN = json.JSONDecoder(parse_constant=no_constant).scan_once


@dataclass(frozen=True)
class _Parsed:
    text: str
    items: list[Any]  # the history's items
    spans: list[tuple[int, int]]  # where each item stood in `text`


class Bodies:
    """The last body parsed per route."""

    def __init__(self) -> None:
        self._last: dict[str, _Parsed] = {}

    def parse(self, route: str, body: bytes) -> Any:
        try:
            text = body.decode("utf-8")
            payload, parsed = _parse(text, HISTORY[route], self._last.get(route))
        except (ValueError, StopIteration, IndexError, RecursionError, _Unexpected):
            return parse_body(body)
        if parsed is not None:
            self._last[route] = parsed
        return payload


class _Unexpected(Exception):
    pass


def _parse(text: str, field: str, last: _Parsed | None) -> tuple[dict[str, Any], _Parsed | None]:
    """The body as an object, its `field` array read item by item (those `last` had at the same place, byte for
    byte, are `last`'s objects); and what to remember of it."""
    at = _skip(text, 0)
    if text[at] != "{":
        raise _Unexpected
    payload: dict[str, Any] = {}
    parsed = None
    at = _skip(text, at + 1)
    if text[at] == "}":
        return payload, None
    while True:
        if text[at] != '"':
            raise _Unexpected
        key, at = scanstring(text, at + 1, True)
        at = _skip(text, at)
        if text[at] != ":":
            raise _Unexpected
        at = _skip(text, at + 1)
        if key == field and text[at] == "[":
            items, spans, at = _items(text, at, last)
            payload[key] = items
            parsed = _Parsed(text, items, spans)
        else:
            payload[key], at = _SCAN(text, at)
        at = _skip(text, at)
        if text[at] == "}":
            break
        if text[at] != ",":
            raise _Unexpected
        at = _skip(text, at + 1)
    if _skip(text, at + 1) != len(text):  # json.loads refuses anything after the object
        raise _Unexpected
    return payload, parsed


def _items(text: str, at: int, last: _Parsed | None) -> tuple[list[Any], list[tuple[int, int]], int]:
    """The array at `at` item by item: (items, their spans, the index past its `]`)."""
    at = _skip(text, at + 1)
    if text[at] == "]":
        return [], [], at + 1
    k = _same_items(text, at, last)
    items, spans = (last.items[:k], last.spans[:k]) if last is not None and k else ([], [])
    if k:
        at = _skip(text, spans[-1][1])
        if text[at] == "]":
            return items, spans, at + 1
        if text[at] != ",":
            raise _Unexpected
        at = _skip(text, at + 1)
    while True:
        item, end = _SCAN(text, at)
        items.append(item)
        spans.append((at, end))
        at = _skip(text, end)
        if text[at] == "]":
            return items, spans, at + 1
        if text[at] != ",":
            raise _Unexpected
        at = _skip(text, at + 1)


def _same_items(text: str, at: int, last: _Parsed | None) -> int:
    """How many of `last`'s leading items `text` holds byte for byte at the same places, its array's first item
    at `at`: the longest run whose whole stretch of text is the same (one comparison for a history that only
    grew, a binary search otherwise)."""
    if last is None or not last.spans or last.spans[0][0] != at:
        return 0

    def same(k: int) -> bool:
        return text.startswith(last.text[at:last.spans[k - 1][1]], at)

    if same(len(last.spans)):
        return len(last.spans)
    low, high = 0, len(last.spans) - 1  # same(low) holds, same(high + 1) does not
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if same(middle) else (low, middle - 1)
    return low


def _skip(text: str, at: int) -> int:
    return _WHITESPACE.match(text, at).end()  # type: ignore[union-attr]
