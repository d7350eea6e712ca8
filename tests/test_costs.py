"""The cost study: one row against a hand computation from the provider rules, the lost cache hit of the
fresh-prompt shape, the price error, and the emulator-equivalent block accounting."""

import json

import pytest

from harness.cases import discover
from harness.cli import main
from harness.studies.costs import (CacheWorld, break_even, flip_hit_rate, folds_of,
                           price_session, study)
from harness.errors import HarnessError
from harness.models import _tokens
from harness.models.anthropic import message_params
from harness.models.emulator import anthropic_blocks, openai_prompt_tokens
from harness.models.openai import chat_params
from harness.models.pricing import load_prices, resolve
from harness.compaction.summarizer import summary_request

CASE = "edge-32k-window"  # small, and it compacts several times


@pytest.fixture(scope="module")
def case():
    return discover("cases", [CASE])[0]


@pytest.fixture(scope="module")
def folds(case):
    folds = folds_of(case)
    assert len(folds) >= 2
    return folds


def test_openai_row_matches_a_hand_computation(case, folds):
    """gpt-5: prompts of 1024+ tokens hit in 128-token steps on the prefix the agent already sent; reads
    bill at $0.125/M, the rest at $1.25/M, output at $10/M; writes cost nothing extra."""
    prices = load_prices()
    row = price_session(case, folds[:1], "openai:gpt-5", ["openai:gpt-5-mini"], prices)[0]
    fold = folds[0]
    request = summary_request(fold.summary_input, "gpt-5")
    parts = openai_prompt_tokens(chat_params(request), {})
    # everything before the instruction (a newline-separated last part) was in the agent's own request
    shared = len(parts) - len(_tokens.encode("\n" + f"<|user|>{request.messages[-1].content}"))
    cached = shared // 128 * 128
    output = _tokens.count(fold.summary_text)
    expected = ((len(parts) - cached) * 1.25 + cached * 0.125 + output * 10) / 1e6

    on = row.shape("cache-on")
    assert (on.input_tokens, on.cached_input_tokens, on.cache_write_tokens, on.output_tokens) == \
        (len(parts), cached, 0, output)
    assert on.usd == pytest.approx(expected, rel=1e-9)
    off = row.shape("cache-off")
    assert off.usd == pytest.approx((len(parts) * 1.25 + output * 10) / 1e6, rel=1e-9)
    alt = row.shape("alt:openai:gpt-5-mini")
    assert (alt.cached_input_tokens, alt.usd) == (0, pytest.approx((len(parts) * 0.25 + output * 2) / 1e6))
    assert [b.shape for b in row.shapes] == ["cache-on", "cache-off", "tools-dropped", "alt:openai:gpt-5-mini", "fresh",
                                             "openai-compact"]
    assert {b.source for b in row.shapes} == {"modelled"}


def test_anthropic_row_reads_the_agents_prefix_and_writes_only_the_rest(case, folds):
    """Sonnet 4.6: the summarizer's breakpoint on the last head message finds the agent's entry within 20
    blocks: read at $0.30/M, the newly covered blocks written at $3.75/M, the instruction uncached at $3/M."""
    row = price_session(case, folds[:1], "anthropic:claude-sonnet-4-6", [], load_prices())[0]
    on = row.shape("cache-on")
    request = summary_request(folds[0].summary_input, "claude-sonnet-4-6")
    blocks = anthropic_blocks(message_params(request), {})
    assert on.input_tokens == sum(b.tokens for b in blocks)
    assert on.uncached_tokens == blocks[-1].tokens  # only the instruction is new and uncached
    assert on.cached_input_tokens > 0.9 * on.input_tokens
    expected = (on.uncached_tokens * 3 + on.cached_input_tokens * 0.3 + on.cache_write_tokens * 3.75
                + on.output_tokens * 15) / 1e6
    assert on.usd == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-6", "openai:gpt-5"])
def test_fresh_prompt_shape_loses_the_cache_hit(case, folds, model):
    rows = price_session(case, folds, model, [], load_prices())
    assert len(rows) == len(folds) >= 2  # a row per compaction: an empty list would check nothing below
    for row in rows:
        on, fresh, off = row.shape("cache-on"), row.shape("fresh"), row.shape("cache-off")
        assert on.cached_input_tokens > 0
        assert fresh.cached_input_tokens == 0
        output_usd = on.usd - _input_usd(on, model)
        assert fresh.usd - output_usd > 3 * (on.usd - output_usd)  # the input side pays several times more
        # about the uncached price of the same content; a fresh summarizer prompt sends no tool definitions
        assert fresh.input_tokens == pytest.approx(off.input_tokens - _tool_tokens(case, model), rel=0.1)


def _tool_tokens(case, model):
    from harness.models.base import ModelRequest

    request = ModelRequest("m", None, (), 1, tools=case.session.tools)
    if model.startswith("anthropic"):
        return sum(b.tokens for b in anthropic_blocks(message_params(request)))
    return len(openai_prompt_tokens(chat_params(request)))


def _input_usd(billed, model):
    from harness.models.base import Usage
    from harness.models.pricing import cost

    return cost(Usage(billed.input_tokens, billed.cached_input_tokens, billed.cache_write_tokens, 0), model)


def test_memoised_blocks_match_fresh_ones(folds):
    payload = message_params(summary_request(folds[0].summary_input, "claude-sonnet-4-6"))
    memo: dict = {}
    assert anthropic_blocks(payload, memo) == anthropic_blocks(payload) == anthropic_blocks(payload, memo)


def test_cache_world_counts_like_the_emulator_for_one_openai_request(folds):
    """The cost study's cache world and the emulator serving the same request agree on its usage."""
    import json

    from harness.models.emulator import Emulator

    request = summary_request(folds[0].summary_input, "gpt-5")
    total, read, write = CacheWorld("openai", "gpt-5").send(request)
    assert (read, write) == (0, 0)  # a cold cache
    status, _, body = Emulator().handle("POST", "/v1/chat/completions", json.dumps(chat_params(request)).encode())
    assert status == 200
    usage = json.loads(body)["usage"]
    assert total == usage["prompt_tokens"] and usage["prompt_tokens_details"]["cached_tokens"] == 0


def test_break_even_and_flip_hit_rate():
    sonnet = resolve("claude-sonnet-4-6", load_prices())
    assert break_even(1.0, 4.0) == 0.25
    # 1M input, no output: uncached $3, fully cached $0.30; an alternative at $1 is matched at h = 2/2.7
    assert flip_hit_rate(sonnet, 1_000_000, 0, 1.0) == pytest.approx(2 / 2.7)


def test_unknown_model_is_a_one_line_price_error(capsys):
    with pytest.raises(HarnessError, match="no price for model 'openai:gpt-9'") as caught:
        study(discover("cases", [CASE]), ["openai:gpt-9"])
    assert "\n" not in str(caught.value)
    assert main(["cost", "--cases", CASE, "--model", "openai:gpt-9"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cost_command_prints_six_shapes_for_both_providers(tmp_path, capsys):
    markdown, plot = tmp_path / "cost.md", tmp_path / "cost.png"
    assert main(["cost", "--cases", CASE, "--json", "--markdown", str(markdown), "--plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    providers = {m["model"].split(":")[0] for m in result["models"]}
    assert providers == {"anthropic", "openai"}
    for summary in result["models"]:
        provider = summary["model"].split(":")[0] + "-compact"
        assert list(summary["shapes"])[-1] == provider and len(summary["shapes"]) == 6
        assert set(summary["provider_compaction"]) == {provider}
        (alt,) = summary["alternatives"].values()
        assert alt["price_ratio"] < 1 and alt["break_even_ratio"] < 1
    assert "![cost per compaction by request shape](cost.png)" in markdown.read_text()
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
