"""The same-model verdict on small cases: builtin, and the emulator recording its own cassettes."""

import json

import pytest

from harness.cases import discover
from harness.cli import main
from harness.studies.verdict import default_plan, verdict_sentence

SMALL = ["edge-32k-window", "desktop-cli-dry-run"]


def test_builtin_verdict_and_outputs(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(["validate-summarizer", "--model", "builtin", "--alt-model", "builtin", "--out", str(out),
                 *(a for case in SMALL for a in ("--cases", case))]) == 0
    printed = capsys.readouterr().out
    assert "The data supports the same-model summarizer (builtin)" in printed
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["quality"]["difference"] == 0 and verdict["quality"]["p_value"] == 1
    assert (out / "same" / "run.json").exists() and (out / "alt" / "run.json").exists()
    assert (out / "retention.png").read_bytes()[:4] == b"\x89PNG"
    assert "![retention](retention.png)" in (out / "verdict.md").read_text()


def test_emulator_records_then_replays(tmp_path):
    from harness.render.verdict import write_verdict
    from harness.studies.verdict import validate_summarizer

    cases = discover("cases", SMALL[:1])
    first = write_verdict(validate_summarizer(cases, "openai:gpt-5@emulator", "openai:gpt-5-mini@emulator",
                                              tmp_path / "v"))
    assert first["record_mode"] == "new"
    assert (tmp_path / "v" / "cassettes" / SMALL[0]).is_dir()
    # two @emulator specs are the same builtin model: the quality half is void and the verdict says so
    assert first["verdict"].startswith("Quality cannot decide: no quality evidence either way (openai:gpt-5@emulator")
    assert "supports" not in first["verdict"]
    assert "cache hit rate" in first["verdict"]
    cost = first["cost"]
    assert cost["same_usd_per_compaction"] > cost["alt_usd_per_compaction"]  # gpt-5-mini at 1/5 the price
    assert (tmp_path / "v" / "cost_by_shape.png").exists()
    again = write_verdict(validate_summarizer(cases, "openai:gpt-5@emulator", "openai:gpt-5-mini@emulator",
                                              tmp_path / "v2", record_mode="none",
                                              cassettes=str(tmp_path / "v" / "cassettes")), plots=False)
    assert not (tmp_path / "v2" / "retention.png").exists() and (tmp_path / "v2" / "verdict.md").exists()
    assert again["quality"] == first["quality"]
    assert again["measured_cost"]["same"]["sources"] == ["recorded"]


def _q(significant, difference, p=0.5):
    return {"significant": significant, "difference": difference, "p_value": p, "grade": "answered",
            "shared_probes": 40}


def _c(same, alt, flip, hit=0.95):
    return {"compactions": 4, "same_usd": same, "alt_usd": alt, "same_usd_per_compaction": same / 4,
            "alt_usd_per_compaction": alt / 4, "cache_hit_rate": hit, "flip_hit_rate": flip, "source": "modelled"}


@pytest.mark.parametrize("q,c,supports,flip", [
    (_q(False, 0.0), _c(1.0, 2.0, 0.6), "same-model", "flips at a 60% cache hit rate"),
    (_q(False, 0.0), _c(2.0, 1.0, 1.4), "cheaper summarizer", "stays cheaper at any cache hit rate"),
    (_q(True, -0.2, 0.01), _c(2.0, 1.0, 1.4), "same-model", "loses 20.0 points"),
    (_q(True, 0.1, 0.01), _c(1.0, 2.0, -0.1), "cheaper summarizer", "same model stays cheaper at any"),
])
def test_verdict_sentence(q, c, supports, flip):
    sentence = verdict_sentence("M", "A", q, c)
    assert sentence.count(". ") == 0 and sentence.endswith(".")
    assert f"supports the {supports}" in sentence
    assert flip in sentence


def test_default_plan(tmp_path):
    assert default_plan("builtin", "builtin", tmp_path, None, None).record_mode == "none"
    plan = default_plan("openai:gpt-5", "openai:gpt-5-mini", tmp_path, None, None)
    assert (plan.record_mode, plan.cassettes) == ("new", str(tmp_path / "cassettes"))
