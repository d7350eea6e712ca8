"""The single-document formats account for every entry of the file (issue 21, item 5): each message (or
trajectory step) is counted once by what became of it, and the counts add up to the entries in the file.

Each test writes a small transcript holding one entry of each fate the format can give, and states the
expected count per fate from the file as written here, not from the importer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.importers import import_transcript

SECRET = "sk-abcdefghijklmnopqrstu1234"  # the redactor's OpenAI key shape
SAMPLES = Path(__file__).parents[2].parent / "shared" / "samples"


def write(tmp_path: Path, document: object, name: str = "transcript.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def call(call_id: str, command: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def test_openai_chat_counts_every_message_by_fate(tmp_path):
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing test."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "pytest")]},
        {"role": "tool", "tool_call_id": "c1", "content": "1 failed"},
        {"role": "tool", "tool_call_id": "ghost", "content": "a result nobody asked for"},
        {"role": "assistant", "content": ""},  # empty: noise
        {"role": "function", "name": "old", "content": "legacy"},
        {"role": "user", "content": f"Use the key {SECRET}."},
        {"role": "assistant", "content": "Done."},
    ]
    _, report, _ = import_transcript(write(tmp_path, messages), "openai", window=100_000)
    assert report.entries == {"kept (system)": 1, "kept": 4, "skipped (tool result with no matching call)": 1,
                              "skipped as noise": 1, "skipped (legacy function message)": 1,
                              "kept, secret redacted": 1}
    assert sum(report.entries.values()) == len(messages)
    assert f"entries: {len(messages)} (" in report.render()


def test_anthropic_messages_counts_every_message_by_fate(tmp_path):
    document = {"system": "You are a coding agent.", "messages": [  # `system` is not a message: not an entry
        {"role": "user", "content": "Fix the failing test."},
        {"role": "assistant", "content": [{"type": "text", "text": "Running it."},
                                          {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "stray"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "x"}]},  # nothing kept
        {"role": "user", "content": f"Token {SECRET}"},
        {"role": "assistant", "content": "Done."},
    ]}
    _, report, _ = import_transcript(write(tmp_path, document), "anthropic", window=100_000)
    assert report.entries == {"kept": 4, "skipped (tool result with no matching call)": 1, "skipped as noise": 1,
                              "kept, secret redacted": 1}
    assert sum(report.entries.values()) == len(document["messages"])


def test_claude_code_openai_export_counts_every_message_by_fate(tmp_path):
    messages = [
        {"role": "system", "content": "You are Claude Code."},
        {"role": "user", "content": "Refactor the loader."},
        {"role": "assistant", "content": "<thinking>io.py first</thinking>Starting.", "tool_calls": [call("c1", "ls")]},
        {"role": "tool", "tool_call_id": "c1", "content": "io.py"},
        {"role": "user", "content": "[Request interrupted by user]"},
        {"role": "system", "content": "[compact_boundary] trigger=auto"},
        {"role": "user", "content": "Summary: refactoring io.py."},
        {"role": "user", "content": f"Continue; the key is {SECRET}."},
        {"role": "system", "content": "[compact_boundary] trigger=manual"},  # no summary after it
        {"role": "assistant", "content": "Done."},
    ]
    export = {"format": "openai-chat", "model": "claude-opus-4-6", "messages": messages}
    session, report, _ = import_transcript(write(tmp_path, export), "claude-code-openai")
    assert len(session.compactions) == 1
    assert report.entries == {"kept (system)": 1, "kept": 5, "kept, tagged as noise": 1,
                              "kept (compaction boundary)": 1, "kept, secret redacted": 1,
                              "skipped (compact boundary without summary)": 1}
    assert sum(report.entries.values()) == len(messages)


def test_mini_swe_agent_counts_every_message_by_fate(tmp_path):
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Solve the issue."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "ls")]},
        {"role": "tool", "tool_call_id": "c1", "content": "<returncode>0</returncode>"},
        {"role": "tool", "tool_call_id": "ghost", "content": "stray"},
        {"role": "assistant", "content": f"export KEY={SECRET}", "tool_calls": [call("c2", "submit")]},
        {"role": "exit", "content": "diff --git a/x b/x", "extra": {"exit_status": "Submitted"}},  # c2's result
        {"role": "exit", "content": "again", "extra": {"exit_status": "Submitted"}},  # nothing waits for it
    ]
    document = {"info": {"exit_status": "Submitted"}, "trajectory_format": "mini-swe-agent-1", "messages": messages}
    _, report, _ = import_transcript(write(tmp_path, document, "run.traj.json"), "mini-swe-agent", window=100_000)
    assert report.entries == {"kept (system)": 1, "kept": 4, "skipped (tool result with no matching call)": 1,
                              "kept, secret redacted": 1, "skipped (exit message with no call waiting)": 1}
    assert sum(report.entries.values()) == len(messages)


def test_swe_agent_counts_every_history_message_and_trajectory_step(tmp_path):
    history = [
        {"role": "system", "content": "SETTING: autonomous programmer.", "agent": "primary"},
        {"role": "user", "content": "--- DEMONSTRATION ---", "agent": "primary", "is_demo": True},
        {"role": "user", "content": "ISSUE: divide() crashes on zero.", "agent": "primary"},
        {"role": "assistant", "content": "open", "thought": "Open it.", "action": "open calc.py\n", "agent": "primary"},
        {"role": "user", "content": f"[File: calc.py] KEY={SECRET}", "agent": "primary"},
        {"role": "user", "content": "chatter", "agent": "helper"},
        {"role": "assistant", "content": "submit", "thought": "Submit.", "action": "submit\n", "agent": "primary"},
    ]
    trajectory = [{"action": "open calc.py\n", "observation": "[File: calc.py]"},
                  {"action": "submit\n", "observation": "diff --git a/calc.py b/calc.py"}]  # the last one is used
    document = {"environment": "swe_main", "info": {}, "history": history, "trajectory": trajectory}
    _, report, _ = import_transcript(write(tmp_path, document, "run.traj"), "swe-agent", window=100_000)
    assert report.entries == {"kept (system)": 1, "kept": 4 + 1, "kept, secret redacted": 1,
                              "skipped (another agent's message)": 1,
                              "skipped (trajectory step, duplicates the history)": 1}
    assert sum(report.entries.values()) == len(history) + len(trajectory)


def test_formats_that_account_per_line_are_not_counted_twice():
    data = Path(__file__).parent / "data"
    lines = len([line for line in (data / "codex.jsonl").read_text().splitlines() if line.strip()])
    _, report, _ = import_transcript(data / "codex.jsonl", "codex", window=100_000)
    assert sum(report.entries.values()) == lines


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"real samples not found at {SAMPLES}")
def test_the_real_samples_account_for_every_entry():
    mini = SAMPLES / "mini-swe-agent_django__django-15814.traj.json"
    swe = SAMPLES / "swe-agent_pydicom__pydicom-1458.traj"
    raw_mini, raw_swe = json.loads(mini.read_text()), json.loads(swe.read_text())
    _, report, _ = import_transcript(mini, window=128_000)
    assert sum(report.entries.values()) == len(raw_mini["messages"])
    _, report, _ = import_transcript(swe, window=128_000)
    assert sum(report.entries.values()) == len(raw_swe["history"]) + len(raw_swe["trajectory"])
    # one trajectory step gives the observation the history lacks; the others duplicate the history
    assert report.entries["skipped (trajectory step, duplicates the history)"] == len(raw_swe["trajectory"]) - (
        1 if raw_swe["history"][-1]["role"] == "assistant" else 0)
