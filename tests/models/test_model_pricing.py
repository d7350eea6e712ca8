from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.models.base import Usage
from harness.models.pricing import cost, load_prices, resolve


def test_openai_cost_by_hand() -> None:
    usage = Usage(input_tokens=100_000, cached_input_tokens=60_000, cache_write_tokens=0, output_tokens=2_000)
    # gpt-5: 40,000 uncached at 1.25, 60,000 cached at 0.125, 2,000 out at 10 (USD per million)
    assert cost(usage, "openai:gpt-5") == pytest.approx((40_000 * 1.25 + 60_000 * 0.125 + 2_000 * 10) / 1e6)
    assert cost(usage, "gpt-5") == pytest.approx(0.0775)


def test_anthropic_cost_by_hand() -> None:
    usage = Usage(input_tokens=10_000, cached_input_tokens=6_000, cache_write_tokens=3_000, output_tokens=500)
    # claude-sonnet-4-6: 1,000 uncached at 3, 6,000 read at 0.30, 3,000 written at 3.75 (5m), 500 out at 15
    assert cost(usage, "anthropic:claude-sonnet-4-6") == pytest.approx(0.02355)
    assert cost(usage, "claude-sonnet-4-6", long_ttl=True) == pytest.approx((3_000 + 1_800 + 3_000 * 6 + 7_500) / 1e6)


def test_long_context_tiers() -> None:
    small = Usage(100_000, 0, 0, 1_000)
    big = Usage(300_000, 100_000, 0, 1_000)
    assert cost(small, "gpt-6.2-sol") == pytest.approx((100_000 * 2 + 1_000 * 10) / 1e6)
    assert cost(big, "gpt-6.2-sol") == pytest.approx((200_000 * 4 + 100_000 * 0.2 + 1_000 * 15) / 1e6)
    assert cost(Usage(100_001, 0, 0, 0), "claude-haiku-5-5") == pytest.approx(100_001 * 0.5 / 1e6)


def test_names_resolve_with_prefixes_and_dates() -> None:
    prices = load_prices()
    assert resolve("anthropic:claude-haiku-4-5-20251001", prices).model == "claude-haiku-4-5"
    assert resolve("openai:gpt-4o-2024-08-06@emulator", prices).model == "gpt-4o"
    assert resolve("claude-opus-4.5", prices).model == "claude-opus-4-5"
    assert resolve("gpt-5-mini", prices).model == "gpt-5-mini"
    assert cost(Usage(10**6, 0, 0, 10**6), "builtin") == 0.0


def test_rows_carry_source_window_and_max_output() -> None:
    row = load_prices()["gpt-4.1"]
    assert row.source == "shared/PROVIDERS.md, 2026-11-30"
    assert (row.window, row.max_output, row.cache_write) == (1_047_576, 32_768, None)
    assert all(r.source for r in load_prices().values())


def test_unknown_model_says_how_to_add_it() -> None:
    with pytest.raises(HarnessError) as info:
        cost(Usage(1, 0, 0, 1), "openai:my-finetune")
    assert "--prices FILE" in str(info.value) and '[models."my-finetune"]' in str(info.value)


def test_user_file_overrides_and_adds(tmp_path: Path) -> None:
    file = tmp_path / "prices.toml"
    file.write_text('[models."claude-sonnet-5-5"]\ncache_read = 0.10\n\n'
                    '[models."my-finetune"]\ninput = 1.0\ncache_read = 0.1\noutput = 4.0\n')
    prices = load_prices(file)
    assert prices["claude-sonnet-5-5"].cache_read == 0.10 and prices["claude-sonnet-5-5"].input == 2
    assert cost(Usage(1_000_000, 0, 0, 0), "openai:my-finetune", prices) == pytest.approx(1.0)
    assert load_prices()["claude-sonnet-5-5"].cache_read == 0.20  # defaults untouched


@pytest.mark.parametrize("text,needle", [("[models.x]\ninput = 1\n", "missing"), ("not toml [", "not valid TOML"),
                                         ('[models.x]\ninput = "a"\ncache_read = 1\noutput = 1\n', "must be a number"),
                                         ("[models.x]\nprice = 1\n", "unknown field")])
def test_bad_price_files(tmp_path: Path, text: str, needle: str) -> None:
    file = tmp_path / "prices.toml"
    file.write_text(text)
    with pytest.raises(HarnessError, match=needle):
        load_prices(file)
