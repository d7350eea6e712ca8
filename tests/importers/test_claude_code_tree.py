"""Claude Code native: the live conversation rebuilt from the parentUuid tree (issue 21), on hand-made transcripts
shaped like the real ones (one content block per entry, parallel calls forking the tree, hook progress entries)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from harness.importers import import_transcript
from harness.importers.report import NO_RESULT

USAGE = {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50, "output_tokens": 9,
         "service_tier": "standard", "cache_creation": {"ephemeral_5m_input_tokens": 50}}


class Transcript:
    """Builds entries line by line; each helper returns the new entry's uuid."""

    def __init__(self) -> None:
        self.lines: list[dict] = []

    def _add(self, kind: str, parent: str | None, **fields) -> str:
        uuid = f"e{len(self.lines) + 1}"
        self.lines.append({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s",
                           "timestamp": f"2026-01-01T00:00:{len(self.lines):02d}Z", "isSidechain": False, **fields})
        return uuid

    def prompt(self, parent: str | None, text: str) -> str:
        return self._add("user", parent, message={"role": "user", "content": text})

    def block(self, parent: str | None, mid: str, block: dict, usage: dict | None = None) -> str:
        message = {"id": mid, "role": "assistant", "model": "claude-opus-4-6", "content": [block],
                   "usage": usage or USAGE}
        return self._add("assistant", parent, message=message)

    def text(self, parent: str | None, mid: str, text: str, **kw) -> str:
        return self.block(parent, mid, {"type": "text", "text": text}, **kw)

    def call(self, parent: str | None, mid: str, call_id: str, command: str = "ls") -> str:
        return self.block(parent, mid, {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}})

    def result(self, parent: str, call_id: str, text: str) -> str:
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": text}]
        return self._add("user", parent, message={"role": "user", "content": content})

    def progress(self, parent: str) -> str:
        return self._add("progress", parent, data={"type": "hook_progress"})

    def boundary(self, logical_parent: str, trigger: str = "auto", pre_tokens: int = 150_000) -> str:
        return self._add("system", None, subtype="compact_boundary", logicalParentUuid=logical_parent,
                         content="Conversation compacted", compactMetadata={"trigger": trigger, "preTokens": pre_tokens})

    def summary(self, parent: str, text: str) -> str:
        return self._add("user", parent, isCompactSummary=True, message={"role": "user", "content": text})

    def bookkeeping(self, kind: str) -> None:
        self.lines.append({"type": kind, "messageId": "x"})

    def write(self, folder: Path, name: str = "session.jsonl") -> Path:
        path = folder / name
        text = "".join(json.dumps(line) + "\n" for line in self.lines)
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
        return path


def imported(tmp_path: Path, transcript: Transcript, name: str = "session.jsonl"):
    session, report, _ = import_transcript(transcript.write(tmp_path, name), "claude-code")
    return session, report


def line_of(session, role: str, content: str) -> int:
    return next(m.meta["source_line"] for m in session.messages if m.role == role and m.content == content)


def test_parallel_calls_across_forks_are_one_message_with_every_real_result(tmp_path):
    t = Transcript()
    u = t.prompt(None, "Look at both files.")
    a1 = t.call(u, "m1", "c1", "cat a")  # line 2
    p1 = t.progress(a1)
    a2 = t.call(p1, "m1", "c2", "cat b")  # line 4: the second call hangs off the first call's hook progress
    t.result(a1, "c1", "A")  # line 5: a sibling fork of the walk (which goes through a2, p1, a1)
    r2 = t.result(a2, "c2", "B")
    t.text(r2, "m2", "Both read.")
    session, report = imported(tmp_path, t)
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c.id for c in session.messages[1].tool_calls] == ["c1", "c2"]
    assert [m.content for m in session.messages[2:4]] == ["A", "B"]
    assert report.pairs == 2 and report.synthetic_results == 0 and report.tool_calls == 2
    # every message names the line it came from (the merged assistant: its first line)
    assert [m.meta["source_line"] for m in session.messages] == [1, 2, 5, 6, 7]
    assert report.entries == {"kept": 6, "skipped as noise": 1}


def test_a_result_on_a_sibling_fork_is_found_never_invented(tmp_path):
    t = Transcript()
    u = t.prompt(None, "Run three checks.")
    calls = [t.call(u, "m1", "c1")]
    results = []
    for n in (2, 3):  # each later call hangs off the previous call; each result off its own call
        calls.append(t.call(calls[-1], "m1", f"c{n}"))
    for n, call in enumerate(calls, 1):
        results.append(t.result(call, f"c{n}", f"out {n}"))
    t.text(results[-1], "m2", "All three ran.")
    session, report = imported(tmp_path, t)
    assert [m.content for m in session.messages if m.role == "tool"] == ["out 1", "out 2", "out 3"]
    assert NO_RESULT not in [m.content for m in session.messages]
    assert report.synthetic_results == 0 and report.pairs == 3


def test_a_call_on_an_abandoned_leaf_is_skipped_and_counted(tmp_path):
    t = Transcript()
    u = t.prompt(None, "Start the agent.")
    text = t.text(u, "m1", "I will delegate this.")
    t.call(text, "m1", "c-abandoned")  # never executed: no result, no child entry
    t.bookkeeping("queue-operation")
    resumed = t.prompt(text, "continue")  # the session resumed from the entry before the call
    t.text(resumed, "m2", "Continuing.")
    session, report = imported(tmp_path, t)
    assert report.tool_calls == 0 and report.synthetic_results == 0
    assert [m.content for m in session.messages] == ["Start the agent.", "I will delegate this.", "continue",
                                                     "Continuing."]
    assert report.entries["abandoned call"] == 1
    assert report.skipped["abandoned call (no result and no child entry anywhere)"] == 1


def test_a_live_call_without_a_result_gets_the_marker_on_its_own_line(tmp_path):
    t = Transcript()
    u = t.prompt(None, "Edit the file.")
    call = t.call(u, "m1", "c1")
    t.progress(call)  # the call ran (its hook fired) but the result was never written
    session, report = imported(tmp_path, t)
    last = session.messages[-1]
    assert last.content == NO_RESULT and last.meta == {"synthetic": True, "source_line": 2}
    assert report.synthetic_results == 1


def test_boundary_whose_logical_parent_is_missing_keeps_history_and_compaction(tmp_path):
    t = Transcript()
    u = t.prompt(None, "Port the parser.")
    call = t.call(u, "m1", "c1")
    p = t.progress(call)
    t.lines.append({"type": "last-prompt", "lastPrompt": "x"})
    b = t.boundary("never-written", pre_tokens=167_669)  # line 5
    s = t.summary(b, "Summary: porting the parser.")
    nxt = t.prompt(s, "go on")
    t.text(nxt, "m2", "Going on.")
    session, report = imported(tmp_path, t)
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert session.messages[2].content == NO_RESULT  # the compaction fired between the call and its result
    (block,) = session.compactions
    assert (block.covers, block.position, block.origin) == (3, 3, "claude-code")
    assert block.meta == {"trigger": "auto", "preTokens": 167_669, "boundary_line": 5, "logical_parent_missing": True,
                          "source_line": 6}
    assert block.content == "Summary: porting the parser."
    assert any("line 5: logicalParentUuid never-written is not in the file" in n and "line 3" in n
               for n in report.notes)
    assert p  # the walk went through the progress entry before the boundary


def test_history_before_a_normal_boundary_stays(tmp_path):
    t = Transcript()
    u = t.prompt(None, "First task.")
    a = t.text(u, "m1", "Done first.")
    b = t.boundary(a, trigger="manual", pre_tokens=82_572)
    s = t.summary(b, "Summary of the first task.")
    t.text(t.prompt(s, "Second task."), "m2", "Done second.")
    session, report = imported(tmp_path, t)
    assert [m.content for m in session.messages] == ["First task.", "Done first.", "Second task.", "Done second."]
    assert session.compactions[0].meta["trigger"] == "manual" and not report.notes


def test_usage_timestamps_and_thinking_are_carried(tmp_path):
    t = Transcript()
    u = t.prompt(None, "Think, then answer.")
    think = t.block(u, "m1", {"type": "thinking", "thinking": "The port is 8443 per the config.", "signature": "s"},
                    usage={**USAGE, "output_tokens": 2})
    empty = t.block(think, "m1", {"type": "thinking", "thinking": "", "signature": "s"}, usage={**USAGE, "output_tokens": 5})
    t.text(empty, "m1", "The answer is ready.", usage={**USAGE, "output_tokens": 40})
    session, report = imported(tmp_path, t)
    user, answer = session.messages
    assert user.ts == "2026-01-01T00:00:00Z" and answer.ts == "2026-01-01T00:00:01Z"
    # the provider's four counts, from the entry that reported the most output
    assert answer.usage == {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50,
                            "output_tokens": 40}
    assert answer.content == "The answer is ready." and "8443" not in answer.content
    assert answer.meta == {"thinking": "The port is 8443 per the config.", "source_line": 2}
    assert report.thinking == {"blocks": 1, "characters": 32, "empty": 1}
    assert "thinking kept in meta.thinking: 1 blocks, 32 characters; signature-only blocks: 1" in report.lines()


def test_gzip_input_imports_the_same(tmp_path):
    t = Transcript()
    t.text(t.prompt(None, "Hello there."), "m1", "Hi.")
    plain, _ = imported(tmp_path, t)
    packed, report = imported(tmp_path, t, "session.jsonl.gz")
    assert packed.messages == plain.messages and report.format == "claude-code"
    auto, auto_report, _ = import_transcript(tmp_path / "session.jsonl.gz")
    assert auto_report.format == "claude-code" and auto.messages == plain.messages


def test_every_line_of_the_file_has_a_fate(tmp_path):
    t = Transcript()
    t.bookkeeping("file-history-snapshot")
    u = t.prompt(None, "Use key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA please.")
    t.text(u, "m0", "Abandoned reply.")  # an earlier attempt, off the live branch
    cmd = t.prompt(u, "<command-name>/status</command-name>")
    t.text(cmd, "m1", "Status shown.")
    session, report = imported(tmp_path, t)
    assert report.entries == {"skipped as noise": 1, "kept, secret redacted": 1, "off-branch": 1,
                              "kept, tagged as noise": 1, "kept": 1}
    assert sum(report.entries.values()) == len(t.lines)
    assert "entries: 5 (kept 1, kept, secret redacted 1, kept, tagged as noise 1, off-branch 1, skipped as noise 1)" \
        in report.lines()
    assert "Abandoned reply." not in [m.content for m in session.messages]

