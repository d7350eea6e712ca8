"""Compactions made without a model call: Inspect's CompactionEdit (old tool results cleared) and CompactionTrim
(a share of the messages kept) change the context the runtime sends and ask no model anything. The request log
still shows them: an agent re-sends its history on every turn, each request carrying the one before it on (its
messages first, unchanged, then the reply and the new tool results or prompt). A turn request that does not is
the first one after such a compaction. Only adapters that declare `[compaction] edits_context = true` are read
this way: other runtimes' own output pruning (opencode's) is not a compaction of theirs."""

from __future__ import annotations

from harness.models.base import ChatMessage, ModelRequest
from harness.runtimes.observe import Observed


def _key(message: ChatMessage) -> tuple[str, str, str | None]:
    return message.role, message.content, message.tool_call_id


def carries_on(earlier: ModelRequest, later: ModelRequest) -> bool:
    """`later` holds `earlier`'s system prompt and messages unchanged, at its start."""
    if earlier.system != later.system or len(later.messages) < len(earlier.messages):
        return False
    return all(_key(a) == _key(b) for a, b in zip(earlier.messages, later.messages))


def edited(seen: list[Observed], after_calls: set[int]) -> list[Observed]:
    """The answered turn requests that do not carry the previous answered turn request on, except those that
    follow a summarization call (`after_calls`, by seq: that compaction is captured with its call)."""
    found: list[Observed] = []
    previous: Observed | None = None
    for item in seen:
        if item.kind != "turn" or item.reply is None:
            continue
        if previous is not None and item.seq not in after_calls and not carries_on(previous.request, item.request):
            found.append(item)
        previous = item
    return found
