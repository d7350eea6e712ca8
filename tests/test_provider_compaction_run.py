"""Provider compaction as the system under test in a run: the opaque-item rule, the compacted context the
provider returns, the answerer rule, and the reply without an item as its own outcome."""

from __future__ import annotations

import json

import pytest

from harness.cases import discover
from harness.errors import HarnessError
from harness.models.compaction_item import item_reference
from harness.models.emulator import Emulator, EmulatorTransport
from harness.results.folder import RunFolder
from harness.run.config import RunConfig
from harness.run.matrix import run_cases
from test_runner import make_case

OPENAI = "openai-compact:gpt-5.6@emulator"
ANTHROPIC = "anthropic-compact:claude-sonnet-4-6@emulator"
PRICES = '[models."gpt-5.6"]\nprovider = "openai"\ninput = 1.25\ncache_read = 0.125\noutput = 10\n'


def run_with(tmp_path, summarizer: str) -> dict:
    make_case(tmp_path / "cases", "small")
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    config = RunConfig(summarizer=summarizer, record_mode="new", cassettes=str(tmp_path / "cassettes"),
                       prices=str(prices))
    return run_cases(discover(tmp_path / "cases"), config, RunFolder(tmp_path / "out"), run_id="r")


def test_opaque_item_retained_not_applicable_and_answered_by_its_model(tmp_path) -> None:
    run = run_with(tmp_path, OPENAI)
    case = run["cases"]["small"]
    assert run["configuration"]["answerer"] == OPENAI
    assert case["events"], "the tiny window must force a compaction"
    graded = [p for p in case["probes"] if p["valid"] and p.get("compactions_before")]
    assert graded
    for probe in graded:
        compacted = probe["conditions"]["compacted"]
        assert "retained" not in compacted and "answered" in compacted
        assert "retained" in probe["conditions"]["full"]  # the full history is readable
    assert "retained" not in run["aggregates"]["headline"]
    assert all(s.get("opaque") for s in case["summaries"])


def test_the_providers_kept_user_messages_stand_ahead_of_the_item(tmp_path) -> None:
    run_with(tmp_path, OPENAI)
    context = json.loads((tmp_path / "out" / "cases" / "small.json").read_text())["contexts"]["end"]
    assert context["kept"], "OpenAI's compacted output keeps the user messages it was given"
    assert item_reference(context["summary"]).readable is None


def test_readable_block_is_measured(tmp_path) -> None:
    run = run_with(tmp_path, ANTHROPIC)
    case = run["cases"]["small"]
    graded = [p for p in case["probes"] if p["valid"] and p.get("compactions_before")]
    assert graded and all("retained" in p["conditions"]["compacted"] for p in graded)
    assert "retained" in run["aggregates"]["headline"]
    assert case["usage"]["input_tokens"] > 0  # from the compaction iterations, not the empty top level
    assert case["cost"]["usd"] > 0


def test_another_answerer_is_refused() -> None:
    with pytest.raises(HarnessError, match="answered by the same provider and model"):
        RunConfig(summarizer=OPENAI, answerer="builtin").validate()


@pytest.mark.parametrize("summarizer", [OPENAI, ANTHROPIC])
def test_no_item_is_not_compacted(summarizer: str, tmp_path, monkeypatch) -> None:
    emulator = Emulator()
    emulator.inject(*["drop_compaction"] * 50)  # every compaction request loses its item (answers too: no-op)
    monkeypatch.setattr("harness.models.emulator.EmulatorTransport", lambda: EmulatorTransport(emulator))
    run = run_with(tmp_path, summarizer)
    case = run["cases"]["small"]
    assert case["status"] == "ok" and not case["events"]
    assert case["summaries"] and all(s.get("not_compacted") for s in case["summaries"])
    assert all(s["finish_reason"] == "no_compaction" for s in case["summaries"])
