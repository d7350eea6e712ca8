"""A provider's compaction item as it stands in the harness's context: the item itself, kept byte for byte,
and the one line of text that stands for it wherever the harness handles a summary as a string.

The rest of the harness keeps a summary as text (snapshots, records, token counts). A provider compaction
(OpenAI's `compaction` item, Anthropic's `compaction` block) is not text the harness may edit: it is sent
back to the same provider as it came. So the text in the context is a marker line naming the item and its
provider+model, then what the item lets anyone read (Anthropic's `content`) or a note that it is opaque
(OpenAI's `encrypted_content`). The client that produced the item keeps it in an `ItemStore` and puts the
item back in place of the marker when it sends a request; any other model sees only the marker.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError

OPAQUE_NOTE = "(opaque: only {spec} can read this compaction item)"
_MARKER = re.compile(r"^\[provider compaction (?P<handle>[A-Za-z0-9_.:-]+) by (?P<spec>\S+)\]$", re.M)


class NoCompactionReturned(HarnessError):
    """The provider answered a compaction request without a usable item (a proxy dropped the field, or
    Anthropic's `content: null`): not compacted, never a success."""


@dataclass(frozen=True)
class CompactionItem:
    spec: str  # the provider+model that wrote it: the only one that can read it
    provider: str  # openai | anthropic
    item: dict[str, Any]  # the item or block exactly as the provider returned it
    readable: str | None  # Anthropic's content; None where the content is opaque (OpenAI)
    kept_user: tuple[str, ...] = ()  # OpenAI: the user messages the compacted output keeps ahead of the item

    @property
    def handle(self) -> str:
        """A short name for the item: OpenAI's id, else a digest of the block as returned."""
        given = self.item.get("id")
        if isinstance(given, str) and re.fullmatch(r"[A-Za-z0-9_.:-]+", given):
            return given
        return "cmp_" + hashlib.sha256(json.dumps(self.item, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def opaque(self) -> bool:
        return self.readable is None

    def text(self) -> str:
        """The text that stands for the item in the harness's context."""
        body = self.readable if self.readable is not None else OPAQUE_NOTE.format(spec=self.spec)
        return f"[provider compaction {self.handle} by {self.spec}]\n{body}"


@dataclass(frozen=True)
class ItemReference:
    """What a summary string says about a provider item, without the item itself."""

    handle: str
    spec: str
    readable: str | None  # None: opaque


def item_reference(summary: str | None) -> ItemReference | None:
    """The provider item a summary stands for, or None for an ordinary summary."""
    if not summary:
        return None
    found = _MARKER.search(summary)
    if found is None:
        return None
    body = summary[found.end():].lstrip("\n")
    opaque = body.strip() == OPAQUE_NOTE.format(spec=found["spec"])
    return ItemReference(found["handle"], found["spec"], None if opaque else body)


class ItemStore:
    """The items one client produced, by handle, so it can send each back in place of its marker."""

    def __init__(self) -> None:
        self._items: dict[str, CompactionItem] = {}
        self._lock = threading.Lock()

    def add(self, item: CompactionItem) -> None:
        with self._lock:
            self._items[item.handle] = item

    def find(self, text: str) -> CompactionItem | None:
        reference = item_reference(text)
        if reference is None:
            return None
        with self._lock:
            item = self._items.get(reference.handle)
        if item is None:
            raise HarnessError(f"{reference.spec}: compaction item {reference.handle} was written by another "
                               "client; only the client that compacted can send it back")
        return item
