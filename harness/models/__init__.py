"""The model layer: one provider-neutral client interface over OpenAI, Anthropic and the builtin model,
with record/replay (cassette), a wire-format emulator with prompt-cache simulation, and prices."""

from harness.models.base import (
    ChatMessage,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ModelSpec,
    ToolCallSpec,
    Usage,
    check_spec,
    open_client,
)

__all__ = ["ChatMessage", "ModelClient", "ModelRequest", "ModelResponse", "ModelSpec", "ToolCallSpec", "Usage",
           "check_spec", "open_client"]
