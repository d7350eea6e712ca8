"""Codex's remote compaction on the normal /responses stream, through the real openai SDK over the in-process
transport: a `{"type": "compaction_trigger"}` input item is answered with exactly one `compaction` output item
whose `encrypted_content` is sealed (the summary never leaves readable), streamed or not; sent back in a later
request it is unsealed server-side into the summary the model reads."""

from __future__ import annotations

import httpx2
import openai

from harness.models.base import ModelRequest
from harness.models.emulator import Emulator, EmulatorTransport
from harness.models.emulator.compaction import DEFAULT_PROMPT
from harness.models.emulator.reply import Reply

HISTORY = [{"role": "user", "content": "Add per-route timeouts; the global default is 2500 ms."},
           {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd": "cat a.txt"}'},
           {"type": "function_call_output", "call_id": "c1", "output": "timeout_ms: 2500"}]
SUMMARY = "## Goal\nPer-route timeouts; global default 2500 ms."


class Summarizer:
    """Answers every request with SUMMARY, keeping what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ModelRequest] = []

    def __call__(self, request: ModelRequest, exchange) -> Reply:
        self.asked.append(request)
        return Reply(SUMMARY)


def _client(responder: Summarizer) -> openai.OpenAI:
    http = httpx2.Client(transport=EmulatorTransport(Emulator(responder=responder)))
    return openai.OpenAI(api_key="k", base_url="http://e.invalid/v1", http_client=http, max_retries=0)


def test_a_streamed_trigger_is_answered_with_one_sealed_compaction_item():
    responder = Summarizer()
    client = _client(responder)
    events = list(client.responses.create(model="gpt-5", input=[*HISTORY, {"type": "compaction_trigger"}],
                                          stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert kinds.count("response.output_item.done") == 1 and "response.output_text.delta" not in kinds
    output = events[-1].response.output
    assert len(output) == 1 and output[0].type == "compaction"
    sealed = output[0].encrypted_content
    assert sealed and "2500" not in sealed and "Goal" not in sealed  # opaque to the client
    asked = responder.asked[-1]
    assert asked.messages[-1].content == DEFAULT_PROMPT  # the provider's own prompt where the trigger stood
    assert [m.role for m in asked.messages] == ["user", "assistant", "tool", "user"]


def test_the_item_sent_back_is_read_as_the_summary_ahead_of_what_follows():
    responder = Summarizer()
    client = _client(responder)
    item = client.responses.create(model="gpt-5", input=[*HISTORY, {"type": "compaction_trigger"}]).output[0]
    assert item.type == "compaction"
    client.responses.create(model="gpt-5", input=[HISTORY[0], item.model_dump(exclude_none=True),
                                                  {"role": "user", "content": "Go on."}])
    later = responder.asked[-1]
    assert [m.content for m in later.messages] == [HISTORY[0]["content"], SUMMARY, "Go on."]
