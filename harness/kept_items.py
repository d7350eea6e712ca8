"""Kept items with no message of their own: what a recorded compaction kept beside its summary that matches
no message of the session (Codex replacement history holding a truncated or rewritten copy, issue 21).

They stay in the context as messages ahead of the summary, in the kept history's order, counted in the
context's tokens and never in the summary's. Policies (`Tail.kept_text`) and the live context both use them,
so the type lives here, below both.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from harness.session import Message


class KeptText(NamedTuple):
    """One kept item: `slot` is its position among everything kept ahead of the summary (0 first)."""

    slot: int
    role: str | None  # the item's role in the transcript (user, developer, ...); None for a non-message item
    content: str


def kept_message(item: KeptText) -> Message:
    """The item as the context shows it: as the importer maps that role (developer/system become tagged user
    messages), marked `kept_text` so nobody mistakes it for a message of the session."""
    if item.role == "assistant":
        return Message("assistant", item.content, meta={"kept_text": True})
    meta: dict[str, object] = {"kept_text": True}
    if item.role not in (None, "user"):
        meta["source_role"] = item.role
    return Message("user", item.content, meta=meta)


def kept_messages(messages: Sequence[Message], kept: Sequence[int], texts: Sequence[KeptText]) -> list[Message]:
    """Everything kept ahead of the summary, in order: the kept session messages with each text at its slot."""
    shown = [messages[i] for i in kept]
    for item in sorted(texts, key=lambda t: t.slot):
        shown.insert(min(item.slot, len(shown)), kept_message(item))
    return shown
