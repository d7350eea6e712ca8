"""Two releases of one runtime side by side (studies/releases.py): what a run keeps of its runtime (version,
where it compacted, what it kept, its summarization prompt), and what gate and compare report across a version
change: exit 3 for the change itself; with --allow-config-change the probes lost and gained and the prompt diff."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.render.releases import markdown
from harness.studies import releases
from harness.studies.compare import comparison
from harness.studies.gate import CONFIGURATION_CHANGED_EXIT, ConfigurationChanged, Thresholds, gate, make_baseline

OLD_PROMPT = {"system": "You are a context summarization assistant.",
              "instruction": "Create a structured context checkpoint summary.\n## Goal\n## Progress\n## Next Steps"}
NEW_PROMPT = {"system": "You are a context summarization assistant.",
              "instruction": "Create a structured context checkpoint summary.\n## Goal\n## Constraints\n## Progress"}


def runtime_run(version: str, passes: list[bool], positions: list[int], prompt: dict) -> dict:
    """A run.json of pi at `version` on one case: each probe tests the summary; the drive compacted before
    `positions`."""
    probes = [{"id": f"p{i}", "kind": "recall", "valid": True, "compactions_before": 1,
               "conditions": {"compacted": {"answered": ok}, "full": {"answered": True}, "floor": {"answered": False}}}
              for i, ok in enumerate(passes)]
    compactions = [{"position": p, "mid_turn": False, "kept_ahead": 1, "covers": p - 10} for p in positions]
    driven = {"runtime": "pi", "version": version, "compactions": compactions, "compaction_prompt": prompt}
    config = {"policy": "recorded", "model": "builtin", "summarizer_spec": "builtin", "answerer": "builtin",
              "judge": None, "record_mode": None, "runtime": f"pi@{version}"}
    return {"run_id": f"pi-{version}", "configuration": config,
            "cases": {"c": {"case": "c", "pool": "edge", "status": "ok", "probes": probes, "runtime": driven}},
            "aggregates": {"grade": "answered", "overall": {"answered": {"compacted": {}, "full": {}, "floor": {},
                                                                        "normalised_retention": None}},
                           "by_kind": {}, "by_pool": {}, "compactions": {"c": len(positions)},
                           "summary": {"mean_tokens": 10}}}


OLD = runtime_run("0.73.1", [True, True, False], [87, 105], OLD_PROMPT)
NEW = runtime_run("0.72.1", [True, False, True], [90], NEW_PROMPT)


def test_a_runtime_run_keeps_its_profile_in_the_baseline():
    baseline = make_baseline(OLD)
    assert baseline["runtime"]["runtime"] == "pi@0.73.1"
    assert baseline["runtime"]["cases"]["c"] == {
        "version": "0.73.1", "compacts_before": [87, 105], "mid_turn": [False, False],
        "kept": [{"ahead": 1, "tail_from": 77}, {"ahead": 1, "tail_from": 95}], "prompt": OLD_PROMPT}
    assert releases.profile({"configuration": {"runtime": None}}) is None


def test_gate_exits_3_for_the_version_change():
    with pytest.raises(ConfigurationChanged, match="runtime: baseline pi@0.73.1, run pi@0.72.1") as err:
        gate(NEW, make_baseline(OLD), Thresholds())
    assert CONFIGURATION_CHANGED_EXIT == 3 and isinstance(err.value, HarnessError)


def test_gate_across_the_change_lists_lost_and_gained_probes_and_the_prompt_diff():
    verdict = gate(NEW, make_baseline(OLD), Thresholds(), allow_config_change=True)
    change = verdict.release
    assert change["runtime"] == {"before": "pi@0.73.1", "after": "pi@0.72.1"}
    assert (change["lost"], change["gained"]) == (["c/p1"], ["c/p2"])
    found = change["cases"]["c"]
    assert found["compacts_before"] == {"before": [87, 105], "after": [90]}
    assert "+## Constraints" in found["prompt_diff"] and "-## Next Steps" in found["prompt_diff"]
    assert not any(line.startswith(("-You are", "+You are")) for line in found["prompt_diff"])  # system unchanged
    text = "\n".join(markdown(change))
    assert "pi@0.73.1 -> pi@0.72.1" in text and "probes lost: `c/p1`" in text and "probes gained: `c/p2`" in text
    assert "compacts before 87, 105 -> 90" in text and "```diff" in text
    assert verdict.to_json()["release"] == change


def test_gate_of_the_same_release_reports_no_release_change():
    assert gate(OLD, make_baseline(OLD), Thresholds()).release is None


def test_compare_reports_two_releases_of_one_runtime():
    result = comparison([OLD, NEW])
    [change] = result["releases"]
    assert (change["lost"], change["gained"]) == (["c/p1"], ["c/p2"])
    assert change["cases"]["c"]["prompt_diff"]
    assert releases.prompt_diff(OLD_PROMPT, OLD_PROMPT) == []
