"""Which entries of a Claude Code session were the live conversation (FORMATS.md, issue 21).

The `parentUuid` links form a tree. One walk back from the last leaf gives the live branch, but it misses part of
what the model saw: each `tool_use` of one response is its own entry sharing `message.id`, and each result hangs
off its own call, so the tree forks at every parallel call. The live conversation is therefore:

- every entry on the walk back from the last leaf (through a `compact_boundary`'s `logicalParentUuid`; when a
  parent is not in the file, the walk continues from the entry just before in file order, and says so);
- every other assistant entry that shares a `message.id` with the walk, except a call with no result anywhere
  and no child entry: that is an abandoned leaf (the session resumed from an earlier entry), skipped and counted;
- every user entry holding a result of a live call, wherever its fork is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.errors import InputError

Entry = tuple[int, dict[str, Any]]
MESSAGE_TYPES = ("user", "assistant", "system", "attachment")


@dataclass
class LiveSet:
    """The outcome of the rebuild: line numbers by fate, plus what the walk had to repair."""

    kept: set[int] = field(default_factory=set)  # live entries of a message type
    abandoned: set[int] = field(default_factory=set)  # calls on an abandoned leaf
    off_branch: set[int] = field(default_factory=set)  # message-type entries not in the live conversation
    orphan_boundaries: set[int] = field(default_factory=set)  # boundaries whose logical parent is not in the file
    notes: list[str] = field(default_factory=list)


def blocks_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def message_id(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None


def live_entries(entries: list[Entry], path: str) -> LiveSet:
    tree = [(n, e) for n, e in entries if isinstance(e.get("uuid"), str)]
    live = LiveSet()
    chain = _walk(tree, path, live)
    live_ids = {message_id(e) for _, e in chain if e.get("type") == "assistant"} - {None}
    on_chain = {n for n, _ in chain}
    parents = {e.get("parentUuid") for _, e in tree}
    answered = {b.get("tool_use_id") for _, e in tree if e.get("type") == "user" for b in blocks_of(e)
                if b.get("type") == "tool_result"}
    live_calls = {b.get("id") for _, e in tree if e.get("type") == "assistant" and message_id(e) in live_ids
                  for b in blocks_of(e) if b.get("type") == "tool_use"}
    for number, entry in tree:
        if entry.get("type") not in MESSAGE_TYPES:
            continue
        if number in on_chain:
            live.kept.add(number)
        elif entry.get("isSidechain"):
            live.off_branch.add(number)
        elif entry.get("type") == "assistant" and message_id(entry) in live_ids:
            calls = [b.get("id") for b in blocks_of(entry) if b.get("type") == "tool_use"]
            if calls and entry["uuid"] not in parents and not any(c in answered for c in calls):
                live.abandoned.add(number)
            else:
                live.kept.add(number)
        elif entry.get("type") == "user" and any(b.get("type") == "tool_result" and b.get("tool_use_id") in live_calls
                                                 for b in blocks_of(entry)):
            live.kept.add(number)
        else:
            live.off_branch.add(number)
    return live


def _leaf(tree: list[Entry], path: str) -> int:
    for position in range(len(tree) - 1, -1, -1):
        entry = tree[position][1]
        if entry.get("type") in ("user", "assistant", "system") and not entry.get("isSidechain"):
            return position
    raise InputError(path, None, None, "no user or assistant entry found; expected a Claude Code session line "
                                       "{type, uuid, parentUuid, message, ...}")


def _walk(tree: list[Entry], path: str, live: LiveSet) -> list[Entry]:
    """The entries from the last leaf back to the root, following parents (see the module docstring)."""
    position_of = {e["uuid"]: p for p, (_, e) in enumerate(tree)}
    chain: list[Entry] = []
    seen: set[int] = set()
    position: int | None = _leaf(tree, path)
    while position is not None:
        number, entry = tree[position]
        if position in seen:
            raise InputError(path, number, "parentUuid", "the parent chain loops back on itself")
        seen.add(position)
        chain.append((number, entry))
        position = _parent(tree, position, position_of, live)
    return chain


def _parent(tree: list[Entry], position: int, position_of: dict[str, int], live: LiveSet) -> int | None:
    number, entry = tree[position]
    parent = entry.get("parentUuid")
    field_name = "parentUuid"
    if parent is None and entry.get("subtype") == "compact_boundary":
        parent, field_name = entry.get("logicalParentUuid"), "logicalParentUuid"
        if parent not in position_of:
            live.orphan_boundaries.add(number)
    if parent is None and field_name == "parentUuid":
        return None  # the root
    if parent in position_of:
        return position_of[parent]
    before = _previous_main(tree, position)
    where = f"line {tree[before][0]}" if before is not None else "nowhere (it is the first entry)"
    live.notes.append(f"line {number}: {field_name} {parent} is not in the file; the live branch continues from "
                      f"the entry before it in file order, {where}")
    return before


def _previous_main(tree: list[Entry], position: int) -> int | None:
    for before in range(position - 1, -1, -1):
        if not tree[before][1].get("isSidechain"):
            return before
    return None
