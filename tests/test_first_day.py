"""The first-day paper cuts of issue 45, each with its test: gate's word for an emulator run, `cost --help`'s
count of request shapes, `runtimes install` on a runtime already at its pin, and `run --runtime` saying that it
grades the default policy beside the runtime."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from test_gate import synthetic_run


@pytest.mark.parametrize("spec", ["openai:gpt-5@emulator", "anthropic:claude-sonnet-4-6@emulator", "builtin"])
def test_gate_calls_a_builtin_or_emulator_run_deterministic_and_fails_it_on_any_lost_probe(spec):
    """The builtin model writes every text behind `@emulator` too: the same run grades the same, so gate treats
    it as `run --repeat` does (deterministic), whatever its record mode."""
    from harness.studies.gate import Thresholds, gate, make_baseline

    baseline = make_baseline(synthetic_run([True] * 40, model=spec))
    verdict = gate(synthetic_run([False] * 2 + [True] * 38, model=spec, record_mode="new"), baseline, Thresholds())
    assert verdict.deterministic and verdict.exit_code == 1


def test_a_live_provider_run_is_still_live():
    from harness.studies.gate import is_deterministic

    assert not is_deterministic({"model": "openai:gpt-5", "summarizer_spec": "openai:gpt-5", "record_mode": "once"})
    assert not is_deterministic({"model": "openai:m@http://127.0.0.1:8765/v1", "record_mode": "new"})


def test_cost_help_counts_the_shapes_the_study_prices(capsys):
    words = {5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert main(["cost", "--cases", "edge-32k-window", "--json"]) == 0
    shapes = {len(summary["shapes"]) for summary in json.loads(capsys.readouterr().out)["models"]}
    with pytest.raises(SystemExit):
        main(["--help"])
    assert f"cost in {words[shapes.pop()]} request shapes" in capsys.readouterr().out and not shapes


def test_runtimes_install_says_already_installed_and_runs_no_npm(monkeypatch, tmp_path, capsys):
    from harness.runtimes import install

    binary = tmp_path / "pi"
    monkeypatch.setattr(install, "at_pin", lambda adapter: binary)
    monkeypatch.setattr(install, "install", lambda adapter: pytest.fail("npm ci for a runtime at its pin"))
    assert main(["runtimes", "install", "pi"]) == 0
    err = capsys.readouterr().err
    assert "already installed" in err and str(binary) in err and "installing" not in err


def test_runtimes_install_says_installing_when_it_installs(monkeypatch, tmp_path, capsys):
    from harness.runtimes import adapter, install

    binary = tmp_path / "pi"
    done = []
    monkeypatch.setattr(install, "at_pin", lambda adapter: None)
    monkeypatch.setattr(install, "install", lambda adapter: done.append(adapter.pin) or binary)
    monkeypatch.setattr(install, "check_version", lambda adapter, found, allow_drift, sandboxed=True: adapter.version)
    assert main(["runtimes", "install", "pi"]) == 0
    pin = adapter.load("pi").pin
    assert done == [pin] and f"installing {pin}" in capsys.readouterr().err


@pytest.mark.parametrize("policy", [[], ["--policy", "truncate"]])
def test_run_runtime_says_that_it_grades_the_default_policy_beside_it(policy, monkeypatch, tmp_path, capsys):
    """Not installed here (an empty runtime cache): the run stops before any case, after saying what it runs."""
    monkeypatch.setenv("COMPACTION_HARNESS_RUNTIMES", str(tmp_path / "empty"))
    assert main(["run", "--runtime", "pi", *policy, "--cases", "edge-32k-window", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "not installed" in err
    assert ("graded beside --policy default" in err) == (not policy)


def test_run_overwrite_replaces_the_run_a_folder_holds_and_keeps_other_files(tmp_path, capsys):
    from test_runner import make_case

    make_case(tmp_path / "cases", "a")
    out = tmp_path / "out"
    argv = ["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out)]
    assert main(argv) == 0
    (out / "notes.txt").write_text("mine")
    (out / "cases" / "stale.json").write_text("{}")  # a case file of the run before: replaced with the run
    first = json.loads((out / "run.json").read_text())["created"]
    capsys.readouterr()
    assert main(argv) == 2
    refused = capsys.readouterr().err
    assert "already holds a run" in refused and "--overwrite" in refused
    assert main([*argv, "--overwrite"]) == 0
    assert (out / "notes.txt").read_text() == "mine" and not (out / "cases" / "stale.json").exists()
    assert json.loads((out / "run.json").read_text())["created"] >= first
    assert main([*argv, "--overwrite", "--resume"]) == 2


def test_a_replay_of_a_model_never_recorded_stops_before_any_case_saying_how_to_record(tmp_path, capsys, monkeypatch):
    from test_runner import make_case

    make_case(tmp_path / "cases", "a")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--cases-dir", "cases", "--summarizer", "anthropic:claude-sonnet-4-6", "--record-mode",
                 "none", "--out", "results/ci"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "holds none of anthropic:claude-sonnet-4-6" in err and "--record-mode all" in err
    assert not (tmp_path / "results" / "ci" / "run.json").exists()


def test_a_case_whose_cassette_is_missing_says_it_does_not_exist(tmp_path, capsys):
    from test_runner import make_case

    for name in ("a", "b"):
        make_case(tmp_path / "cases", name)
    cassettes = tmp_path / "cassettes"
    base = ["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", "openai:gpt-5@emulator", "--cassettes",
            str(cassettes)]
    assert main([*base, "--cases", "a", "--record-mode", "new", "--out", str(tmp_path / "rec")]) == 0
    assert main([*base, "--record-mode", "none", "--out", str(tmp_path / "replay")]) == 1
    run = json.loads((tmp_path / "replay" / "run.json").read_text())
    assert run["cases"]["a"]["status"] == "ok"
    assert "does not exist" in run["cases"]["b"]["error"] and "--record-mode new" in run["cases"]["b"]["error"]
