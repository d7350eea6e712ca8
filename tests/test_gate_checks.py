"""What gate refuses and what it names (issue 18, items 5 and 9): an errored case, a partial run as a
baseline, a configuration that differs from the baseline's; a folder of several configurations; --json."""

import json

import pytest

from harness.cli import main

from test_runner import PROBES, make_case

UNREACHED = PROBES + """
[[probe]]
id = "after-ninth"
kind = "recall"
question = "What port does the server listen on?"
all = ["9090"]
planted_at = 5
at = "compaction:9"
"""


@pytest.fixture
def cases(tmp_path):
    root = tmp_path / "cases"
    for name in ("one", "two"):
        make_case(root, name)
    return root


def run(cases, out, *extra):
    assert main(["run", "--cases-dir", str(cases), "--out", str(out), "--json", *extra]) == 0
    return out


def errored_run(cases, out):
    # `run` refuses a bad case before any work (preflight, exit 2); the library still runs the others and
    # records the bad case as an error, which is the run gate must name
    from harness.cases import discover
    from harness.results.folder import RunFolder
    from harness.run.config import RunConfig
    from harness.run.matrix import run_cases

    record = run_cases(discover(cases), RunConfig(), RunFolder(out), run_id="broken")
    assert record["cases"]["two"]["status"] == "error"
    return out


def baseline_of(run_folder, tmp_path, *extra):
    path = tmp_path / "baseline.json"
    assert main(["gate", str(run_folder), "--baseline", str(path), "--update-baseline", *extra]) == 0
    return path


def test_gate_names_the_case_that_errored(cases, tmp_path, capsys):
    baseline = baseline_of(run(cases, tmp_path / "base"), tmp_path)
    (cases / "two" / "session.jsonl").write_text('{"role": "user", "content": "x"}\n{"role": "robot"}\n')
    broken = errored_run(cases, tmp_path / "broken")
    capsys.readouterr()
    assert main(["gate", str(broken), "--baseline", str(baseline)]) == 2
    error = capsys.readouterr().err
    assert "case two ended in an error" in error and "unknown role 'robot'" in error
    assert "other cases or probes" not in error and len(error.strip().splitlines()) == 1


def test_update_baseline_refuses_errored_cases_unless_allowed(cases, tmp_path, capsys):
    (cases / "two" / "session.jsonl").write_text('{"role": "robot"}\n')
    broken = errored_run(cases, tmp_path / "broken")
    capsys.readouterr()
    path = tmp_path / "baseline.json"
    assert main(["gate", str(broken), "--baseline", str(path), "--update-baseline"]) == 2
    error = capsys.readouterr().err
    assert "refusing to write a baseline from a partial run: 1 of 2 cases ended in an error (first: two:" in error
    assert "--allow-partial" in error and not path.exists()
    assert main(["gate", str(broken), "--baseline", str(path), "--update-baseline", "--allow-partial"]) == 0
    assert json.loads(path.read_text())["cases"] == ["one"]


def test_unreached_probe_points_are_reported_in_the_baseline_not_refused(tmp_path, capsys):
    """A point after a compaction the policy never makes is a property of the policy, not a partial run."""
    make_case(tmp_path / "cases", "late", probes=UNREACHED)
    done = run(tmp_path / "cases", tmp_path / "run")
    capsys.readouterr()
    path = tmp_path / "baseline.json"
    assert main(["gate", str(done), "--baseline", str(path), "--update-baseline"]) == 0
    assert "1 at points this policy never reaches (not gated)" in capsys.readouterr().out
    assert json.loads(path.read_text())["probes"]["late/after-ninth"]["answered"] is None
    assert main(["gate", str(done), "--baseline", str(path)]) == 0


def test_a_configuration_change_is_named_and_exits_3_unless_allowed(cases, tmp_path, capsys):
    baseline = baseline_of(run(cases, tmp_path / "base"), tmp_path)
    other = run(cases, tmp_path / "pi", "--policy", "pi", "--set", "tail_turns=2")
    capsys.readouterr()
    assert main(["gate", str(other), "--baseline", str(baseline)]) == 3  # neither a regression (1) nor an error (2)
    error = capsys.readouterr().err
    assert error.startswith("error: configuration change, not a regression (exit 3)")
    assert "policy: baseline default, run pi" in error and '"tail_turns": 2' in error
    assert "--allow-config-change" in error
    code = main(["gate", str(other), "--baseline", str(baseline), "--allow-config-change", "--json"])
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["exit_code"] == code and "policy: baseline default, run pi" in verdict["config_changes"]


def test_record_mode_and_cassettes_are_not_configuration(cases, tmp_path, capsys):
    baseline = baseline_of(run(cases, tmp_path / "base", "--record-mode", "all"), tmp_path)
    again = run(cases, tmp_path / "again", "--record-mode", "none", "--cassettes", str(tmp_path / "elsewhere"))
    capsys.readouterr()
    assert main(["gate", str(again), "--baseline", str(baseline), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config_changes"] == []


def test_gate_json_is_one_document(cases, tmp_path, capsys):
    base = run(cases, tmp_path / "base")
    baseline = baseline_of(base, tmp_path)
    capsys.readouterr()
    assert main(["gate", str(base), "--baseline", str(baseline), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "pass" and verdict["regressions"] == [] and verdict["config_changes"] == []
    assert set(verdict["probes"]) == {f"{c}/{p}" for c in ("one", "two") for p in ("pm", "config-file", "never-said")}


def test_gate_and_compare_take_a_folder_of_several_configurations(cases, tmp_path, capsys):
    several = run(cases, tmp_path / "several", "--policy", "default", "--policy", "truncate")
    folders = sorted(p.parent.name for p in several.glob("*/run.json"))
    assert len(folders) == 2
    capsys.readouterr()
    assert main(["gate", str(several), "--baseline", str(tmp_path / "b.json"), "--update-baseline"]) == 2
    assert "holds 2 runs" in capsys.readouterr().err
    truncate = next(several / name for name in folders if "truncate" in name)
    baseline = baseline_of(truncate, tmp_path)
    capsys.readouterr()
    assert main(["gate", str(several), "--baseline", str(baseline), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] == json.loads((truncate / "run.json").read_text())["run_id"]
    assert main(["compare", str(several), "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert {column["configuration"]["policy"] for column in compared["runs"]} == {"default", "truncate"}


@pytest.mark.parametrize("configuration", ["a string", 5, ["policy"]])
def test_a_baseline_whose_configuration_is_not_an_object_is_one_line_naming_it(configuration, cases, tmp_path, capsys):
    """Issue 44: it was a catch-all `AttributeError` line naming no file."""
    folder = run(cases, tmp_path / "base")
    path = baseline_of(folder, tmp_path)
    document = json.loads(path.read_text())
    document["configuration"] = configuration
    path.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["gate", str(folder), "--baseline", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {path}: configuration: must be an object") and error.count("\n") == 1
