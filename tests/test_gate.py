"""Gating, comparing, sharding and merging on small hand-made cases with the builtin model."""

import json
import xml.etree.ElementTree as ET

import pytest

from harness.cli import main
from harness.results.folder import read_run, strip_volatile

from test_runner import SESSION, make_case

ERROR_SESSION = SESSION[:3] + [
    {"role": "tool", "tool_call_id": "c1", "content": "Traceback (most recent call last):\n"
     "  File \"src/server/config.ts\", line 3\nTypeError: Cannot read properties of undefined (reading 'port')\n"
     + "// filler line\n" * 400, "is_error": True},
] + SESSION[4:]

ERROR_PROBES = """
[[probe]]
id = "the-error"
kind = "error"
question = "What TypeError did reading the config raise?"
all = ["Cannot read properties of undefined (reading 'port')"]
planted_at = 2

[[probe]]
id = "pm"
kind = "constraint"
question = "What did the user say to use instead of npm?"
all = ["pnpm"]
planted_at = 0
"""

NO_ERRORS = "Goal,Constraints,Progress,Decisions,Files,Next steps"


@pytest.fixture
def cases(tmp_path):
    root = tmp_path / "cases"
    for name in ("one", "two", "three"):
        make_case(root, name, session=ERROR_SESSION, probes=ERROR_PROBES)
    return root


def run(cases, out, *extra):
    # These cases test gating: a wide answerer keeps the whole history as the ceiling (not the oracle).
    assert main(["run", "--cases-dir", str(cases), "--out", str(out), "--json", "--answerer-window", "1000000",
                 *extra]) == 0
    return out


def test_a_summarizer_that_drops_a_section_fails_the_gate_and_names_the_lost_probes(cases, tmp_path, capsys):
    base = run(cases, tmp_path / "base")
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(base), "--baseline", str(baseline), "--update-baseline"]) == 0
    assert main(["gate", str(run(cases, tmp_path / "same")), "--baseline", str(baseline)]) == 0
    capsys.readouterr()
    broken = run(cases, tmp_path / "broken", "--sections", NO_ERRORS)
    capsys.readouterr()
    junit = tmp_path / "junit.xml"
    md = tmp_path / "gate.md"
    assert main(["gate", str(broken), "--baseline", str(baseline), "--junit", str(junit),
                 "--markdown", str(md), "--allow-config-change"]) == 1
    printed = capsys.readouterr().out
    assert "configuration changed since the baseline (--allow-config-change): sections: baseline unset" in printed
    for case in ("one", "two", "three"):
        assert f"{case}/the-error" in printed
    assert "pm" not in printed.replace("pmatch", "")  # the constraint survives in the tail: not lost
    suite = ET.parse(junit).getroot()
    assert len(suite.findall("testcase")) == 6  # one per probe
    failed = {c.get("classname") + "/" + c.get("name") for c in suite.findall("testcase") if c.find("failure") is not None}
    assert failed == {"one/the-error", "two/the-error", "three/the-error"}
    assert "FAIL" in md.read_text() and "`one/the-error`" in md.read_text()


def test_thresholds_fail_a_run_when_set_above_it(cases, tmp_path):
    # the run gated against its own baseline (no regression), so only the thresholds can fail it
    broken = run(cases, tmp_path / "broken", "--sections", NO_ERRORS)
    baseline = tmp_path / "baseline.json"
    main(["gate", str(broken), "--baseline", str(baseline), "--update-baseline"])
    assert main(["gate", str(broken), "--baseline", str(baseline), "--min-pass-rate", "0.1"]) == 0
    assert main(["gate", str(broken), "--baseline", str(baseline), "--min-pass-rate", "1.0"]) == 1
    assert main(["gate", str(broken), "--baseline", str(baseline), "--min-pass-rate", "error=1.0"]) == 1
    assert main(["gate", str(broken), "--baseline", str(baseline), "--min-pass-rate", "recall=0.5"]) == 2


@pytest.mark.parametrize("option", [["--min-pass-rate", "2"], ["--min-pass-rate", "error=1.01"],
                                    ["--max-drop", "-1"], ["--alpha", "5"], ["--alpha", "0"],
                                    ["--min-effect", "nan"]])
def test_out_of_range_thresholds_are_usage_errors(cases, tmp_path, option, capsys):
    base = run(cases, tmp_path / "base")
    baseline = tmp_path / "baseline.json"
    main(["gate", str(base), "--baseline", str(baseline), "--update-baseline"])
    capsys.readouterr()
    try:  # argparse's own range checks exit 2 through SystemExit; --min-pass-rate's return 2
        code = main(["gate", str(base), "--baseline", str(baseline), *option])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and option[0] in err and "Traceback" not in err


def test_bad_or_mismatched_baselines_exit_2_with_one_line(cases, tmp_path, capsys):
    base = run(cases, tmp_path / "base")
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["gate", str(base), "--baseline", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    bad.write_text(json.dumps({"kind": "compaction-harness-baseline", "schema_version": 99}))
    assert main(["gate", str(base), "--baseline", str(bad)]) == 2
    assert "written by results format version 99; this is version" in capsys.readouterr().err
    baseline = tmp_path / "baseline.json"
    main(["gate", str(base), "--baseline", str(baseline), "--update-baseline"])
    other = run(cases, tmp_path / "other", "--cases", "one")
    capsys.readouterr()
    assert main(["gate", str(other), "--baseline", str(baseline)]) == 2
    err = capsys.readouterr().err.strip()
    assert "made from other cases" in err and len(err.splitlines()) == 1


def test_three_shards_merge_into_the_unsharded_run(cases, tmp_path):
    whole = read_run(run(cases, tmp_path / "whole"))
    shards = [run(cases, tmp_path / f"s{i}", "--shard", f"{i}/3") for i in (1, 2, 3)]
    assert sorted(len(read_run(s)["cases"]) for s in shards) == [1, 1, 1]
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged")]) == 0
    merged = read_run(tmp_path / "merged")
    assert strip_volatile(merged) == strip_volatile(whole)
    baseline = tmp_path / "baseline.json"
    main(["gate", str(tmp_path / "whole"), "--baseline", str(baseline), "--update-baseline"])
    assert main(["gate", str(tmp_path / "merged"), "--baseline", str(baseline)]) == 0


def test_merge_refuses_overlapping_or_foreign_shards(cases, tmp_path, capsys):
    a = run(cases, tmp_path / "a", "--shard", "1/2")
    other = run(cases, tmp_path / "b", "--shard", "2/2", "--set", "tail_turns=2")
    capsys.readouterr()
    assert main(["merge", str(a), str(a), "--out", str(tmp_path / "m1")]) == 2
    assert "shards overlap" in capsys.readouterr().err
    assert main(["merge", str(a), str(other), "--out", str(tmp_path / "m2")]) == 2
    assert "configuration differs" in capsys.readouterr().err
    assert main(["run", "--cases-dir", str(cases), "--out", str(tmp_path / "x"), "--shard", "4/3"]) == 2


def test_compare_prints_the_table_and_the_significance(cases, tmp_path, capsys):
    base = run(cases, tmp_path / "base")
    broken = run(cases, tmp_path / "broken", "--sections", NO_ERRORS)
    capsys.readouterr()
    md = tmp_path / "compare.md"
    assert main(["compare", str(base), str(broken), "--markdown", str(md)]) == 0
    printed = capsys.readouterr().out
    assert "pass rate" in printed and "McNemar p" in printed
    assert main(["compare", str(base), str(broken), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    pair = result["pairs"][0]
    assert (pair["shared_probes"], pair["only_a"], pair["only_b"]) == (6, 3, 0)
    assert pair["p_value"] == 0.25  # exact McNemar: 2 * (1/2)^3
    assert "| pass rate, all valid probes |" in md.read_text()
    assert md.read_text().index("| headline: compacted") < md.read_text().index("| pass rate, all valid")


def test_several_configurations_write_one_run_each_and_a_comparison(cases, tmp_path, capsys):
    out = tmp_path / "multi"
    assert main(["run", "--cases-dir", str(cases), "--out", str(out), "--policy", "default",
                 "--policy", "truncate", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["runs"]) == 2
    assert (out / "comparison.md").exists() and (out / "comparison.json").exists()
    labels = [r["label"] for r in document["comparison"]["runs"]]
    assert labels == ["default-builtin-same", "truncate-builtin-same"]


def test_repeats_collapse_to_a_majority_and_pair_with_the_baseline(cases, tmp_path):
    baseline = tmp_path / "baseline.json"
    main(["gate", str(run(cases, tmp_path / "base")), "--baseline", str(baseline), "--update-baseline"])
    # the library's repeats (as a live model's): the CLI runs the deterministic builtin once (test_cli_gaps)
    from harness.cases import discover
    from harness.results.folder import RunFolder
    from harness.run.config import RunConfig
    from harness.run.matrix import run_cases

    repeated = tmp_path / "rep"
    # the baseline's configuration (run() widens the answerer), so the config check has nothing to name
    run_cases(discover(cases), RunConfig(answerer_window=1000000), RunFolder(repeated), run_id="rep", repeat=3)
    assert len(read_run(repeated)["cases"]) == 9
    assert main(["gate", str(repeated), "--baseline", str(baseline)]) == 0


def synthetic_run(passes: list[bool], model: str = "openai:gpt-5", record_mode: str = "new") -> dict:
    # each probe tests the summary: a compaction before it, passes on full, fails on the floor
    probes = [{"id": f"p{i}", "kind": "recall", "valid": True, "compactions_before": 1,
               "conditions": {"compacted": {"answered": ok}, "full": {"answered": True}, "floor": {"answered": False}}}
              for i, ok in enumerate(passes)]
    return {"run_id": "live", "configuration": {"model": model, "summarizer_spec": model, "answerer": model,
                                                "judge": None, "record_mode": record_mode},
            "cases": {"c": {"case": "c", "pool": "long", "status": "ok", "probes": probes}},
            "aggregates": {"grade": "answered", "overall": {"answered": {"compacted": {}}}, "by_kind": {}}}


def test_live_runs_fail_only_on_a_significant_drop_above_the_minimum_effect():
    from harness.studies.gate import Thresholds, gate, make_baseline

    baseline = make_baseline(synthetic_run([True] * 40))
    two_lost = gate(synthetic_run([False] * 2 + [True] * 38), baseline, Thresholds(min_effect=0.05))
    assert not two_lost.deterministic and two_lost.regressions == ["c/p0", "c/p1"]
    assert two_lost.exit_code == 0  # McNemar p = 0.5: noise for a live model
    ten_lost = gate(synthetic_run([False] * 10 + [True] * 30), baseline, Thresholds(min_effect=0.05))
    assert ten_lost.stats["p_value"] < 0.01 and ten_lost.exit_code == 1
    assert "McNemar" in ten_lost.failures[0]
    # significant, but smaller than the minimum effect the team cares about
    assert gate(synthetic_run([False] * 10 + [True] * 30), baseline, Thresholds(min_effect=0.3)).exit_code == 0
    # the same two lost probes fail a deterministic (replayed) run
    replayed = gate(synthetic_run([False] * 2 + [True] * 38, record_mode="none"), baseline, Thresholds())
    assert replayed.deterministic and replayed.exit_code == 1
