"""Provider compaction in the emulator: Anthropic's explicit compaction request and the rules for the signed
block later requests send back (the documented typed errors), and the prompt the builtin model is given
when it writes either provider's compaction."""

from __future__ import annotations

from typing import Any

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator.cache import AnthropicCacheResult
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.sealing import check_signature, seal, sign

# The provider's own prompt when the request gives none (the builtin reads the sections from it).
DEFAULT_PROMPT = """\
Summarize the conversation so far for your own continuation. Keep exact paths, commands, errors and values.
## Goal
## Constraints
## Progress
## Decisions
## Files
## Errors
## Next steps"""
DEFAULT_BUDGET = 4096


def _invalid(code: str, message: str) -> EmulatorError:
    return EmulatorError(400, "invalid_request_error", message, code=code)


def unfold_blocks(payload: dict[str, Any]) -> dict[str, Any]:
    """Check the compaction blocks of a Messages request and return it with each one as the text it
    carries: at most one block with content, first in `messages`, signature and content as returned.
    Blocks with `content: null` are failed compactions the server treats as no-ops: dropped."""
    found = [(i, j, block) for i, message in enumerate(payload.get("messages") or [])
             for j, block in enumerate(_blocks(message)) if block.get("type") == "compaction"]
    live = [(i, j, block) for i, j, block in found if block.get("content") is not None]
    if len(live) > 1:
        raise _invalid("compaction_block_ambiguous", f"{len(live)} compaction blocks with content; send one")
    if live and live[0][:2] != (0, 0):
        raise _invalid("compaction_block_misplaced", "the compaction block must be the first block of messages[0]")
    for _, _, block in live:
        check_signature(block)
    if not found:
        return payload
    messages = []
    for message in payload["messages"]:
        content = [_as_text(b) for b in _blocks(message)
                   if not (b.get("type") == "compaction" and b.get("content") is None)]
        if live and not messages and len(content) > 1:  # the summary as a turn of its own, as the model reads it
            messages.append({**message, "content": content[:1]})
            content = content[1:]
        if content:
            messages.append({**message, "content": content})
    return {**payload, "messages": messages}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _as_text(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") != "compaction":
        return block
    text = {"type": "text", "text": block["content"]}
    return {**text, "cache_control": block["cache_control"]} if block.get("cache_control") else text


def check_compaction_request(payload: dict[str, Any]) -> None:
    """The explicit request's own rules: not with context_management, something to summarize, whole turns."""
    if payload.get("context_management"):
        raise EmulatorError(400, "invalid_request_error", "compaction cannot be combined with context_management")
    messages = payload.get("messages") or []
    summarizable = [b for m in messages for b in _blocks(m) if b.get("type") != "compaction"]
    if not summarizable:
        raise _invalid("compaction_nothing_to_summarize", "there is nothing after the last compaction to summarize")
    last = messages[-1]
    if last.get("role") == "assistant" and any(b.get("type") == "tool_use" for b in _blocks(last)):
        raise _invalid("compaction_incomplete_turn", "the last turn ends with a tool_use that has no tool_result")


def summary_request(request: ModelRequest, instructions: str | None, budget: int = DEFAULT_BUDGET) -> ModelRequest:
    """What the builtin is asked when it writes a compaction: the history, then the prompt."""
    prompt = instructions.strip() if instructions and instructions.strip() else DEFAULT_PROMPT
    return ModelRequest(request.model, request.system, (*request.messages, ChatMessage("user", prompt)), budget)


def compaction_message(serial: int, model: str, text: str, cache: AnthropicCacheResult, drop: bool) -> dict:
    """The reply to an explicit compaction request: the block alone, `stop_reason: "compaction"`, and its
    tokens in a `compaction` iteration, not in the top-level usage. `drop` is a proxy that loses the block."""
    tool_changes: list[Any] = []  # the emulated sessions change no tools inside a compacted range
    encrypted = seal(f"emulator compaction {serial} for {model}")
    block = {"type": "compaction", "content": text, "encrypted_content": encrypted,
             "signature": sign(text, encrypted, tool_changes), "tool_changes": tool_changes}
    uncached = cache.total_tokens - cache.read_tokens - cache.write_tokens
    iteration = {"type": "compaction", "input_tokens": uncached, "output_tokens": _tokens.count(text),
                 "cache_creation_input_tokens": cache.write_tokens, "cache_read_input_tokens": cache.read_tokens}
    return {"id": f"msg_emu_{serial}", "type": "message", "role": "assistant", "model": model,
            "content": [] if drop else [block], "stop_reason": "compaction", "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "iterations": [iteration]}}
