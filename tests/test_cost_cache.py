"""The cost study's cache on the session's clock and with the session's tools: tools lead the prefix on both
providers, dropping them misses the whole cache, entries expire by each provider's TTL across idle gaps, and
the first request after a compaction writes the new prefix."""

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from harness.cases import discover
from harness.models.anthropic import message_params
from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator import anthropic_blocks, openai_prompt_tokens
from harness.models.emulator.cache import OpenAIPrefixCache
from harness.models.openai import chat_params
from harness.models.pricing import load_prices
from harness.studies.cache_world import CacheWorld
from harness.studies.costs import folds_of, price_session

TOOLS = tuple({"name": f"tool_{i}", "description": "Does one thing to the repository. " * 40,
               "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}} for i in range(6))
HISTORY = tuple(ChatMessage("user" if i % 2 == 0 else "assistant", f"message {i} " + "word " * 300)
                for i in range(8))


def request(tools=TOOLS, messages=HISTORY, ttl=None) -> ModelRequest:
    return ModelRequest("m", "You are an agent.", messages, 100, tools=tools, cache_ttl=ttl)


def test_anthropic_prefix_is_tools_then_system_then_messages():
    payload = message_params(request())
    blocks = anthropic_blocks(payload)
    assert len(blocks) == len(TOOLS) + 1 + len(HISTORY)
    assert blocks[len(TOOLS) - 1].breakpoint_ttl is None and blocks[len(TOOLS)].breakpoint_ttl == "5m"
    assert payload["tools"][0]["name"] == "tool_0" and "cache_control" not in payload["tools"][-1]
    assert blocks[: len(TOOLS)] == anthropic_blocks(message_params(request(messages=())))[: len(TOOLS)]


def test_openai_prompt_starts_with_the_tools():
    with_tools = openai_prompt_tokens(chat_params(request()))
    without = openai_prompt_tokens(chat_params(request(tools=())))
    assert len(with_tools) > len(without) + 1000
    assert with_tools[-len(without) + 5:] == without[5:]  # same messages after the tools


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_dropping_the_tools_misses_the_whole_cache(provider):
    world = CacheWorld(provider, "m")
    world.send(request())
    assert world.send(request()).read > 0.9 * world.send(request()).total
    assert world.send(request(tools=())).read == 0


def test_anthropic_entries_expire_by_the_ttl_the_request_chose():
    world = CacheWorld("anthropic", "m")
    world.send(request(), at=0.0)
    assert world.send(request(), at=299.0).read > 0  # a hit refreshes the 5-minute entry
    assert world.send(request(), at=299.0 + 301.0).read == 0
    long = CacheWorld("anthropic", "m")
    long.send(request(ttl="1h"), at=0.0)
    assert long.send(request(ttl="1h"), at=3000.0).read > 0
    assert long.send(request(ttl="1h"), at=3000.0 + 3601.0).read == 0


def test_openai_retention_is_idle_minutes_capped_at_an_hour():
    now = [0.0]
    cache = OpenAIPrefixCache(clock=lambda: now[0], retention_s=600.0, max_age_s=3600.0)
    tokens = list(range(4096))
    cache.lookup_and_store("m", tokens)
    now[0] = 599.0
    assert cache.lookup_and_store("m", tokens) == 4096
    for step in range(2, 7):  # kept warm every 10 minutes less a second, up to the hour
        now[0] = step * 599.0
        assert cache.lookup_and_store("m", tokens) == 4096
    now[0] = 3601.0
    assert cache.lookup_and_store("m", tokens) == 0  # an hour after it was first stored
    now[0] = 3601.0 + 601.0
    assert cache.lookup_and_store("m", tokens) == 0


def stamped(case, gap_before: int, gap_s: float):
    """The case's messages 5 s apart, with an idle gap before message `gap_before` (its tools kept: the folds'
    summarizer inputs carry the same ones)."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    messages = []
    for i, m in enumerate(case.session.messages):
        at = start + timedelta(seconds=5 * i + (gap_s if i >= gap_before else 0))
        messages.append(replace(m, ts=at.isoformat().replace("+00:00", "Z")))
    copy = replace(case)
    copy.__dict__["session"] = replace(case.session, messages=tuple(messages))  # a cached property
    return copy


@pytest.fixture(scope="module")
def small():
    case = discover("cases", ["edge-32k-window"])[0]
    assert len(case.session.tools) >= 10  # generated cases carry the agent's tool set
    return case, folds_of(case)


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-6", "openai:gpt-5"])
def test_an_idle_gap_before_the_compaction_meets_a_cold_cache(small, model):
    case, folds = small
    fold = folds[0]
    warm = price_session(stamped(case, len(case.session.messages), 0), folds[:1], model, [], load_prices())[0]
    cold = price_session(stamped(case, fold.send_index - 1, 3600), folds[:1], model, [], load_prices())[0]
    assert not warm.cold and cold.cold and cold.idle_s >= 3600
    assert warm.shape("cache-on").cached_input_tokens > 0.9 * warm.shape("cache-on").input_tokens
    assert cold.shape("cache-on").cached_input_tokens == 0


def test_tools_dropped_loses_the_hit_and_the_first_request_writes_the_new_prefix(small):
    case, folds = small
    timed = stamped(case, len(case.session.messages), 0)
    row = price_session(timed, folds[:1], "anthropic:claude-sonnet-4-6", ["anthropic:claude-haiku-4-5"],
                        load_prices())[0]
    on, dropped = row.shape("cache-on"), row.shape("tools-dropped")
    assert on.cached_input_tokens > 0.9 * on.input_tokens
    assert dropped.cached_input_tokens == 0 and dropped.input_tokens < on.input_tokens
    first = row.first("cache-on")
    tools_and_system = sum(b.tokens for b in anthropic_blocks(message_params(
        ModelRequest("m", case.session.system, (), 1, tools=case.session.tools))))
    assert first.cached_input_tokens == tools_and_system  # read: the tools and system prompt
    assert first.cache_write_tokens == first.input_tokens - tools_and_system  # written: summary and tail
    assert row.whole_usd("cache-on") == pytest.approx(on.usd + first.usd)
    assert row.uncompacted.input_tokens > first.input_tokens
