"""What a runtime re-sends. An agent sends its whole history with every request, a few items longer each time, so
per-request work over the history (checking its shape, its nesting) need only look at the items no recent
request carried at the same place: the rest were looked at when they first came.

"The same" is exact JSON equality. Python's `==` compares parsed JSON in C, but it also calls `true` equal to
`1`; so an earlier item that holds a boolean or a number is compared again type by type (`_same`), and one that
holds neither (most chat items: strings, lists and objects) cannot hide such a difference."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Looked:
    items: list[Any]
    plain: list[bool]  # per item: it holds no boolean and no number, so `==` on it is exact


class Resent:
    """Per route, the last `keep` histories looked at (newest last) and the other fields of the last request.
    What a request re-sends exactly is replaced by the object first looked at, so that work done once per
    object (`Made`) finds it again."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._recent: dict[str, deque[Looked]] = {}
        self._fields: dict[str, dict[str, tuple[Any, bool]]] = {}

    def reuse(self, route: str, items: list[Any]) -> list[bool]:
        """The longest run of leading items of `items` a recent history carried at the same places, each put
        back as that history's own object; returns their `plain` flags (so its length is how many need no
        second look)."""
        best, found = 0, None
        for looked in tuple(self._recent.get(route, ())):
            n = _prefix(looked, items)
            if n > best:
                best, found = n, looked
        if found is None:
            return []
        items[:best] = found.items[:best]
        return found.plain[:best]

    def reuse_fields(self, route: str, payload: dict[str, Any], skip: str | None) -> dict[str, bool]:
        """The payload's fields (but `skip`) the last request carried exactly, each put back as its own object:
        their `plain` flags by name (what is not named needs a look)."""
        last = self._fields.get(route, {})
        reused: dict[str, bool] = {}
        for key, value in payload.items():
            before = last.get(key)
            if key != skip and before is not None and _equal(before[0], value, before[1]):
                payload[key] = before[0]
                reused[key] = before[1]
        return reused

    def remember(self, route: str, items: list[Any], plain: list[bool], payload: dict[str, Any],
                 field_plain: dict[str, bool], skip: str | None) -> None:
        """A request was looked at: its history `items` (`plain[i]`: item i holds no boolean and no number) and
        its other fields (`field_plain[name]`, the same for each)."""
        if items:
            self._recent.setdefault(route, deque(maxlen=self.keep)).append(Looked(items, plain))
        self._fields[route] = {key: (value, field_plain[key]) for key, value in payload.items() if key != skip}


class Made:
    """A value of some kind made once from a group of objects and found again by the objects themselves (no
    hashing of their content): an item a runtime re-sends is the same object once `Resent.reuse` has run, and so
    is what is made from it here (a message read from it, that message's prompt text)."""

    def __init__(self) -> None:
        self._made: dict[tuple[Any, ...], tuple[Any, Any]] = {}

    def get(self, kind: str, source: Any, make: Callable[[], Any]) -> Any:
        """What `make` makes of `source`, made once."""
        found = self._made.get((kind, id(source)))
        if found is None or found[0] is not source:
            found = self._made[(kind, id(source))] = (source, make())  # the source is kept: its id stays its own
        return found[1]

    def get_group(self, kind: str, sources: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """What `make` makes of `sources` together, made once."""
        key = (kind, *map(id, sources))
        found = self._made.get(key)
        if found is None or any(a is not b for a, b in zip(found[0], sources)):
            found = self._made[key] = (sources, make())
        return found[1]


def _equal(before: Any, now: Any, plain: bool) -> bool:
    return before is now or (before == now and (plain or _same(before, now)))


def _prefix(looked: Looked, items: list[Any]) -> int:
    n = 0
    for before, now, plain in zip(looked.items, items, looked.plain):
        if not _equal(before, now, plain):
            break
        n += 1
    return n


def _same(a: Any, b: Any) -> bool:
    """Equality as JSON text: `true` is not `1`, `1` is not `1.0`."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return repr(a) == repr(b) if isinstance(a, float) else a == b  # -0.0 is written apart from 0.0


def depth_and_plain(value: Any, limit: int) -> tuple[bool, bool]:
    """(whether `value` nests deeper than `limit` levels, whether it holds no boolean and no number), level by
    level (no recursion, whatever the depth). A container is a level: `[]` is 1, `[[1]]` is 2."""
    plain = value.__class__ not in _NUMBERS
    containers = [value] if value.__class__ in _NESTED else []
    depth = 0
    while containers:
        depth += 1
        if depth > limit:
            return True, plain
        below: list[Any] = []
        for node in containers:
            below.extend(node.values() if node.__class__ is dict else node)
        plain = plain and not any(n.__class__ in _NUMBERS for n in below)
        containers = [n for n in below if n.__class__ in _NESTED]
    return False, plain


_NESTED = frozenset((dict, list))
_NUMBERS = frozenset((bool, int, float))
