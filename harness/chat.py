"""The one bridge from session messages to the provider-neutral chat messages a model request carries.

`models` never imports `session` (DESIGN.md), so the conversion lives here, above both."""

from __future__ import annotations

from harness.models.base import ChatMessage, ToolCallSpec
from harness.session import Message


def chat_message(message: Message) -> ChatMessage:
    """A session message in the provider-neutral request shape."""
    calls = tuple(ToolCallSpec(c.id, c.name, c.arguments) for c in message.tool_calls)
    return ChatMessage(message.role, message.content, calls, message.tool_call_id, message.is_error)
