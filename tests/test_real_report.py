"""The report on real ground (harness.studies.real, `real-report`) and `run --pool`: counts per compaction
point, per kind and for exact values, over the probes the full history passes; the probes each side loses;
the arms run as ordinary runs that `--from-runs` reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.results.folder import read_run
from harness.studies.real import BUILTIN, REAL, arms, real_study

ROOT = Path(__file__).parents[1]


def _probe(pid: str, kind: str, at: str, compacted: bool, full: bool = True, floor: bool = False) -> dict:
    grades = lambda v: {"retained": v, "answered": v}  # noqa: E731
    return {"id": pid, "kind": kind, "at": at, "valid": full, "compactions_before": 1,
            "conditions": {"compacted": grades(compacted), "full": grades(full), "floor": grades(floor)}}


def _run(outcomes: dict[tuple[str, str, str, str], bool], full: dict[str, bool] | None = None) -> dict:
    """A run document holding probes (case, point, id, kind) -> compacted outcome."""
    cases: dict[str, dict] = {}
    for (case, at, pid, kind), passed in outcomes.items():
        record = cases.setdefault(case, {"case": case, "pool": "real", "status": "ok", "probes": []})
        record["probes"].append(_probe(pid, kind, at, passed, full=(full or {}).get(pid, True),
                                       floor=pid == "tail-fact"))
    return {"cases": {f"{c}#0": r for c, r in cases.items()}}


PROBES = [("a", "compaction:1", "goal", "goal"), ("a", "compaction:1", "port", "recall"),
          ("a", "compaction:2", "port2", "update"), ("a", "compaction:2", "tail-fact", "artifact"),
          ("b", "compaction:1", "bad", "recall")]


def test_study_counts_each_point_kind_and_exact_values_over_what_the_full_history_passes():
    real = _run({p: p[2] in ("goal", "port", "tail-fact") for p in PROBES}, full={"bad": False})
    builtin = _run({p: p[2] in ("goal", "port2", "tail-fact") for p in PROBES}, full={"bad": False})
    study = real_study({REAL: real, BUILTIN: builtin})
    retained = study["grades"]["retained"]
    rows = {row["name"]: row for row in retained["points"]}
    assert list(rows) == ["a compaction:1", "a compaction:2", "b compaction:1"]
    assert rows["a compaction:1"] == {"name": "a compaction:1", "probes": 2, "full": 2, "floor": 0,
                                      "arms": {REAL: 2, BUILTIN: 1}, "lost": {REAL: [], BUILTIN: ["port"]}}
    assert rows["a compaction:2"]["floor"] == 1 and rows["a compaction:2"]["lost"] == {REAL: ["port2"], BUILTIN: []}
    # a probe the full history fails counts as a probe, never as one a summary could keep or lose
    assert rows["b compaction:1"]["full"] == 0 and rows["b compaction:1"]["lost"] == {REAL: [], BUILTIN: []}
    assert retained["exact"]["full"] == 2 and retained["exact"]["arms"] == {REAL: 1, BUILTIN: 1}
    kinds = {row["name"]: row["arms"] for row in retained["kinds"]}
    assert kinds == {"artifact": {REAL: 1, BUILTIN: 1}, "goal": {REAL: 1, BUILTIN: 1},
                     "recall": {REAL: 1, BUILTIN: 0}, "update": {REAL: 0, BUILTIN: 1}}
    assert retained["total"]["probes"] == 5 and retained["total"]["arms"] == {REAL: 3, BUILTIN: 3}


def test_study_needs_the_real_summaries():
    with pytest.raises(Exception, match="recorded policy"):
        real_study({BUILTIN: _run({PROBES[0]: True})})


def test_arms_are_the_recorded_policy_the_summarizer_at_recorded_points_and_each_control():
    from harness.compaction.controls import CONTROLS

    chosen = arms()
    assert [a.name for a in chosen] == [REAL, BUILTIN, *CONTROLS]
    assert chosen[0].config.policy == "recorded" and not chosen[0].config.at_recorded_points
    assert all(a.config.at_recorded_points and a.config.recorded_tail == "recorded" for a in chosen[1:])
    assert [a.config.control for a in chosen[1:]] == [None, *CONTROLS]


def test_study_states_each_summarizer_s_margin_over_the_strongest_control():
    many = [("c%d" % (i % 5), "compaction:1", f"p{i}", "recall" if i % 2 else "goal") for i in range(40)]
    real = _run({p: True for p in many})
    builtin = _run({p: int(p[2][1:]) % 4 != 0 for p in many})
    weak = _run({p: int(p[2][1:]) < 4 for p in many})
    strong = _run({p: int(p[2][1:]) % 2 == 0 for p in many})  # passes every goal probe, no recall probe
    study = real_study({REAL: real, BUILTIN: builtin, "empty": weak, "line-picker": strong})
    margins = study["grades"]["retained"]["margins"]
    assert set(margins) == {REAL, BUILTIN}
    overall = margins[REAL]["overall"]
    assert overall["control"] == "line-picker" and (overall["summarizer"], overall["control_passes"]) == (40, 20)
    assert overall["margin"] == 20 and overall["only_summarizer"] == 20 and overall["only_control"] == 0
    assert overall["p_value"] < 1e-5 and overall["separated"] and overall["cluster95"][0] > 0
    # per kind the strongest control there: on goal probes line-picker passes all, so nothing separates them
    assert margins[REAL]["by_kind"]["goal"]["margin"] == 0 and not margins[REAL]["by_kind"]["goal"]["separated"]
    assert margins[REAL]["unseparated_kinds"] == {"goal": ["line-picker"]}
    text = __import__("harness.render.real", fromlist=["markdown_real"]).markdown_real(study)
    assert "Margin of real summary over the strongest control" in text and "goal (line-picker)" in text


def test_study_refuses_arms_with_summaries_over_the_recorded_size_unless_asked():
    real, over = _run({PROBES[0]: True}), _run({PROBES[0]: True})
    over["aggregates"] = {"summary": {"over_budget": 2}}
    with pytest.raises(Exception, match=r"longer than the recorded size in builtin \(2\).*--allow-over-budget"):
        real_study({REAL: real, BUILTIN: over})
    assert real_study({REAL: real, BUILTIN: over}, allow_over_budget=True)["over_budget"] == {BUILTIN: 2}


def test_real_report_runs_the_arms_and_reads_them_back(tmp_path, capsys):
    out = tmp_path / "report"
    args = ["real-report", "--cases-dir", str(ROOT / "cases"), "--cases", "real-agentstuff-22", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    study = json.loads(capsys.readouterr().out)
    assert (out / "report.md").read_text().startswith("# Scores on real ground")
    assert main([*args, "--from-runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == study
    # the real-summary arm is an ordinary recorded run: its counts are that run's compacted outcomes
    run = read_run(out / "recorded")
    probes = [p for record in run["cases"].values() for p in record["probes"]]
    kept = sum(1 for p in probes if p["conditions"]["full"]["retained"] and p["conditions"]["compacted"]["retained"])
    assert study["grades"]["retained"]["total"]["arms"][REAL] == kept
    assert study["grades"]["retained"]["total"]["probes"] == len(probes) == 11


def test_run_pool_selects_the_pool_and_refuses_an_empty_selection(tmp_path, capsys):
    base = ["run", "--cases-dir", str(ROOT / "cases"), "--policy", "recorded", "--json"]
    assert main([*base, "--cases", "real-agentstuff-22", "--cases", "edge-manual-compaction", "--pool", "real",
                 "--out", str(tmp_path / "r")]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document["aggregates"]["by_pool"]) == {"real"}
    assert main([*base, "--cases", "edge-manual-compaction", "--pool", "real", "--out", str(tmp_path / "e")]) == 2
    # run's --pool is the shared one (harness.cli.options): it names the pool and the pools it did find
    assert "--pool real: none of the 1 selected cases is in it (their pools: edge)" in capsys.readouterr().err


def test_each_runtime_stands_beside_the_real_summary_over_the_probes_that_test_the_summary_in_both():
    from harness.render.real import markdown_real
    from harness.studies.real import RUNTIME

    real = _run({p: p[2] in ("goal", "port") for p in PROBES}, full={"bad": False})
    pi = _run({p: p[2] in ("goal", "port2") for p in PROBES}, full={"bad": False, "port": False})
    for run, positions in ((real, [162]), (pi, [150, 300])):
        for record in run["cases"].values():
            record["events"] = [{"send_index": i} for i in positions]
    study = real_study({REAL: real, f"{RUNTIME}pi": pi})
    row, = study["grades"]["retained"]["side_by_side"]
    # goal and port2 test the summary in both runs (port fails on pi's full history at its own point; tail-fact
    # passes on the floor; bad on neither full history)
    assert row == {"arm": "runtime pi", "probes": 2, "real": 1, "arm_passes": 2, "only_real": 0, "only_arm": 1,
                   "p_value": 1.0}
    assert study["compactions"] == {"a": {REAL: [162], "runtime pi": [150, 300]},
                                    "b": {REAL: [162], "runtime pi": [150, 300]}}
    text = markdown_real(study)
    assert "| runtime pi | 2 | 1/2 (50%) | 2/2 (100%) | 0 / 1 | 1 |" in text
    assert "| a | 162 | 150, 300 |" in text


def test_a_runtime_arm_is_driven_with_its_window_at_the_recorded_point():
    chosen = {arm.name: arm for arm in arms(runtimes=("pi", "codex"))}
    assert chosen["runtime pi"].config.runtime == "pi" and chosen["runtime pi"].config.runtime_window_recorded
    assert chosen["runtime codex"].config.policy == "recorded" and chosen["runtime codex"].slug == "runtime-codex"


def test_a_runtimes_margin_is_over_the_probes_its_own_tail_does_not_answer():
    from harness.studies.real import RUNTIME

    keys = [p for p in PROBES if p[2] != "bad"]
    real = _run({p: True for p in keys})
    pi = _run({p: True for p in keys})
    for record in pi["cases"].values():  # pi's kept tail answers `goal` with no summary at all
        for probe in record["probes"]:
            if probe["id"] == "goal":
                probe["conditions"]["floor"] = {"retained": True, "answered": True}
    control = _run({p: False for p in keys})
    study = real_study({REAL: real, f"{RUNTIME}pi": pi, "empty": control})
    margins = study["grades"]["retained"]["margins"]
    assert margins[REAL]["overall"]["probes"] == 4  # every probe the full history passes
    assert margins[f"{RUNTIME}pi"]["overall"]["probes"] == 2  # less goal (its floor) and tail-fact (every floor)
