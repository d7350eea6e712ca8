"""The responder interface (reply.py): a responder's reply reaches the SDK, it sees the raw exchange, its
errors come back in the wire's own error shape, and the output limit and truncate fault still apply."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from harness.models.base import ModelRequest
from harness.models.emulator import Emulator, EmulatorError, EmulatorTransport
from harness.models.emulator.reply import Exchange, Reply


class Recorder:
    """A responder that answers a fixed text and keeps what it was given."""

    def __init__(self, text: str = "scripted reply", error: EmulatorError | None = None):
        self.text, self.error = text, error
        self.seen: list[tuple[ModelRequest, Exchange]] = []

    def __call__(self, request: ModelRequest, exchange: Exchange) -> Reply:
        self.seen.append((request, exchange))
        if self.error is not None:
            raise self.error
        return Reply(self.text)


def sdks(emulator: Emulator) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    http = httpx2.Client(transport=EmulatorTransport(emulator))
    return (openai.OpenAI(api_key="k", base_url="http://e.invalid/v1", http_client=http, max_retries=0),
            anthropic.Anthropic(api_key="k", base_url="http://e.invalid", http_client=http, max_retries=0))


def test_the_responder_answers_and_sees_the_exchange() -> None:
    responder = Recorder()
    chat, messages = sdks(Emulator(responder=responder))
    reply = chat.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}],
                                         extra_headers={"X-Codex-Turn-Metadata": "turn"})
    assert reply.choices[0].message.content == "scripted reply"
    message = messages.messages.create(model="claude-sonnet-4-6", max_tokens=100, system="be brief",
                                       messages=[{"role": "user", "content": "hello"}])
    assert message.content[0].text == "scripted reply"
    (first, chat_seen), (second, messages_seen) = responder.seen
    assert (chat_seen.wire, chat_seen.path, chat_seen.stream) == ("openai", "/v1/chat/completions", False)
    assert chat_seen.headers["x-codex-turn-metadata"] == "turn" and chat_seen.payload["model"] == "gpt-5"
    assert first.messages[-1].content == "hi"
    assert (messages_seen.wire, messages_seen.path) == ("anthropic", "/v1/messages")
    assert second.system == "be brief" and second.max_output_tokens == 100


def test_a_responder_error_is_the_wire_error() -> None:
    responder = Recorder(error=EmulatorError(409, "invalid_request_error", "drift at step 3: expected a, got b"))
    chat, messages = sdks(Emulator(responder=responder))
    with pytest.raises(openai.ConflictError, match="drift at step 3"):
        chat.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(anthropic.ConflictError, match="drift at step 3") as caught:
        messages.messages.create(model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert caught.value.body["type"] == "error"


def test_output_limit_and_truncate_fault_apply_to_a_responder() -> None:
    emulator = Emulator(responder=Recorder("one two three four five six seven eight nine ten"))
    chat, _ = sdks(emulator)
    cut = chat.chat.completions.create(model="gpt-5", max_completion_tokens=3,
                                       messages=[{"role": "user", "content": "count"}])
    assert cut.choices[0].finish_reason == "length" and cut.choices[0].message.content == "one two three"
    emulator.inject("truncate")
    half = chat.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "count"}])
    assert half.choices[0].finish_reason == "length" and half.choices[0].message.content == "one two three four five"


def test_reply_rejects_an_unknown_finish() -> None:
    with pytest.raises(ValueError, match="end_turn"):
        Reply("x", finish="end_turn")
