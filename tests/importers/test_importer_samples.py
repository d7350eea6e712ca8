"""The two real MIT-licensed trajectories in ../shared/samples import cleanly, and the import report's counts
match counts computed here directly from the raw JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.importers import import_transcript, write_case
from harness.session import dumps_session, parse_session, read_session

SAMPLES = Path(__file__).parents[2].parent / "shared" / "samples"
MINI = SAMPLES / "mini-swe-agent_django__django-15814.traj.json"
SWE = SAMPLES / "swe-agent_pydicom__pydicom-1458.traj"

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"real samples not found at {SAMPLES} (the shared folder "
                                                              "beside the repository)")


def test_mini_swe_agent_sample_counts(tmp_path):
    raw = json.loads(MINI.read_text())
    messages = raw["messages"]
    by_role = {role: sum(1 for m in messages if m["role"] == role) for role in ("system", "user", "assistant", "tool")}
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    unanswered = [c for c in calls if c not in answered]
    ends_with_exit = messages[-1]["role"] == "exit"

    session, report, meta = import_transcript(MINI, window=128_000)
    assert report.format == "mini-swe-agent" and report.detected
    assert report.messages == {
        "system": by_role["system"],
        "user": by_role["user"],
        "assistant": by_role["assistant"],
        # the exit message answers the submit call still waiting for a result
        "tool": by_role["tool"] + (1 if ends_with_exit and unanswered else 0),
    }
    assert report.tool_calls == len(calls)
    assert report.pairs == len(calls) - len(unanswered) + (1 if ends_with_exit and unanswered else 0)
    assert report.synthetic_results == (len(unanswered) - 1 if ends_with_exit and unanswered else len(unanswered))
    assert report.skipped["extra (raw responses and timings, not mapped)"] == sum(1 for m in messages if "extra" in m)
    assert report.turns == by_role["user"]
    assert report.compactions == 0 and report.redacted == 0
    assert meta.model == raw["messages"][2]["extra"]["response"]["model"] == "deepseek-chat"
    # every tool call id of the source survives, in order
    assert [c.id for m in session.messages for c in m.tool_calls] == calls
    out = tmp_path / "django"
    write_case(out, session, report, meta)
    assert dumps_session(read_session(out / "session.jsonl")) == dumps_session(session)


def test_swe_agent_sample_counts(tmp_path):
    raw = json.loads(SWE.read_text())
    history = [m for m in raw["history"] if m.get("agent", "primary") == "primary"]
    actions = [m for m in history if m["role"] == "assistant" and m.get("action")]
    demos = [m for m in history if m.get("is_demo")]
    # a user message straight after an action is that action's observation
    observations = sum(1 for prev, m in zip(history, history[1:])
                       if m["role"] == "user" and prev["role"] == "assistant" and prev.get("action"))
    task_users = sum(1 for m in history if m["role"] == "user") - len(demos) - observations
    last_has_no_observation = history[-1]["role"] == "assistant"

    session, report, meta = import_transcript(SWE, window=128_000)
    assert report.format == "swe-agent" and report.detected
    assert report.messages == {
        "system": sum(1 for m in history if m["role"] == "system"),
        "user": len(demos) + task_users,
        "assistant": len(actions),
        "tool": len(actions),
    }
    assert report.tool_calls == report.pairs == len(actions) == len(raw["trajectory"])
    assert report.synthetic_results == 0
    assert report.tagged["last observation taken from trajectory"] == (1 if last_has_no_observation else 0)
    assert report.tagged["demonstration kept as user"] == len(demos)
    assert report.skipped["trajectory steps (duplicate the history; not mapped)"] == len(raw["trajectory"])
    # the actions become bash calls with the exact command text
    commands = [c.arguments["command"] for m in session.messages for c in m.tool_calls]
    assert commands == [m["action"].rstrip("\n") for m in actions]
    assert all(c.name == "bash" for m in session.messages for c in m.tool_calls)
    assert session.messages[-1].content == raw["trajectory"][-1]["observation"]
    parse_session(dumps_session(session).splitlines())
    write_case(tmp_path / "pydicom", session, report, meta)
