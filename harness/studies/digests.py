"""A request's cacheable prefix from per-message digests: each message is serialised, hashed and counted once,
and every later request that carries it reuses those figures instead of re-serialising its whole prefix.

The results equal the emulator's own accounting of the wire payload (`anthropic_blocks(message_params(r))`,
`openai_prompt_tokens(chat_params(r))`); tests/test_cost_digests.py holds them to it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from harness.models import _tokens
from harness.models.anthropic import message_blocks, message_params
from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator import CacheBlock
from harness.models.emulator.chat import openai_part
from harness.models.emulator.messages import cache_block
from harness.models.openai import chat_params


class Digests:
    """Per-message Anthropic blocks and OpenAI prompt parts, keyed by the message object (kept alive here so
    its id stays unique) and, for everything else, by content."""

    def __init__(self) -> None:
        self._messages: dict[tuple[int, str], tuple[ChatMessage, Any]] = {}
        self.memo: dict[str, Any] = {}  # content hash -> token count or tokens (the emulator's memo format)

    def _cached(self, message: ChatMessage, kind: str, build) -> Any:
        key = (id(message), kind)
        hit = self._messages.get(key)
        if hit is None or hit[0] is not message:
            hit = (message, build())
            self._messages[key] = hit
        return hit[1]

    # -- Anthropic: tools -> system -> message content blocks

    def anthropic_message(self, message: ChatMessage) -> tuple[CacheBlock, ...]:
        role = "assistant" if message.role == "assistant" else "user"
        return self._cached(message, "a", lambda: tuple(
            cache_block({**block, "_role": role}, self.memo) for block in message_blocks(message)))

    def anthropic_head(self, request: ModelRequest) -> list[CacheBlock]:
        """Tools and system blocks, with their breakpoint as message_params places it."""
        params = message_params(replace(request, messages=()))
        raw = list(params.get("tools") or []) + list(params.get("system") or [])
        return [cache_block(item, self.memo) for item in raw]

    def anthropic_blocks(self, request: ModelRequest) -> list[CacheBlock]:
        """The request's blocks in prefix order, breakpoints where message_params puts them."""
        blocks = self.anthropic_head(request)
        shared = len(request.messages) if request.cache_prefix_messages is None else request.cache_prefix_messages
        shared = min(shared, len(request.messages))
        ttl = request.cache_ttl or "5m"
        for position, message in enumerate(request.messages):
            own = self.anthropic_message(message)
            if request.cache and position == shared - 1:
                own = (*own[:-1], replace(own[-1], breakpoint_ttl=ttl))
            blocks.extend(own)
        return blocks

    # -- OpenAI: tools, then each message as one part, parts after the first led by a newline

    def openai_message(self, message: ChatMessage, first: bool) -> list[int]:
        def build() -> list[int]:
            part = openai_part(chat_params(ModelRequest("", None, (message,), 1))["messages"][0])
            return self._text_tokens(part if first else "\n" + part)  # an equal message met before: no encode

        return self._cached(message, "o1" if first else "o", build)

    def openai_tokens(self, request: ModelRequest) -> list[int]:
        head = chat_params(replace(request, messages=()))
        parts = [_json_part(t) for t in head.get("tools") or []]
        parts += [openai_part(m) for m in head["messages"]]  # the system message, when there is one
        tokens: list[int] = []
        for i, part in enumerate(parts):
            tokens += self._text_tokens(part if i == 0 else "\n" + part)
        for message in request.messages:
            tokens += self.openai_message(message, first=not tokens)
        return tokens

    def _text_tokens(self, text: str) -> list[int]:
        key = "o:" + hashlib.sha256(text.encode()).hexdigest()  # the emulator's memo key for the same part
        if key not in self.memo:
            self.memo[key] = _tokens.encode(text)
        return self.memo[key]


def _json_part(tool: dict[str, Any]) -> str:
    return json.dumps(tool, sort_keys=True)
