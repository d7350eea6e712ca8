"""The cache simulators against the providers' documented rules (shared/PROVIDERS.md)."""

from __future__ import annotations

import pytest

from harness.models.emulator import AnthropicBreakpointCache, CacheBlock, EmulatorError, OpenAIPrefixCache


def tokens(n: int, start: int = 0) -> list[int]:
    return list(range(start, start + n))


def test_openai_prefix_cached_in_128_steps(clock) -> None:
    cache = OpenAIPrefixCache(clock)
    assert cache.lookup_and_store("gpt-5", tokens(1950)) == 0  # first sight: nothing cached
    # a 2,006-token prompt whose first 1,920 tokens were seen gets 1,920 cached
    prompt = tokens(1950) + tokens(56, start=50_000)
    assert len(prompt) == 2006
    assert cache.lookup_and_store("gpt-5", prompt) == 1920


def test_openai_shared_prefix_rounds_down_to_a_step(clock) -> None:
    cache = OpenAIPrefixCache(clock)
    cache.lookup_and_store("gpt-5", tokens(3000))
    diverging = tokens(1500) + tokens(1500, start=90_000)  # shares 1,500 tokens
    assert cache.lookup_and_store("gpt-5", diverging) == 1408  # 11 * 128


def test_openai_nothing_below_1024_and_per_model(clock) -> None:
    cache = OpenAIPrefixCache(clock)
    cache.lookup_and_store("gpt-5", tokens(1000))
    assert cache.lookup_and_store("gpt-5", tokens(1000)) == 0
    cache.lookup_and_store("gpt-5", tokens(1100))
    assert cache.lookup_and_store("gpt-5", tokens(1100)) == 1024
    assert cache.lookup_and_store("gpt-4o", tokens(1100)) == 0


def test_openai_retention_expires(clock) -> None:
    cache = OpenAIPrefixCache(clock, retention_s=600)
    cache.lookup_and_store("gpt-5", tokens(2048))
    clock.advance(601)
    assert cache.lookup_and_store("gpt-5", tokens(2048)) == 0


def blocks(count: int, size: int = 100, breakpoints: tuple[int, ...] = (), ttl: str = "5m") -> list[CacheBlock]:
    return [CacheBlock(f"block-{i}", size, ttl if i in breakpoints else None) for i in range(count)]


def test_anthropic_write_then_read(clock) -> None:
    cache = AnthropicBreakpointCache(clock)
    first = cache.process("claude", blocks(20, breakpoints=(19,)))
    assert (first.write_tokens, first.read_tokens, first.total_tokens) == (2000, 0, 2000)
    second = cache.process("claude", blocks(25, breakpoints=(24,)))  # 5 blocks later: within the lookback
    assert (second.read_tokens, second.write_tokens) == (2000, 500)


def test_anthropic_breakpoint_beyond_20_blocks_misses(clock) -> None:
    cache = AnthropicBreakpointCache(clock)
    cache.process("claude", blocks(20, breakpoints=(19,)))
    far = cache.process("claude", blocks(41, breakpoints=(40,)))  # 21 blocks after the cached one
    assert far.read_tokens == 0 and far.write_tokens == 4100
    near = AnthropicBreakpointCache(clock)
    near.process("claude", blocks(20, breakpoints=(19,)))
    assert near.process("claude", blocks(40, breakpoints=(39,))).read_tokens == 2000  # exactly 20 back: hit


def test_anthropic_ttl_expiry_and_refresh(clock) -> None:
    cache = AnthropicBreakpointCache(clock)
    cache.process("claude", blocks(20, breakpoints=(19,)))
    clock.advance(299)
    assert cache.process("claude", blocks(20, breakpoints=(19,))).read_tokens == 2000  # refreshes the entry
    clock.advance(299)
    assert cache.process("claude", blocks(20, breakpoints=(19,))).read_tokens == 2000
    clock.advance(301)
    expired = cache.process("claude", blocks(20, breakpoints=(19,)))
    assert expired.read_tokens == 0 and expired.write_tokens == 2000


def test_anthropic_one_hour_ttl(clock) -> None:
    cache = AnthropicBreakpointCache(clock)
    first = cache.process("claude", blocks(20, breakpoints=(19,), ttl="1h"))
    assert first.write_1h_tokens == 2000
    clock.advance(1800)
    assert cache.process("claude", blocks(20, breakpoints=(19,), ttl="1h")).read_tokens == 2000


def test_anthropic_below_minimum_caches_nothing(clock) -> None:
    cache = AnthropicBreakpointCache(clock, min_tokens=1024)
    assert cache.process("claude", blocks(10, breakpoints=(9,))).write_tokens == 0  # 1,000 tokens
    assert cache.process("claude", blocks(10, breakpoints=(9,))).read_tokens == 0


def test_anthropic_no_breakpoint_no_cache(clock) -> None:
    cache = AnthropicBreakpointCache(clock)
    cache.process("claude", blocks(30))
    result = cache.process("claude", blocks(30))
    assert (result.read_tokens, result.write_tokens) == (0, 0)


def test_anthropic_at_most_four_breakpoints(clock) -> None:
    with pytest.raises(EmulatorError, match="maximum of 4"):
        AnthropicBreakpointCache(clock).process("claude", blocks(30, breakpoints=(1, 5, 10, 15, 20)))


def test_anthropic_system_and_message_breakpoints(clock) -> None:
    cache = AnthropicBreakpointCache(clock)
    # block 0 = a 1,200-token system prompt, then messages; breakpoints on the system and the last message
    session = [CacheBlock("system", 1200, "5m")] + blocks(10)[1:9] + [CacheBlock("m9", 100, "5m")]
    first = cache.process("claude", session)
    assert first.write_tokens == first.total_tokens == 2100
    # a request with another history but the same system prompt still reads the system block
    other = [CacheBlock("system", 1200, "5m"), CacheBlock("x", 300, "5m")]
    result = cache.process("claude", other)
    assert (result.read_tokens, result.write_tokens) == (1200, 300)
