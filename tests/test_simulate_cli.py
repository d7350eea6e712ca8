"""`compaction-harness simulate`: the events table, risks, --json, and --sweep across policies."""

import json

from harness.cli import main

from test_runner import make_case


def test_json_document_has_configuration_events_and_risks(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["configuration"]["context_window"] == 2000
    assert document["configuration"]["reserve_tokens"] == 400  # the case's [policy] table, as under run
    assert main(["simulate", str(case), "--json", "--reserve", "400", "--tail-cap", "300"]) == 0
    document = json.loads(capsys.readouterr().out)
    event = document["events"][0]
    for field in ("send_index", "tail_start", "turns_kept", "steps_kept", "truncated_to_step", "tokens_before_est",
                  "tokens_before_true", "tokens_after_est", "tokens_after_true", "summary_tokens", "wall_time_s"):
        assert field in event
    assert set(document["risk_counts"]) >= {"estimator_miss", "response_may_be_cut", "summary_request_too_big",
                                            "step_exceeds_window"}


def test_sweep_prints_one_row_per_policy_window_and_reserve(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--sweep", "--json", "--policy", "default", "--policy", "ratio-20",
                 "--windows", "2000,4000", "--reserves", "400,800"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    assert [(r["policy"], r["context_window"], r["reserve_tokens"]) for r in rows] == [
        (p, w, r) for p in ("default", "ratio-20") for w in (2000, 4000) for r in (400, 800)]
    assert main(["simulate", str(case), "--sweep", "--reserves", "4x"]) == 2


def test_human_table_and_the_builtin_summarizer(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--reserve", "400", "--tail-cap", "300", "--summarizer", "builtin"]) == 0
    printed = capsys.readouterr().out
    assert "compaction events" in printed and "risks the policy leaves" in printed
