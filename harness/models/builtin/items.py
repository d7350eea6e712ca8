"""A summary's items (one statement under one section) and the store that keeps them in the order stated.

A later statement supersedes the earliest one with the same key or the same words in its section; the store
finds that one through indexes, not a scan, since a long session states tens of thousands of them."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from harness.models.builtin.text import clip

MAX_ERROR_WITH_FIX = 420  # an error line and the agent's reading of it


class Item(NamedTuple):
    """One statement (immutable: changed by `_replace`). A tuple, as a long session makes tens of thousands and
    a frozen dataclass takes three times as long to make."""

    category: str
    text: str
    order: int
    key: str | None = None
    protected: bool = False
    rank: int = 1  # for facts: who stated it (user 2, agent 1, tool 0); the lower goes first when trimming
    fix: str = ""  # for errors: what the agent said of it next; dropped before the error itself
    history: str = ""  # stated as history ("Superseded later: "): a later sentence refuted it (later.py)

    @property
    def line(self) -> str:
        text = self.history + self.text
        return clip(f"{text} → {self.fix}", MAX_ERROR_WITH_FIX) if self.fix else text


class Items:
    """The items, oldest first. Orders only grow, so each index (a dict of orders, used as an ordered set)
    holds its items oldest first too; a replaced item keeps its order and its place."""

    def __init__(self) -> None:
        self._by_order: dict[int, Item] = {}
        self._indexes: defaultdict[tuple[str, str, str | None], dict[int, None]] = defaultdict(dict)
        self._keys: dict[int, tuple[tuple[str, str, str | None], ...]] = {}  # each item's, taken once

    def __iter__(self):
        return iter(self._by_order.values())

    def __getitem__(self, order: int) -> Item:
        return self._by_order[order]

    def get(self, order: int) -> Item | None:
        return self._by_order.get(order)

    def in_category(self, category: str) -> list[Item]:
        return [self._by_order[order] for order in self._indexes.get(("category", category, None), ())]

    def has(self, category: str) -> bool:
        return bool(self._indexes.get(("category", category, None)))

    def superseded(self, category: str, key: str | None, text: str, *, lower: str | None = None) -> Item | None:
        """The earliest item in `category` with this key or these words (case aside; `lower` if the caller has
        lower-cased them), if any."""
        by_key = self._indexes.get(("key", category, key))
        by_words = self._indexes.get(("words", category, text.lower() if lower is None else lower))
        first = next(iter(by_key)) if by_key else None
        if by_words and (first is None or next(iter(by_words)) < first):
            first = next(iter(by_words))
        return None if first is None else self._by_order[first]

    def append(self, item: Item, *, lower: str | None = None) -> None:
        self._by_order[item.order] = item
        keys = self._keys[item.order] = self._index_keys(item, item.text.lower() if lower is None else lower)
        for index in keys:
            self._indexes[index][item.order] = None

    def remove(self, item: Item) -> None:
        del self._by_order[item.order]
        for index in self._keys.pop(item.order):
            del self._indexes[index][item.order]

    def replace(self, item: Item) -> None:
        """The item of the same order, changed in what the indexes do not hold (its fix, its history)."""
        self._by_order[item.order] = item

    @staticmethod
    def _index_keys(item: Item, lower: str) -> tuple[tuple[str, str, str | None], ...]:
        return (("category", item.category, None), ("key", item.category, item.key), ("words", item.category, lower))
