"""Comparisons never compare a model with itself: two specs that resolve to the same model make the quality
comparison void (issue 14, item 2)."""

from harness.studies.compare import same_model, text_source
from harness.studies.verdict import verdict_sentence


def config(summarizer, policy="default", model="builtin"):
    return {"policy": policy, "model": model, "summarizer": summarizer, "summarizer_spec": summarizer,
            "answerer": "builtin", "judge": None, "cache": True, "settings": {}}


def test_every_emulator_spec_is_the_builtin_model():
    assert text_source("anthropic:claude-sonnet-4-6@emulator") == "builtin" == text_source("builtin")
    assert text_source("openai:gpt-5@http://localhost:8000/v1") == "openai:gpt-5@http://localhost:8000/v1"
    assert text_source("openai:gpt-5") == "openai:gpt-5"


def test_two_emulated_summarizers_are_void_and_say_why():
    reason = same_model(config("anthropic:claude-sonnet-4-6@emulator"), config("anthropic:claude-haiku-4-5@emulator"))
    assert reason.startswith("anthropic:claude-sonnet-4-6@emulator and anthropic:claude-haiku-4-5@emulator are "
                             "the same underlying model (builtin)") and "wire-format conversion alone" in reason
    assert same_model(config("builtin"), config("openai:gpt-5-mini@emulator")) is not None


def test_different_models_policies_or_a_rerun_are_not_void():
    assert same_model(config("openai:gpt-5"), config("openai:gpt-5-mini")) is None
    assert same_model(config("openai:gpt-5@emulator"), config("openai:gpt-5")) is None
    assert same_model(config("builtin", "pi"), config("openai:gpt-5@emulator", "default")) is None
    assert same_model(config("openai:gpt-5"), config("openai:gpt-5")) is None  # a rerun: flakiness is real


def test_a_void_verdict_claims_nothing_on_quality():
    q = {"grade": "answered", "difference": 0.0, "p_value": 1.0, "shared_probes": 40, "significant": False,
         "void": "a and b are the same underlying model (builtin); the quality comparison is void"}
    c = {"compactions": 3, "same_usd": 0.3, "alt_usd": 0.1, "same_usd_per_compaction": 0.1,
         "alt_usd_per_compaction": 0.033, "cache_hit_rate": 0.0, "source": "recorded", "flip_hit_rate": 0.83}
    sentence = verdict_sentence("m", "a", q, c)
    assert sentence.startswith("Quality cannot decide: no quality evidence either way (a and b are the same")
    assert "supports" not in sentence and "On cost alone, the same model costs $0.1000" in sentence


def test_a_run_of_two_emulated_summarizers_prints_that_the_comparison_is_void(tmp_path, capsys):
    from pathlib import Path

    from harness.cli import main

    cases = str(Path(__file__).resolve().parent.parent / "cases")
    assert main(["run", "--cases-dir", cases, "--cases", "edge-superseded-facts",
                 "--summarizer", "openai:gpt-5@emulator", "--summarizer", "anthropic:claude-sonnet-4-6@emulator",
                 "--record-mode", "all", "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out.replace("\n", " ")
    assert "void (same model)" in printed and "the quality comparison is void" in " ".join(printed.split())
    assert "**Void:**" in (tmp_path / "r" / "comparison.md").read_text()
    runs = [str(p) for p in sorted((tmp_path / "r").iterdir()) if (p / "run.json").exists()]
    assert main(["compare", *runs]) == 0
    assert "void: " in capsys.readouterr().out
