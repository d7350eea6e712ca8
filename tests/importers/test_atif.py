"""ATIF in and out (harness/importers/atif.py): every shipped case's session round-trips through an ATIF
trajectory unchanged, validated by the atif package's models; a trajectory written with those models (tool calls,
observations, a continuation after summarization) imports as a case `cases validate` accepts; a file of the
wrong version or shape, or with no steps, is one line naming it, exit 2, and no case folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from atif import Agent, Observation, ObservationResult, Step, ToolCall, Trajectory

from harness.cases import discover
from harness.cli import main
from harness.importers import detect, import_transcript
from harness.importers.atif import export_atif

ROOT = Path(__file__).parents[2]
SHIPPED = discover(str(ROOT / "cases"))


def _same(a, b) -> bool:
    return (a.system, a.tools, a.messages, a.compactions) == (b.system, b.tools, b.messages, b.compactions)


@pytest.mark.parametrize("case", SHIPPED, ids=lambda c: c.id)
def test_every_shipped_case_round_trips_unchanged(case, tmp_path):
    document = export_atif(case.session, model=case.model_name, session_id=case.id, window=case.context_window)
    Trajectory.model_validate(document)  # the format's own models accept it
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(document))
    assert detect(path) == "atif"
    session, report, meta = import_transcript(path)
    assert _same(session, case.session)
    assert meta.context_window == case.context_window and report.redacted == 0
    compactions = [s for s in document["steps"] if "compaction" in (s.get("extra") or {}).get("compaction_harness", {})]
    assert len(compactions) == len(case.session.compactions)


def _harbor(tmp_path: Path) -> Path:
    """A trajectory built with the atif models, continued after a summarization in a second file."""
    first = Trajectory(schema_version="ATIF-v1.8", session_id="run-1", continued_trajectory_ref="part-2.json",
                       agent=Agent(name="terminus-2", version="2.0.0", model_name="gpt-5"), steps=[
        Step(step_id=1, source="system", message="You are an agent in a terminal."),
        Step(step_id=2, source="user", message="Make the tests in api/ pass; never touch migrations/."),
        Step(step_id=3, source="agent", message="Running the tests.", tool_calls=[
            ToolCall(tool_call_id="t1", function_name="bash", arguments={"command": "pytest api"})],
            observation=Observation(results=[ObservationResult(source_call_id="t1",
                                                               content="FAILED api/test_users.py::test_create")])),
        Step(step_id=4, source="agent", message="Reading the failing test.", timestamp="2026-11-30T10:00:00Z",
             tool_calls=[ToolCall(tool_call_id="t2", function_name="bash", arguments={"command": "cat a.py"}),
                         ToolCall(tool_call_id="t3", function_name="bash", arguments={"command": "cat b.py"})],
             observation=Observation(results=[ObservationResult(source_call_id="t2", content="def create(): ...")])),
    ])
    second = Trajectory(schema_version="ATIF-v1.8", session_id="run-1",
                        agent=Agent(name="terminus-2", version="2.0.0", model_name="gpt-5"), steps=[
        Step(step_id=1, source="user", message="Summary so far: api/test_users.py fails in create().",
             is_copied_context=True),
        Step(step_id=2, source="agent", message="Reading the failing test.", is_copied_context=True),
        Step(step_id=3, source="agent", message="Fixed create(); tests pass.", tool_calls=[
            ToolCall(tool_call_id="t4", function_name="bash", arguments={"command": "pytest api"})],
            observation=Observation(results=[ObservationResult(source_call_id="t4", content="12 passed")])),
    ])
    (tmp_path / "part-2.json").write_text(json.dumps(second.to_json_dict()))
    path = tmp_path / "part-1.json"
    path.write_text(json.dumps(first.to_json_dict()))
    return path


def test_a_harbor_trajectory_imports_as_a_case_cases_validate_accepts(tmp_path, capsys):
    path = _harbor(tmp_path)
    session, report, _ = import_transcript(path, window=32768)
    assert session.system == "You are an agent in a terminal."
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "tool", "assistant", "tool"]
    assert session.messages[5].content == "[no result recorded]" and report.synthetic_results == 1  # t3
    assert session.messages[3].ts == "2026-11-30T10:00:00Z"
    [boundary] = session.compactions  # the continuation: its copied summary, its copied tail from message 3
    assert boundary.content == "Summary so far: api/test_users.py fails in create()."
    assert (boundary.covers, boundary.position, boundary.origin) == (3, 6, "atif-continuation")
    cases = tmp_path / "cases"
    assert main(["cases", "import", str(path), "--out", str(cases / "harbor-run"), "--window", "32768"]) == 0
    assert main(["cases", "validate", "--cases-dir", str(cases)]) == 0
    assert "0 problems" in capsys.readouterr().out


@pytest.mark.parametrize("document, problem", [
    ({"schema_version": "ATIF-v2.0", "agent": {"name": "a", "version": "1"}, "steps": [{}]},
     "schema_version: 'ATIF-v2.0' is not an ATIF version"),
    ({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": []},
     "steps: the trajectory has no steps"),
    ({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"},
      "steps": [{"step_id": 1, "source": "robot", "message": "hi"}]}, "steps.0.source: not valid ATIF"),
    ({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "continued_trajectory_ref": "gone.json",
      "steps": [{"step_id": 1, "source": "user", "message": "hi"}]}, "continued_trajectory_ref: cannot read"),
])
def test_bad_trajectories_are_one_line_naming_the_file(document, problem, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    out = tmp_path / "case"
    code = main(["cases", "import", str(path), "--from", "atif", "--out", str(out), "--window", "32768"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(path) in err[0] and problem in err[0]
    assert not out.exists()


def test_cases_export_writes_a_trajectory_the_models_accept(tmp_path):
    out = tmp_path / "edge.atif.json"
    assert main(["cases", "export", "edge-32k-window", "--to", "atif", "--out", str(out),
                 "--cases-dir", str(ROOT / "cases")]) == 0
    trajectory = Trajectory.model_validate_json(out.read_text())
    assert trajectory.session_id == "edge-32k-window" and trajectory.schema_version == "ATIF-v1.8"
    assert trajectory.extra["compaction_harness"]["context_window"] == 32768
