"""`compaction-harness simulate`: the events table, risks, --json, and --sweep across policies."""

import json

import pytest

from harness.cli import main
from harness.results.folder import read_run

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


def _simulated(capsys, case, *options):
    assert main(["simulate", str(case), "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


def test_one_vocabulary_the_aliases_are_set(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    by_alias = _simulated(capsys, case, "--reserve", "400", "--tail-cap", "300", "--mode", "read_write")
    by_setting = _simulated(capsys, case, "--set", "reserve_tokens=400", "--set", "tail_cap_tokens=300",
                            "--set", "mode=read_write")
    by_short_key = _simulated(capsys, case, "--set", "reserve=400", "--set", "tail_cap=300")
    assert by_alias["configuration"] == by_setting["configuration"] == by_short_key["configuration"]
    assert by_alias["configuration"]["reserve_tokens"] == 400
    assert _same_events(by_alias, by_setting)
    # in command-line order, the last value of a setting wins whichever spelling gave it
    assert _simulated(capsys, case, "--reserve", "400", "--set", "reserve_tokens=500")["configuration"][
        "reserve_tokens"] == 500
    assert _simulated(capsys, case, "--set", "reserve_tokens=500", "--reserve", "400")["configuration"][
        "reserve_tokens"] == 400


def _same_events(a, b):
    volatile = ("wall_time_s", "harness_time_s", "model_time_s")
    strip = lambda doc: [{k: v for k, v in e.items() if k not in volatile} for e in doc["events"]]  # noqa: E731
    return strip(a) == strip(b)


@pytest.mark.parametrize("options,message", [
    (["--reserve", "many"], "error: --reserve 'many': reserve_tokens takes an integer"),
    (["--set", "reserve_tokens=many"], "error: --set 'reserve_tokens=many': reserve_tokens takes an integer"),
    (["--set", "colour=3"], "error: --set 'colour=3': expected KEY=VALUE with KEY one of context_window,"),
])
def test_setting_errors_name_the_setting_in_one_line(tmp_path, capsys, options, message):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_the_same_settings_give_the_same_compactions_in_run_and_simulate(tmp_path, capsys):
    case = make_case(tmp_path / "cases", "small")
    settings = ["--reserve", "400", "--set", "tail_cap_tokens=300", "--summary-tokens", "300"]
    simulated = _simulated(capsys, case, "--summarizer", "builtin", *settings)
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "out"), "--json",
                 *settings]) == 0
    capsys.readouterr()
    run = read_run(tmp_path / "out")
    assert run["configuration"]["settings"] == {"reserve_tokens": 400, "tail_cap_tokens": 300, "summary_tokens": 300}
    keys = ("number", "send_index", "head_start", "tail_start", "turns_kept", "summary_tokens")
    ran = [tuple(e[k] for k in keys) for e in run["cases"]["small"]["events"]]
    assert ran and ran == [tuple(e[k] for k in keys) for e in simulated["events"]]
