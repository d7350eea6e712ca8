"""Per-message digests give the same blocks and prompt tokens as the emulator's reading of the wire payload,
for requests with and without tools, system prompt, cache and a 1-hour TTL."""

import pytest

from harness.compaction.summarizer import summary_request
from harness.models.anthropic import message_params
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator import anthropic_blocks, openai_prompt_tokens
from harness.models.openai import chat_params
from harness.studies.digests import Digests

TOOLS = ({"name": "bash", "description": "Run a shell command.",
          "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
         {"name": "read", "description": "Read a file."})
MESSAGES = (ChatMessage("user", "fix the failing test"),
            ChatMessage("assistant", "", (ToolCallSpec("c1", "bash", {"cmd": "pytest -x"}),)),
            ChatMessage("tool", "1 failed: test_rounding", tool_call_id="c1"),
            ChatMessage("tool", "", tool_call_id="c2", is_error=True),
            ChatMessage("assistant", "Found it."),
            ChatMessage("user", "go on"))


def requests():
    for system in ("You are an agent.", None):
        for tools in (TOOLS, ()):
            for cache, prefix, ttl in ((True, None, None), (True, 3, "1h"), (False, None, None)):
                yield ModelRequest("m", system, MESSAGES, 100, cache=cache, cache_prefix_messages=prefix,
                                   tools=tools, cache_ttl=ttl)


@pytest.mark.parametrize("request_", list(requests()))
def test_digests_match_the_wire_payload(request_):
    digests = Digests()
    for _ in range(2):  # the second pass is served from the per-message memo
        assert digests.anthropic_blocks(request_) == anthropic_blocks(message_params(request_))
        assert digests.openai_tokens(request_) == openai_prompt_tokens(chat_params(request_))


def test_a_message_reused_in_a_longer_request_is_counted_once():
    digests = Digests()
    short = ModelRequest("m", "sys", MESSAGES[:3], 100, tools=TOOLS)
    long = ModelRequest("m", "sys", MESSAGES, 100, tools=TOOLS)
    digests.openai_tokens(short)
    cached = dict(digests._messages)
    digests.openai_tokens(long)
    assert all(digests._messages[key] is value for key, value in cached.items())
    assert digests.openai_tokens(long) == openai_prompt_tokens(chat_params(long))
