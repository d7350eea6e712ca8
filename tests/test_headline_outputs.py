"""The headline over summary-testing probes leads every output: the terminal summary, report.md, compare and
the gate (issue 13). Real builtin runs on small cases for the run outputs, hand-made run documents for the
pairwise statistics."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from harness.cli import main
from harness.render.compare import markdown as compare_markdown
from harness.render.gate import headline_text, junit_xml, markdown as gate_markdown
from harness.render.run import write_markdown
from harness.render.terminal import render_summary
from harness.results.folder import read_run
from harness.studies.compare import comparison
from harness.studies.gate import Thresholds, gate, make_baseline

from test_gate import ERROR_PROBES, ERROR_SESSION
from test_runner import make_case


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory):
    """Two cases that compact and one whose window holds the whole session (it never compacts)."""
    root = tmp_path_factory.mktemp("headline")
    for name in ("one", "two"):
        make_case(root / "cases", name, session=ERROR_SESSION, probes=ERROR_PROBES)
    make_case(root / "cases", "whole", session=ERROR_SESSION, probes=ERROR_PROBES, window=200_000)
    # a wide answerer keeps the whole history as the ceiling (these cases test the headline, not the oracle)
    assert main(["run", "--cases-dir", str(root / "cases"), "--out", str(root / "run"), "--json",
                 "--answerer-window", "1000000"]) == 0
    return read_run(root / "run")


def summary_text(run: dict) -> str:
    out = io.StringIO()
    render_summary(run, Console(file=out, width=1000, highlight=False))
    return out.getvalue()


def test_the_terminal_summary_leads_with_the_headline_and_lists_the_groups(builtin_run, capsys):
    capsys.readouterr()
    lines = summary_text(builtin_run).splitlines()
    h = builtin_run["aggregates"]["headline"]["answered"]["tests_summary"]
    assert h["cases"] == 2  # the case that never compacts is not averaged in
    assert lines[1].startswith(f"answered: compacted {100 * h['rate']:.1f}% [")
    assert "[clustered " in lines[1] and f"({h['passed']}/{h['total']}) over {h['total']} summary-testing probes " \
                                          f"in 2 cases; retained: compacted" in lines[1]
    assert lines[2].startswith("beside it (not in the headline): floor already answers ")
    assert "no compaction before 2, unreached points 0, invalid 0" in lines[2]
    text = "\n".join(lines)
    kinds = builtin_run["aggregates"]["headline"]["answered"]["by_kind"]
    kind, rate = next(iter(kinds.items()))
    assert f"by kind, summary-testing probes (answered, compacted): {kind} " in text
    assert f"({rate['passed']}/{rate['total']})" in text
    assert "never compact (1 cases, not averaged in): the context stayed whole in 1 (named in report.md)" in text
    assert "retained agrees with answered on " in text
    assert text.index("summary-testing probes") < text.index("all valid probes, answered: compacted ")


def test_report_md_lists_invalid_probes_the_disagreements_and_judged_means(builtin_run, tmp_path):
    run = json.loads(json.dumps(builtin_run))
    agg = run["aggregates"]
    agg["headline"]["answered"]["invalid"] = {"one/never": "probe point never reached"}
    agg["agreement"]["disagreements"] = [{"probe": "one/pm", "kind": "constraint", "answered": True,
                                          "retained": False}]
    agg["judged"] = {"valid": {"compacted": 4.0, "full": 5.0, "floor": 2.0},
                     "tests_summary": {"compacted": 3.5, "full": 5.0, "floor": 0.5}, "errors": 1}
    write_markdown(run, tmp_path / "report.md")
    report = (tmp_path / "report.md").read_text()
    body = report.split("\n\n")
    assert body[2].startswith("**answered: compacted ") and "summary-testing probes in 2 cases" in body[2]
    assert body[3].startswith("beside it (not in the headline): floor already answers")
    assert "| kind | n | compacted [Wilson] [clustered] |" in report
    assert "- whole: no compaction; context stayed whole" in report
    assert "- one/never: probe point never reached" in report
    assert "| one/pm | constraint | pass | fail |" in report
    assert "| summary-testing | 3.50 | 5.00 | 0.50 |" in report and "1 judge errors" in report
    assert report.index("### Pass rate (all valid probes)") > report.index("### By kind (summary-testing")
    terminal = summary_text(run)
    assert "judged (mean 0-5): summary-testing probes compacted 3.50, full 5.00, floor 0.50" in terminal


def test_a_case_whose_context_did_not_stay_whole_says_so(builtin_run, tmp_path):
    run = json.loads(json.dumps(builtin_run))
    run["aggregates"]["never_compacted"]["whole"]["context_whole"] = False
    assert "never compact (1 cases, not averaged in): the context did NOT stay whole in whole" in summary_text(run)
    write_markdown(run, tmp_path / "report.md")
    assert "- whole: no compaction; the context did NOT stay whole" in (tmp_path / "report.md").read_text()


def test_a_run_without_a_headline_still_renders(builtin_run, tmp_path):
    run = json.loads(json.dumps(builtin_run))
    for key in ("headline", "agreement", "judged", "never_compacted"):
        run["aggregates"].pop(key)
    assert "all valid probes, answered: compacted " in summary_text(run)
    write_markdown(run, tmp_path / "report.md")
    figures = (tmp_path / "report.md").read_text().split("### Definitions")[0]  # the definitions name every term
    assert "summary-testing" not in figures


# ---------------------------------------------------------------------------------------------
# hand-made run documents for compare and the gate


def probe(pid: str, compacted: bool, tests_summary: bool = True, judged: float | None = None) -> dict:
    """A probe that tests the summary (or, with tests_summary false, one the floor already answers)."""
    conditions = {"compacted": {"answered": compacted}, "full": {"answered": True},
                  "floor": {"answered": not tests_summary}}
    if judged is not None:
        conditions["compacted"]["judged"] = judged
    return {"id": pid, "kind": "recall", "valid": True, "compactions_before": 1, "conditions": conditions}


def document(cases: dict[str, list[dict]], model: str = "builtin", record_mode: str = "none",
             judged: bool = False) -> dict:
    """A run document with what compare and gate read; the aggregates' headline is left out, so it is
    computed from the cases as for a run written before aggregates carried one."""
    rate = {"passed": 0, "total": 0, "rate": None, "wilson95": None}
    aggregates = {"grade": "answered", "overall": {"answered": {"compacted": rate, "full": rate, "floor": rate,
                                                                "normalised_retention": None}},
                  "by_kind": {}, "by_pool": {}, "compactions": {c: 1 for c in cases},
                  "summary": {"mean_tokens": 100}, "cost": {}, "latency": {}}
    if judged:
        aggregates["judged"] = {"valid": {"compacted": 4.0}, "tests_summary": {"compacted": 3.0}, "errors": 0}
    return {"run_id": f"r-{model}", "label": None,
            "configuration": {"policy": "default", "model": model, "summarizer_spec": model, "answerer": model,
                              "judge": None, "record_mode": record_mode, "cache": True},
            "cases": {c: {"case": c, "pool": "edge", "status": "ok", "probes": probes} for c, probes in cases.items()},
            "aggregates": aggregates}


def spread(passes_per_case: list[list[bool]], **kwargs) -> dict:
    return document({f"c{i}": [probe(f"p{j}", ok) for j, ok in enumerate(case)]
                     for i, case in enumerate(passes_per_case)}, **kwargs)


def test_compare_leads_with_each_headline_and_pairs_only_probes_testing_the_summary_in_both():
    a = document({"c0": [probe("p0", True), probe("p1", True), probe("floor", True, tests_summary=False)],
                  "c1": [probe("p0", True), probe("p1", True)]}, judged=True)
    b = document({"c0": [probe("p0", False), probe("p1", True), probe("floor", False, tests_summary=False)],
                  "c1": [probe("p0", False), probe("p1", False, tests_summary=False)]})
    result = comparison([a, b])
    pair = result["pairs"][0]
    # c1/p1 tests the summary only in a, c0/floor in neither: 3 shared summary-testing probes, 2 lost
    assert (pair["shared_probes"], pair["cases"], pair["only_a"], pair["only_b"]) == (3, 2, 2, 0)
    assert pair["difference"] == pytest.approx(-2 / 3, abs=1e-4) and pair["cluster95"] is not None
    assert result["runs"][0]["headline"]["tests_summary"]["total"] == 4
    text = compare_markdown(result)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[2].startswith("| headline: compacted, summary-testing probes | 100.0% [51-100] [clustered 100-100] "
                              "(4/4) over 4 summary-testing probes in 2 cases |")
    assert "| judged mean 0-5, summary-testing (compacted) | 3.00 | - |" in text
    assert "b - a [95% by case]" in text


def test_the_gate_leads_with_the_headline_and_still_fails_on_a_lost_floor_answered_probe():
    before = document({"c0": [probe("p0", True), probe("floor", True, tests_summary=False)]})
    now = document({"c0": [probe("p0", True), probe("floor", False, tests_summary=False)]}, judged=True)
    verdict = gate(now, make_baseline(before), Thresholds())
    assert verdict.headline["pairs"] == 1 and verdict.headline["b"]["rate"] == 1.0
    assert verdict.regressions == ["c0/floor"] and verdict.exit_code == 1  # lost anywhere: fails
    lead = headline_text(verdict)
    assert lead.startswith("headline (answered, compacted, 1 probes that test the summary in both runs, 1 case): "
                           "100.0% [21-100] (1/1) -> 100.0% [21-100] (1/1)")
    md = gate_markdown(verdict, "r", "baseline.json")
    assert md.split("\n\n")[1] == f"**{lead}**"
    assert "judged mean 0-5 (compacted, summary-testing probes): - -> 3.00" in md
    properties = {p.get("name"): p.get("value") for p in ET.fromstring(junit_xml(verdict, "r")).iter("property")}
    assert properties["headline"] == lead and properties["headline_now_rate"] == "1.0"


def test_an_old_baseline_without_summary_testing_probes_uses_the_runs_own():
    run = spread([[True, True]])
    baseline = make_baseline(run)
    assert baseline["tests_summary"] == ["c0/p0", "c0/p1"]
    del baseline["tests_summary"]
    verdict = gate(run, baseline, Thresholds())
    assert verdict.testing_in == "now" and verdict.headline["pairs"] == 2
    assert "test the summary in this run (the baseline predates" in headline_text(verdict)


def test_a_live_drop_must_also_clear_the_case_clustered_interval():
    live = {"model": "openai:gpt-5", "record_mode": "new"}
    baseline = make_baseline(spread([[True] * 10] * 4, **live))
    # ten probes lost, all in one case: McNemar p = 0.002, but resampling cases often leaves that case out
    one_case = gate(spread([[False] * 10] + [[True] * 10] * 3, **live), baseline, Thresholds())
    assert one_case.headline["p_value"] < 0.01 and one_case.headline["cluster95"][1] == 0.0
    assert not one_case.failures and one_case.exit_code == 0
    # twelve lost, three in every case: a drop every case shows
    every_case = gate(spread([[False] * 3 + [True] * 7] * 4, **live), baseline, Thresholds())
    assert every_case.headline["cluster95"][1] < 0 and every_case.exit_code == 1
    assert "case-clustered 95%" in every_case.failures[0] and "McNemar" in every_case.failures[0]


def test_the_ceiling_line_counts_unreached_points_apart_from_invalid_probes():
    from harness.render.headline import ceiling

    agg = {"probes": 10, "valid_probes": 6, "unreached_probes": 3}
    assert ceiling(agg) == ("the full history passes 6/10 (60.0%), 3 are at points the replay never reached "
                            "(not graded), the rest are invalid")
    assert ceiling({"probes": 10, "valid_probes": 6}).endswith("6/10 (60.0%), the rest are invalid")
    assert ceiling({"probes": 4, "valid_probes": 1, "unreached_probes": 3}).endswith(
        "3 are at points the replay never reached (not graded)")
