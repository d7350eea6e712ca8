"""Names a later step refers to (issue 31): a function, a type, a config key, a constant that the agent or the
user mentions again after an item of the summary stated it. Such an item says what the later work builds on;
a file entry says only where something is. When the summary is over its budget, the file entries go before
the items that name what a later step refers to (rule `names-over-files`).

A name has the shape of code (camelCase, PascalCase with a second capital, snake_case, or anything in backticks)
and is not part of a path or a file name; a plain word is no name."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from harness.models.base import ChatMessage
from harness.models.builtin.files import FileEntry
from harness.models.builtin.items import Item
from harness.models.builtin.rules import enabled

_NAME = re.compile(
    r"(?<![\w/.-])(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)"
    r"(?![\w/-]|\.\w)|`([A-Za-z_][\w.:-]{2,})(?:\(\))?`")
MIN_NAME = 4


@lru_cache(maxsize=65536)
def names_in(text: str) -> frozenset[str]:
    """The code names a text mentions."""
    found = (match.group(1) or match.group(0) for match in _NAME.finditer(text))
    return frozenset(name for name in found if len(name) >= MIN_NAME)


class Mentions:
    """Where each name was last mentioned, in the builder's order of items: a message read when the builder's
    last item had order n is at n + 0.5 (after the items before it, before its own)."""

    def __init__(self) -> None:
        self.last: dict[str, float] = {}

    def read_message(self, message: ChatMessage, order: int) -> None:
        """A user's or the agent's message (its words and its calls' arguments); a tool's output is no step."""
        if message.role == "tool":
            return
        texts = [message.content, *(t for call in message.tool_calls for t in call_texts(call.arguments))]
        for text in texts:
            for name in names_in(text):
                self.last[name] = order + 0.5

    def referred_later(self, entry: Item | FileEntry) -> bool:
        """An item that names something a later message mentions again (a file entry never is)."""
        return isinstance(entry, Item) and any(self.last.get(name, 0) > entry.order for name in names_in(entry.text))


def call_texts(arguments: dict[str, Any]) -> list[str]:
    """The strings a tool call's arguments hold (its command, its edit's text): where a step refers to names."""
    return [value for value in arguments.values() if isinstance(value, str)]


def drop_order(entries: list[Item | FileEntry], mentions: Mentions) -> list[Item | FileEntry]:
    """The oldest-first drop order, with every item a later message refers to moved after the last file entry
    (files go first; among themselves the moved items keep their age order)."""
    if not enabled("names-over-files"):
        return entries
    last_file = max((i for i, entry in enumerate(entries) if isinstance(entry, FileEntry)), default=-1)
    older = entries[:last_file + 1]
    referred = [entry for entry in older if mentions.referred_later(entry)]
    if not referred:
        return entries
    kept = {id(entry) for entry in referred}
    return [entry for entry in older if id(entry) not in kept] + referred + entries[last_file + 1:]
