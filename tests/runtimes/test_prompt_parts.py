"""The part-wise prompt-cache simulation reads exactly what the emulator's token-wise simulator reads, on
request sequences shaped like a drive's (a growing history, a compaction call under its own system prompt, a
branch after it, retries), and costs the encoding of each part once."""

from __future__ import annotations

import random

import pytest

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.cache import OpenAIPrefixCache
from harness.runtimes.prompt_parts import Parts, PrefixCache

TOOLS = ({"name": "bash", "description": "run a command", "parameters": {"type": "object"}},)


def _message(rng: random.Random, n: int) -> ChatMessage:
    kind = rng.choice(["user", "assistant", "tool", "big"])
    if kind == "assistant":
        return ChatMessage("assistant", f"step {n}", (ToolCallSpec(f"c{n}", "bash", {"command": f"cat f{n}"}),))
    if kind == "tool":
        return ChatMessage("tool", f"line {n}\n" * rng.randint(1, 400), tool_call_id=f"c{n}")
    if kind == "big":
        return ChatMessage("user", " ".join(f"word{n}x{k}" for k in range(rng.randint(100, 900))))
    return ChatMessage("user", f"prompt {n} " * rng.randint(1, 30))


def _drive(seed: int) -> list[ModelRequest]:
    rng = random.Random(seed)
    history: list[ChatMessage] = []
    requests = []
    for n in range(rng.randint(5, 40)):
        roll = rng.random()
        if roll < 0.1 and history:  # a compaction call: its own system prompt, the history in one message
            requests.append(ModelRequest("m", "summarize", (ChatMessage("user", " ".join(m.content for m in history)),), 100))
            history = [ChatMessage("user", "summary " * rng.randint(1, 200))] + history[-rng.randint(0, 3):]
        elif roll < 0.15 and requests:
            requests.append(requests[-1])  # a retry
            continue
        elif roll < 0.2 and history:  # the last message cut short (a part that shares only its start)
            last = history[-1]
            history[-1] = ChatMessage(last.role, last.content[: len(last.content) // 2], last.tool_calls, last.tool_call_id)
        history.append(_message(rng, n))
        requests.append(ModelRequest("m", "you are an agent", tuple(history), 100, tools=TOOLS))
    return requests


@pytest.mark.parametrize("seed", range(40))
def test_the_part_wise_cache_reads_what_the_token_wise_simulator_reads(seed):
    parts = Parts()
    mine, reference = PrefixCache(parts), OpenAIPrefixCache(clock=lambda: 0.0)
    got, expected = [], []
    for request in _drive(seed):
        split = parts.split(request)
        got.append(mine.lookup_and_store(split))
        expected.append(reference.lookup_and_store("runtime", parts.encode(split)))
    assert got == expected
    assert any(expected)  # the sequence does hit the cache


def test_each_part_is_encoded_once_across_the_requests_that_resend_it(monkeypatch):
    from harness.runtimes import prompt_parts

    encoded = []
    real = prompt_parts._tokens.encode
    monkeypatch.setattr(prompt_parts._tokens, "encode", lambda text: encoded.append(text) or real(text))
    parts = Parts()
    history = [ChatMessage("user", "one " * 300)]
    for n in range(5):
        history.append(ChatMessage("assistant", f"reply {n}"))
        parts.count(parts.split(ModelRequest("m", "sys", tuple(history), 100, tools=TOOLS)))
    assert len(encoded) == len(set(encoded)) == 1 + 1 + 1 + 5  # the tool, the system, the prompt, five replies
