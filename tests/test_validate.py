"""The same-model verdict on small cases: builtin, and the emulator recording its own cassettes."""

import json
import re

import pytest

from harness.cases import discover
from harness.cli import main
from harness.studies.verdict import decide, default_plan, figures, sentence_of

SMALL = ["edge-32k-window", "desktop-cli-dry-run"]


def test_builtin_verdict_and_outputs(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(["validate-summarizer", "--model", "builtin", "--alt-model", "builtin", "--out", str(out),
                 *(a for case in SMALL for a in ("--cases", case))]) == 0
    printed = capsys.readouterr().out
    # builtin is free and no quality difference separates it from itself: keep the same model, on nothing
    assert "Nothing separates them, so keep the same-model summarizer (builtin)" in printed
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["quality"]["difference"] == 0 and verdict["quality"]["p_value"] == 1
    # the figures beside the sentence are in the JSON too, each with its source, and printed as lines
    assert verdict["figures"]["quality"]["source"] == "live runs"
    assert all(f["label"] in " ".join(printed.split()) for f in verdict["figures"].values())
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
    assert "per compaction in the cost study (modelled, warm cache)" in first["verdict"]
    assert_quotes_only_shown(first)
    cost = first["cost"]
    assert cost["same_usd_per_compaction"] > cost["alt_usd_per_compaction"]  # gpt-5-mini at 1/5 the price
    assert (tmp_path / "v" / "cost_by_shape.png").exists()
    again = write_verdict(validate_summarizer(cases, "openai:gpt-5@emulator", "openai:gpt-5-mini@emulator",
                                              tmp_path / "v2", record_mode="none",
                                              cassettes=str(tmp_path / "v" / "cassettes")), plots=False)
    assert not (tmp_path / "v2" / "retention.png").exists() and (tmp_path / "v2" / "verdict.md").exists()
    # the same quality, now resting on recorded summaries (the first run wrote them live)
    assert {**again["quality"], "source": "live (emulator)"} == first["quality"] and again["quality"]["source"] == "recorded"
    assert "(recorded runs)" in "\n".join(f.line("alt") for f in figures(again).values())
    assert again["measured_cost"]["same"]["sources"] == ["recorded"]


def _q(significant, difference, p=0.5):
    rate = {"rate": 0.5, "passed": 20, "total": 40}
    return {"significant": significant, "difference": difference, "p_value": p, "grade": "answered",
            "shared_probes": 40, "ci95": [difference - 0.05, difference + 0.05], "only_same": 3, "only_alt": 1,
            "rates": {"summarizer same": rate, "summarizer A": {**rate, "rate": 0.5 + difference,
                                                               "passed": int(20 + 40 * difference)}},
            "source": "recorded", "void": None}


def _c(same, alt, flip, hit=0.95):
    return {"compactions": 4, "same_usd": same, "alt_usd": alt, "same_usd_per_compaction": same / 4,
            "alt_usd_per_compaction": alt / 4, "cache_hit_rate": hit, "flip_hit_rate": flip, "source": "modelled",
            "control": None}


def _measured(same, alt, source="recorded"):
    return {name: {"totals": {"usd": usd, "per_compaction_usd": usd / 4, "cache_hit_rate": 0.0}, "sources": [source]}
            for name, usd in (("same", same), ("alt", alt))}


def _result(q, c, measured):
    return {"model": "M", "alt_model": "A", "quality": q, "cost": c, "measured_cost": measured,
            "decision": decide(q, c).to_json()}


_FIGURE = re.compile(r"\$\d+\.\d+|\d+(?:\.\d+)?%|p[=<]\d[\d.e-]*\d|p=\d|\d+\.\d+ points|\d+ probes")


def assert_quotes_only_shown(result):
    """Every figure in the sentence is one printed beside it (sign aside: `loses 20.0 points` is -20.0)."""
    shown = "\n".join(f.line(result["alt_model"]) for f in figures(result).values())
    quoted = _FIGURE.findall(result["verdict"] if "verdict" in result else sentence_of(result))
    assert quoted and [x for x in quoted if x not in shown] == []


@pytest.mark.parametrize("q,c,supports,flip", [
    (_q(False, 0.0), _c(1.0, 2.0, 0.6), "same-model summarizer (M) on cost", "flips at 60.0% cache hit"),
    (_q(False, 0.0), _c(2.0, 1.0, 1.4), "cheaper summarizer A on cost", "stays cheaper at any cache hit rate"),
    (_q(True, -0.2, 0.01), _c(2.0, 1.0, 1.4), "same-model summarizer (M) on quality", "A loses 20.0 points"),
    (_q(True, 0.1, 0.01), _c(1.0, 2.0, -0.1), "cheaper summarizer A on quality", "same model stays cheaper at any"),
])
def test_verdict_sentence(q, c, supports, flip):
    result = _result(q, c, _measured(c["same_usd"], c["alt_usd"]))
    sentence = sentence_of(result)
    assert sentence.count(". ") == 0 and sentence.endswith(".")
    assert f"supports the {supports}" in sentence
    assert flip in sentence
    assert "recorded runs" in sentence and "cost study (modelled, warm cache)" in sentence  # each half's data
    assert_quotes_only_shown(result)


def test_sentence_names_the_measured_cost_when_it_reverses_the_study():
    """The issue's case: the modelled study (warm cache) has the same model cheaper, the runs' own cold-cache
    calls the alternative; the sentence says which is which and quotes both as printed."""
    result = _result(_q(False, 0.0), _c(0.0744 * 4, 0.1297 * 4, 0.8, hit=1.0), _measured(0.476 * 4, 0.159 * 4))
    sentence = sentence_of(result)
    assert "the same model costs $0.07440 at 100.0% cache hit against $0.12970 for A per compaction in the cost study (modelled" in sentence
    assert "these runs' own calls (recorded, cold cache) order them the other way, $0.47600" in sentence
    assert_quotes_only_shown(result)
    same_order = _result(_q(False, 0.0), _c(1.0, 2.0, 0.8), _measured(1.0, 2.0))
    assert "other way" not in sentence_of(same_order)


def test_default_plan(tmp_path):
    assert default_plan("builtin", "builtin", tmp_path, None, None).record_mode == "none"
    plan = default_plan("openai:gpt-5", "openai:gpt-5-mini", tmp_path, None, None)
    assert (plan.record_mode, plan.cassettes) == ("new", str(tmp_path / "cassettes"))


def test_the_sentence_formats_as_the_renderer_does():
    from harness.render import format as render_format
    from harness.studies import verdict

    for value in (None, 0.0, 0.0744, 0.12345678, 1.0, 0.999):
        assert verdict.percent(value) == render_format.percent(value)
        assert verdict.dollars(value) == render_format.dollars(value)
