"""Provider compaction in the cost study, on a hand-made session whose figures follow from the providers' cache
rules: Anthropic's explicit request reads the agent's whole prefix and its tokens are counted from the
`compaction` iteration; OpenAI's `/responses/compact` takes no tools, so it misses the agent's cache; the next
request carries the provider's compacted context; break-even on the whole price."""

from pathlib import Path

import pytest

from harness.cases.schema import Case
from harness.compaction.summarizer import SummaryInput
from harness.models import _tokens
from harness.models.anthropic import message_params, usage_from
from harness.models.base import ChatMessage, ModelRequest, Usage
from harness.models.emulator import anthropic_blocks, openai_prompt_tokens
from harness.models.emulator.compaction import compaction_message
from harness.models.emulator.cache import AnthropicCacheResult
from harness.models.openai import chat_params
from harness.models.pricing import load_prices
from harness.session import Message, Session
from harness.studies.cache_world import Sent
from harness.studies.cost_provider import ProviderTrack, reported_usage
from harness.studies.cost_totals import provider_figures
from harness.studies.costs import Fold, price_session

SYSTEM = "You are a coding agent."
TOOLS = tuple({"name": f"tool_{i}", "description": "Reads or edits one file of the repository. " * 30,
               "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}} for i in range(4))
# u0 a1 u2 a3 u4 | a5 u6: the agent sent at 1, 3 and 5; the compaction fires at the send of 7 and keeps 5-6
MESSAGES = tuple(Message("user" if i % 2 == 0 else "assistant", f"message {i}: " + "alpha beta " * (100 + 20 * i))
                 for i in range(7))
SUMMARY = "## Goal\nFinish the refactor.\n## Progress\nFive messages folded."


def hand_case() -> Case:
    case = Case("hand", "hand-made", "test", Path("."), "session.jsonl", 200_000, 8192, None, ())
    case.__dict__["session"] = Session(MESSAGES, SYSTEM, tools=TOOLS)  # a cached property
    return case


def hand_fold() -> Fold:
    request = SummaryInput(SYSTEM, None, MESSAGES[:5], 4096, 1, 0, tools=TOOLS)
    return Fold(1, 7, request, SUMMARY, (1, 3, 5), tail_start=5)


def chat(i: int) -> ChatMessage:
    return ChatMessage(MESSAGES[i].role, MESSAGES[i].content)


def anthropic_tokens(*indices: int, head: bool = False) -> int:
    """Tokens of the tools and system prompt (head) or of the given messages, as the emulator counts blocks."""
    if head:
        return sum(b.tokens for b in anthropic_blocks(message_params(ModelRequest("m", SYSTEM, (), 1, tools=TOOLS))))
    return sum(b.tokens for i in indices
               for b in anthropic_blocks(message_params(ModelRequest("m", None, (chat(i),), 1, cache=False))))


def summary_tokens() -> int:
    return sum(b.tokens for b in anthropic_blocks(message_params(
        ModelRequest("m", None, (ChatMessage("user", SUMMARY),), 1, cache=False))))


def test_anthropic_compaction_reads_the_agents_prefix_and_the_next_request_writes_block_and_tail():
    row = price_session(hand_case(), [hand_fold()], "anthropic:claude-sonnet-4-6", [], load_prices())[0]
    call, first = row.shape("anthropic-compact"), row.first("anthropic-compact")
    head, folded, output = anthropic_tokens(head=True), anthropic_tokens(0, 1, 2, 3, 4), _tokens.count(SUMMARY)
    assert head > 1024  # big enough to be cached on its own
    # the agent's send at 5 put an entry on message 4: the compaction's breakpoint there reads it all
    assert (call.input_tokens, call.cached_input_tokens, call.cache_write_tokens, call.output_tokens) == \
        (head + folded, head + folded, 0, output)
    assert call.usd == pytest.approx(((head + folded) * 0.30 + output * 15) / 1e6, rel=1e-9)
    # the next request: tools and system read, the block (its readable content) and the tail written at 1.25x
    written = summary_tokens() + anthropic_tokens(5, 6)
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens) == (head + written, head,
                                                                                         written)
    assert first.usd == pytest.approx((head * 0.30 + written * 3.75) / 1e6, rel=1e-9)
    assert row.whole_usd("anthropic-compact") == pytest.approx(call.usd + first.usd)


def test_openai_compaction_misses_the_tools_first_cache_and_keeps_every_user_message():
    row = price_session(hand_case(), [hand_fold()], "openai:gpt-5", [], load_prices())[0]
    call, first = row.shape("openai-compact"), row.first("openai-compact")
    # /responses/compact takes instructions and input, no tools: a prefix the agent never sent
    compact = openai_prompt_tokens(chat_params(ModelRequest("m", SYSTEM, tuple(chat(i) for i in range(5)), 1)))
    output = _tokens.count(SUMMARY)
    assert (call.input_tokens, call.cached_input_tokens, call.output_tokens) == (len(compact), 0, output)
    assert call.usd == pytest.approx((len(compact) * 1.25 + output * 10) / 1e6, rel=1e-9)
    # next: tools, system, the user messages 0, 2, 4, the item (billed as its summary), then 5 and 6; it
    # shares with the agent's last send (tools, system, 0..4) up to message 0, read in 128-token steps
    after = [chat(0), chat(2), chat(4), ChatMessage("user", SUMMARY), chat(5), chat(6)]
    tokens = openai_prompt_tokens(chat_params(ModelRequest("m", SYSTEM, tuple(after), 1, tools=TOOLS)))
    warmed = openai_prompt_tokens(chat_params(ModelRequest("m", SYSTEM, tuple(chat(i) for i in range(5)), 1,
                                                           tools=TOOLS)))
    shared = next(i for i, (a, b) in enumerate(zip(tokens, warmed)) if a != b)
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens) == \
        (len(tokens), shared // 128 * 128, 0)


def test_anthropic_compaction_tokens_come_from_the_iteration_not_the_top_level():
    sent = Sent(total=5000, read=4000, write=600)
    usage = reported_usage("anthropic", "claude-sonnet-4-6", sent, SUMMARY, 33)
    assert usage == Usage(5000, 4000, 600, _tokens.count(SUMMARY))
    body = compaction_message(0, "claude-sonnet-4-6", SUMMARY, AnthropicCacheResult(4000, 600, 0, 5000), False)
    top_level = {k: v for k, v in body["usage"].items() if k != "iterations"}
    assert usage_from(top_level) == Usage()  # a reader of the top level alone counts nothing
    assert reported_usage("openai", "gpt-5", sent, SUMMARY, 33) == Usage(5000, 4000, 0, 33)


def test_openai_track_keeps_user_messages_across_compactions_but_not_the_old_item():
    track = ProviderTrack("openai")
    first = track.compaction_request("m", SYSTEM, [], [chat(0), chat(1), chat(2)], TOOLS, None, 100)
    assert first.tools == ()  # the endpoint has no tools parameter
    track.compacted(first, "item one")
    item_one = track.item
    second = track.compaction_request("m", SYSTEM, [], [chat(3), chat(4)], TOOLS, None, 100)
    track.compacted(second, "item two")
    assert [m.content for m in track.ahead] == [MESSAGES[0].content, MESSAGES[2].content, MESSAGES[4].content,
                                                "item two"]
    assert item_one not in track.ahead
    anthropic = ProviderTrack("anthropic")
    request = anthropic.compaction_request("m", SYSTEM, [], [chat(0), chat(1)], TOOLS, None, 100)
    assert request.tools == TOOLS  # messages.create takes the session's tools: the agent's prefix
    anthropic.compacted(request, "block")
    assert [m.content for m in anthropic.ahead] == ["block"]


def test_provider_break_even_is_on_the_whole_price():
    on = {"usd": 1.0, "whole_usd": 1.5, "first_request": {"usd": 0.5}}
    provider = {"usd": 0.5, "whole_usd": 1.1, "first_request": {"usd": 0.6}}
    figures = provider_figures(on, provider)
    assert figures["break_even_ratio_whole"] == pytest.approx((1.0 + 0.5 - 0.6) / 0.5)
    assert figures["break_even_ratio"] == pytest.approx(2.0)
    assert figures["cheaper_whole"] and figures["saving_whole_usd"] == pytest.approx(0.4)


def test_a_model_without_provider_compaction_gets_no_such_shape():
    row = price_session(hand_case(), [hand_fold()], "builtin", [], load_prices())[0]
    assert [b.shape for b in row.shapes] == ["cache-on", "cache-off", "tools-dropped", "fresh"]
