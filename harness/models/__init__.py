"""The model layer: one provider-neutral client interface over OpenAI, Anthropic and the builtin model,
with record/replay (cassette), a wire-format emulator with prompt-cache simulation, and prices.

The rest of the harness imports from here: the types (base) and opening a client (registry)."""

from harness.models.base import (
    ChatMessage,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ModelSpec,
    ToolCallSpec,
    Usage,
)
from harness.models.registry import cassette_path, check_spec, open_client, require_key

__all__ = ["ChatMessage", "ModelClient", "ModelRequest", "ModelResponse", "ModelSpec", "ToolCallSpec", "Usage",
           "cassette_path", "check_spec", "open_client", "require_key"]
