"""Claude Code native, the three losses of issue 31 on hand-made transcripts shaped like the real ones: a prompt
typed while the agent was busy (`queue-operation` entries, no uuid) placed where the model took it, `!` shell
escapes tagged, `/exit` skipped wherever it is."""

from __future__ import annotations

from pathlib import Path

from test_claude_code_tree import Transcript, imported


def queue(transcript: Transcript, operation: str, content: str | None = None) -> None:
    """A queue-operation line as Claude Code writes it: no uuid, no parent, content only on enqueue/popAll."""
    line = {"type": "queue-operation", "operation": operation, "timestamp": "2026-01-01T00:01:00Z", "sessionId": "s"}
    transcript.lines.append(line | ({"content": content} if content is not None else {}))


def busy_session(taken: str) -> Transcript:
    t = Transcript()
    p = t.prompt(None, "Rebase the branch onto main and push it.")
    queue(t, "enqueue", "add a comment to #91 so we don't forget")
    a = t.call(p, "m1", "c1", "git rebase main")
    queue(t, taken)
    r = t.result(a, "c1", "Successfully rebased")
    t.text(r, "m2", "Rebased. Adding the comment to #91 as you asked.")
    return t


def test_a_prompt_taken_with_a_tool_result_follows_that_result(tmp_path: Path):
    session, report = imported(tmp_path, busy_session("remove"))
    roles = [(m.role, m.content) for m in session.messages]
    at = roles.index(("user", "add a comment to #91 so we don't forget"))
    assert roles[at - 1] == ("tool", "Successfully rebased") and roles[at + 1][0] == "assistant"
    queued = session.messages[at]
    assert queued.meta["queued"] is True and "tag" not in queued.meta and queued.meta["source_line"] == 2
    assert report.tagged["queued prompt placed where the model took it"] == 1


def test_a_dequeued_prompt_adds_nothing_its_own_entry_is_the_message(tmp_path: Path):
    session, report = imported(tmp_path, busy_session("dequeue"))
    assert not any("#91 so we" in m.content for m in session.messages)
    assert report.skipped["bookkeeping: queue-operation"] == 2


def test_popall_puts_the_queue_back_in_the_input_box(tmp_path: Path):
    t = busy_session("popAll")
    queue(t, "remove")  # nothing left to take
    session, _ = imported(tmp_path, t)
    assert not any("#91 so we" in m.content for m in session.messages)


def test_a_taken_prompt_with_no_result_after_it_goes_before_the_next_entry(tmp_path: Path):
    t = Transcript()
    p = t.prompt(None, "Explain the hook log routing.")
    queue(t, "enqueue", "does it even make sense to have separate log files?")
    queue(t, "remove")
    t.text(p, "m1", "Separate log files only make sense per session.")
    session, _ = imported(tmp_path, t)
    assert [m.role for m in session.messages] == ["user", "user", "assistant"]
    assert session.messages[1].content.startswith("does it even make sense")


def test_shell_escapes_are_tagged_and_exit_is_skipped(tmp_path: Path):
    t = Transcript()
    p = t.prompt(None, "Review the open PR comments.")
    a = t.text(p, "m1", "Done reviewing.")
    b = t.prompt(a, "<bash-input>git pull --rebase</bash-input>")
    c = t.prompt(b, "<bash-stdout>Already up to date.</bash-stdout><bash-stderr></bash-stderr>")
    d = t.prompt(c, "<command-name>/exit</command-name>\n            <command-message>exit</command-message>\n"
                    "            <command-args></command-args>")
    e = t.prompt(d, "<local-command-stdout>Bye!</local-command-stdout>")
    t.prompt(e, "<local-command-stdout>(no content)</local-command-stdout>")  # another command's output: kept
    session, report = imported(tmp_path, t)
    tags = [(m.content[:20], (m.meta or {}).get("tag")) for m in session.messages if m.role == "user"]
    assert tags == [("Review the open PR c", None), ("<bash-input>git pull", "shell"),
                    ("<bash-stdout>Already", "shell"), ("<local-command-stdou", "command")]
    assert report.skipped["session exit: /exit and its output"] == 2
