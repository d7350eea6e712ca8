"""Provider compaction through the real SDKs over the in-process emulator: the items, the typed errors, the
iterations usage, byte-exact cassettes and the reply without an item."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import anthropic.types as T
import httpx2
import pytest

from harness.errors import HarnessError
from harness.models import ChatMessage as M
from harness.models import ModelRequest, open_client
from harness.models.anthropic import usage_from
from harness.models.base import Usage
from harness.models.compaction_item import NoCompactionReturned, item_reference
from harness.models.emulator import Emulator, EmulatorTransport

SPECS = {"openai": "openai-compact:gpt-5.6@emulator", "anthropic": "anthropic-compact:claude-sonnet-4-6@emulator"}
HISTORY = (
    M("user", "Fix the login test in app/auth.py. Use port 9090 for the dev server."),
    M("assistant", "Fixed app/auth.py: the session now lives in a cookie. Tests pass."),
)
QUESTION = M("user", "Answer from the conversation above, briefly and exactly.\n\nQuestion: Which port must the dev "
                     "server use?")


def compacted(provider: str, transport: EmulatorTransport):
    client = open_client(SPECS[provider], transport=transport, max_retries=0)
    item, response = client.compact("You are a coding agent.", HISTORY, "Summarize:\n## Goal\n## Constraints")
    return client, item, response


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_item_comes_back_and_only_its_client_sends_it(provider: str, transport: EmulatorTransport,
                                                          emulator: Emulator) -> None:
    client, item, response = compacted(provider, transport)
    reference = item_reference(response.text)
    assert reference is not None and reference.spec == SPECS[provider]
    if provider == "openai":  # opaque: the marker says so and holds no fact
        assert item.opaque and reference.readable is None and "9090" not in response.text
        assert item.kept_user == (HISTORY[0].content,)
    else:  # Anthropic's content is readable, and is what the marker carries
        assert reference.readable == item.item["content"] and "9090" in item.item["content"]
    answer = client.complete(ModelRequest(client.name, None, (M("user", response.text), QUESTION), 200))
    assert "9090" in answer.text  # the provider read its own item
    sent = emulator.requests[-1]
    items = sent["input"] if provider == "openai" else sent["messages"][0]["content"]
    assert items[0] == item.item or {k: v for k, v in items[0].items() if k != "cache_control"} == item.item
    other = open_client(SPECS[provider], transport=transport)
    with pytest.raises(HarnessError, match="written by another client"):
        other.complete(ModelRequest(other.name, None, (M("user", response.text), QUESTION), 200))


def test_openai_item_is_unreadable_to_another_provider(transport: EmulatorTransport, emulator: Emulator) -> None:
    _, item, response = compacted("openai", transport)
    chat = open_client("openai:gpt-5.6@emulator", transport=transport)
    answer = chat.complete(ModelRequest("gpt-5.6", None, (M("user", response.text), QUESTION), 200))
    assert "9090" not in answer.text and "9090" not in item.item["encrypted_content"]


def test_compaction_usage_is_read_from_the_right_fields(transport: EmulatorTransport) -> None:
    _, _, openai_reply = compacted("openai", transport)
    assert openai_reply.usage == Usage(openai_reply.raw["usage"]["input_tokens"], 0, 0,
                                       openai_reply.raw["usage"]["output_tokens"])
    _, _, reply = compacted("anthropic", transport)
    top, (iteration,) = reply.raw["usage"], reply.raw["usage"]["iterations"]
    assert top["input_tokens"] == top["output_tokens"] == 0 and iteration["type"] == "compaction"
    assert reply.usage.output_tokens == iteration["output_tokens"] > 0
    assert reply.usage.input_tokens == (iteration["input_tokens"] + iteration["cache_read_input_tokens"]
                                        + iteration["cache_creation_input_tokens"]) > 0


def test_iterations_add_to_the_top_level_usage() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20,
             "iterations": [{"type": "message", "input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
                             "cache_creation_input_tokens": 20},
                            {"type": "compaction", "input_tokens": 3000, "output_tokens": 400,
                             "cache_read_input_tokens": 7000, "cache_creation_input_tokens": 0}]}
    assert usage_from(usage) == Usage(130 + 10000, 100 + 7000, 20, 405)


def _edited(block: dict, **changes: object) -> dict:
    return {**block, **changes}


@pytest.mark.parametrize("mutate,error,code", [
    (lambda b: [_edited(b, content=b["content"] + " (edited)")], T.CompactionContentMismatchError,
     "compaction_content_mismatch"),
    (lambda b: [_edited(b, signature="emu1.forged")], T.CompactionSignatureInvalidError,
     "compaction_signature_invalid"),
    (lambda b: [_edited(b, tool_changes=[{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "x"}}])],
     T.CompactionToolChangesMismatchError, "compaction_tool_changes_mismatch"),
    (lambda b: [{"type": "text", "text": "first"}, b], T.CompactionBlockMisplacedError,
     "compaction_block_misplaced"),
    (lambda b: [b, b], T.CompactionBlockAmbiguousError, "compaction_block_ambiguous"),
])
def test_each_typed_error_on_a_sent_block(mutate, error, code, transport: EmulatorTransport) -> None:
    _, item, _ = compacted("anthropic", transport)
    sdk = anthropic.Anthropic(api_key="k", base_url="http://anthropic.emulator.invalid", max_retries=0,
                              http_client=httpx2.Client(transport=transport))
    with pytest.raises(error) as raised:
        sdk.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, betas=["compact-2026-09-04"],
                                 messages=[{"role": "user", "content": [*mutate(dict(item.item)),
                                                                        {"type": "text", "text": "Which port?"}]}])
    assert raised.value.error_code == code


@pytest.mark.parametrize("messages,error,code", [
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]}],
     T.CompactionIncompleteTurnError, "compaction_incomplete_turn"),
])
def test_typed_errors_of_the_compaction_request(messages, error, code, transport: EmulatorTransport) -> None:
    sdk = anthropic.Anthropic(api_key="k", base_url="http://anthropic.emulator.invalid", max_retries=0,
                              http_client=httpx2.Client(transport=transport))
    with pytest.raises(error) as raised:
        sdk.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, betas=["compact-2026-09-04"],
                                 compaction={"type": "summarize"}, messages=messages)
    assert raised.value.error_code == code


def test_nothing_to_summarize_and_unavailable_are_typed(transport: EmulatorTransport, emulator: Emulator) -> None:
    _, item, _ = compacted("anthropic", transport)
    sdk = anthropic.Anthropic(api_key="k", base_url="http://anthropic.emulator.invalid", max_retries=0,
                              http_client=httpx2.Client(transport=transport))
    with pytest.raises(T.CompactionNothingToSummarizeError):
        sdk.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, betas=["compact-2026-09-04"],
                                 compaction={"type": "summarize"}, messages=[{"role": "user", "content": [item.item]}])
    emulator.inject("compaction_unavailable")
    with pytest.raises(T.CompactionUnavailableError):
        sdk.beta.messages.create(model="claude-sonnet-4-6", max_tokens=50, betas=["compact-2026-09-04"],
                                 compaction={"type": "summarize"}, messages=[{"role": "user", "content": "hi"}])


def test_the_harness_error_names_the_typed_cause(transport: EmulatorTransport) -> None:
    client, item, _ = compacted("anthropic", transport)
    edited = type(item)(item.spec, item.provider, {**item.item, "content": "edited"}, "edited")  # a caller's edit
    client.items.add(edited)
    with pytest.raises(HarnessError, match=r"HTTP 400 compaction_content_mismatch: .*differs"):
        client.complete(ModelRequest(client.name, None, (M("user", edited.text()), QUESTION), 50))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_without_an_item_is_not_compacted(provider: str, transport: EmulatorTransport,
                                                  emulator: Emulator) -> None:
    emulator.inject("drop_compaction")
    with pytest.raises(NoCompactionReturned, match="not compacted"):
        compacted(provider, transport)


# -- cassettes keep the opaque fields byte for byte

ODD = "enc:\u00e9\u2028\\u0000\"quoted\"/slash " + "x" * 300  # escapes, a line separator, longer than the digest limit


class FixedReply(httpx2.BaseTransport):
    """A provider whose compaction carries awkward bytes, recorded once."""

    def __init__(self, body: dict) -> None:
        self.body, self.calls = body, 0

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        return httpx2.Response(200, content=json.dumps(self.body, ensure_ascii=False).encode(),
                               headers={"content-type": "application/json"})


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_cassette_round_trip_is_byte_exact(provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-only-000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-only-000")
    changes = [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "grep\u00e9"}}]
    if provider == "openai":
        item = {"type": "compaction", "id": "cmp_1", "encrypted_content": ODD, "created_by": "srv"}
        body = {"id": "r1", "object": "response.compaction", "created_at": 1, "output": [item],
                "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7,
                          "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}
    else:
        item = {"type": "compaction", "content": "Goal: x", "encrypted_content": ODD, "signature": ODD[::-1],
                "tool_changes": changes}
        body = {"id": "m1", "type": "message", "role": "assistant", "model": "m", "content": [item],
                "stop_reason": "compaction", "usage": {"input_tokens": 0, "output_tokens": 0}}
    cassette = tmp_path / "c.json"
    recorded = open_client(SPECS[provider].replace("@emulator", ""), transport=FixedReply(body),
                           cassette_path=cassette, record_mode="all")
    first, _ = recorded.compact(None, HISTORY)
    replayed = open_client(SPECS[provider].replace("@emulator", ""), cassette_path=cassette, record_mode="none")
    second, _ = replayed.compact(None, HISTORY)
    assert first.item == second.item == item
    for key in ("encrypted_content", "signature", "tool_changes"):
        if key in item:
            assert json.dumps(second.item[key], ensure_ascii=False) == json.dumps(item[key], ensure_ascii=False)
