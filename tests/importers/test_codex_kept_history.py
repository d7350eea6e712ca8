"""Codex `compacted` records: the kept history is kept whole (every role, in order), text that matches no
message stays a kept item beside the summary, and the recorded policy rebuilds what Codex had (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.compaction.compactor import Compactor
from harness.compaction.summarizer import PlaceholderSummarizer
from harness.importers import import_transcript
from harness.kept_items import KeptText
from harness.policy import PolicyConfig, make_policy
from harness.policy.recorded import AtRecordedPoints, RecordedPolicy, recorded_points
from harness.results.schema import ContextRecord
from harness.tokens import counter

PERMISSIONS = "<permissions instructions>sandbox: workspace-write; approvals: on-request</permissions instructions>"
TASK = "Rename the config loader and keep the tests green."
SUMMARY = "Summary: renamed load_config to read_config in app/config.py; tests pass."
UNMATCHED = "<environment_context>cwd: /repo; shell: zsh</environment_context>"


def line(kind: str, payload: dict) -> dict:
    return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}


def message(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def rollout(tmp_path: Path, kept: list[dict]) -> Path:
    lines = [
        line("session_meta", {"id": "r", "base_instructions": {"text": "You are Codex."}}),
        line("turn_context", {"model": "gpt-5-codex"}),
        line("response_item", message("developer", PERMISSIONS)),
        line("response_item", message("user", TASK)),
        line("response_item", message("assistant", "Renaming now.")),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                               "arguments": json.dumps({"command": ["pytest"]})}),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "3 passed"}),
        line("compacted", {"message": SUMMARY, "replacement_history": kept}),
        line("response_item", message("user", "Now update the README.")),
        line("response_item", message("assistant", "README updated.")),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in lines), encoding="utf-8")
    return path


def summary_copy() -> dict:
    return message("user", f"Another language model started to solve this problem and produced a summary:\n{SUMMARY}")


def test_the_kept_history_is_kept_whole_with_its_developer_item(tmp_path):
    kept = [message("developer", PERMISSIONS), message("user", TASK), summary_copy()]
    session, report, _ = import_transcript(rollout(tmp_path, kept), "codex")
    (block,) = session.compactions
    assert block.meta["kept_history"] == [{"role": "developer", "content": PERMISSIONS},
                                          {"role": "user", "content": TASK},
                                          {"role": "user", "content": summary_copy()["content"][0]["text"]}]
    assert report.tagged["kept history item: developer"] == 1 and report.tagged["kept history item: user"] == 2


def test_the_recorded_policy_rebuilds_the_kept_history_item_for_item(tmp_path):
    kept = [message("developer", PERMISSIONS), message("user", TASK), summary_copy()]
    session, _, _ = import_transcript(rollout(tmp_path, kept), "codex")
    (point,) = recorded_points(session)
    assert point.kept == (0, 1) and point.kept_text == () and point.summary == SUMMARY
    replay = Compactor(session, RecordedPolicy(PolicyConfig(272_000)), PlaceholderSummarizer(),
                       points=("compaction:1",)).run()
    snapshot = replay.snapshots["compaction:1"]
    shown, block, live = snapshot.parts(session)
    # what Codex had right after the compaction: its kept items in their order, then the summary
    assert [(m.role, (m.meta or {}).get("source_role"), m.content) for m in shown] == \
           [("user", "developer", PERMISSIONS), ("user", None, TASK)]
    assert block == SUMMARY and live == [] and snapshot.end == 4


def replacement_history(kept: list[dict]) -> list[tuple[str, str | None, str]]:
    """Codex's kept items as the importer maps their roles (developer -> a tagged user message), without the
    summary copy: what must stand ahead of the summary, item for item."""
    out = []
    for item in kept[:-1]:
        role = item["role"]
        out.append(("user", None if role == "user" else role, item["content"][0]["text"]))
    return out


def test_unmatched_kept_text_is_a_kept_item_not_part_of_the_summary(tmp_path):
    kept = [message("developer", PERMISSIONS), message("user", UNMATCHED), message("user", TASK), summary_copy()]
    session, _, _ = import_transcript(rollout(tmp_path, kept), "codex")
    (point,) = recorded_points(session)
    assert point.kept == (0, 1) and point.summary == SUMMARY
    assert point.kept_text == (KeptText(1, "user", UNMATCHED),)  # its place in Codex's order
    replay = Compactor(session, RecordedPolicy(PolicyConfig(272_000)), PlaceholderSummarizer(),
                       points=("compaction:1",)).run()
    snapshot = replay.snapshots["compaction:1"]
    shown, block, live = snapshot.parts(session)
    assert [(m.role, (m.meta or {}).get("source_role"), m.content) for m in shown] == replacement_history(kept)
    assert block == SUMMARY and live == []  # the summary block is the recorded summary, nothing else
    o200k = counter("o200k")
    (event,) = replay.events
    assert event.summary_tokens == o200k.count_text(SUMMARY)  # not counted as the recorded summary
    ours = AtRecordedPoints(make_policy("default", PolicyConfig(272_000)))
    ours.begin(session, lambda i: 0, 0)
    assert ours.budget(point) == o200k.count_text(SUMMARY)  # nor in the budget our summary gets


def test_unmatched_kept_text_counts_in_the_context_tokens(tmp_path):
    with_text = [message("developer", PERMISSIONS), message("user", UNMATCHED), message("user", TASK), summary_copy()]
    without = [message("developer", PERMISSIONS), message("user", TASK), summary_copy()]
    totals = {}
    for name, kept in (("with", with_text), ("without", without)):
        folder = tmp_path / name
        folder.mkdir()
        session, _, _ = import_transcript(rollout(folder, kept), "codex")
        replay = Compactor(session, RecordedPolicy(PolicyConfig(272_000)), PlaceholderSummarizer(),
                           points=("compaction:1",)).run()
        totals[name] = replay.snapshots["compaction:1"]
    # the kept text is one user message more in the context: its o200k count plus the message framing
    framing = getattr(counter("o200k"), "framing", 0)
    assert totals["with"].true_tokens - totals["without"].true_tokens == \
        counter("o200k").count_text(UNMATCHED) + framing
    assert totals["with"].summary == totals["without"].summary == SUMMARY


def test_the_case_file_records_kept_text_apart_from_the_summary(tmp_path):
    kept = [message("developer", PERMISSIONS), message("user", UNMATCHED), message("user", TASK), summary_copy()]
    session, _, _ = import_transcript(rollout(tmp_path, kept), "codex")
    replay = Compactor(session, RecordedPolicy(PolicyConfig(272_000)), PlaceholderSummarizer(),
                       points=("compaction:1", "end")).run()
    record = ContextRecord.from_snapshot(replay.snapshots["compaction:1"]).to_json()
    assert record["summary"] == SUMMARY and record["kept"] == [0, 1]
    assert record["kept_text"] == [[1, "user", UNMATCHED]]
    assert ContextRecord.from_json(json.loads(json.dumps(record))) == \
        ContextRecord.from_snapshot(replay.snapshots["compaction:1"])
    # a context with no kept text keeps the record's keys as they were
    plain = ContextRecord.from_snapshot(Compactor(session, RecordedPolicy(PolicyConfig(272_000)),
                                                  PlaceholderSummarizer(), points=("message:1",)).run()
                                        .snapshots["message:1"]).to_json()
    assert "kept_text" not in plain


def test_ours_at_the_recorded_points_keeps_the_same_kept_items(tmp_path):
    kept = [message("developer", PERMISSIONS), message("user", UNMATCHED), message("user", TASK), summary_copy()]
    session, _, _ = import_transcript(rollout(tmp_path, kept), "codex")
    ours = AtRecordedPoints(make_policy("default", PolicyConfig(272_000)))
    replay = Compactor(session, ours, PlaceholderSummarizer(), points=("compaction:1",)).run()
    shown, block, _ = replay.snapshots["compaction:1"].parts(session)
    assert [(m.role, (m.meta or {}).get("source_role"), m.content) for m in shown] == replacement_history(kept)
    assert UNMATCHED not in block  # only the summary differs from the recorded compaction


def test_every_rollout_line_has_a_fate(tmp_path):
    kept = [message("developer", PERMISSIONS), message("user", TASK), summary_copy()]
    path = rollout(tmp_path, kept)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line("response_item", {"type": "reasoning", "encrypted_content": "gAAA"})) + "\n")
        handle.write(json.dumps(line("event_msg", {"type": "token_count"})) + "\n")
        handle.write(json.dumps(line("response_item", message("assistant", "Key sk-abcdefghijklmnopqrstu1234"))) + "\n")
    _, report, _ = import_transcript(path, "codex")
    assert report.entries == {"kept (system)": 1, "skipped as noise": 2, "kept": 8, "left out (encrypted reasoning)": 1,
                              "kept, secret redacted": 1}
    assert sum(report.entries.values()) == len(path.read_text(encoding="utf-8").splitlines())
