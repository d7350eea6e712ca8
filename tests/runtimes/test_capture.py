"""A runtime's compaction read from what it sent: where it fired, what it kept ahead of the summary, where its
verbatim tail starts (matched backwards and in order; an early prompt re-sent after the summary is kept apart,
not a tail reaching back to it)."""

from __future__ import annotations

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.runtimes.capture import compactions
from harness.runtimes.observe import Observed
from harness.scripted.steps import script_from_session
from harness.session import Message, Session


def _session() -> Session:
    call = lambda i: (ToolCallSpec(f"c{i}", "bash", {"command": "ls"}),)  # noqa: E731
    messages = (
        Message("user", "Fix the parser."),                                        # 0
        Message("assistant", "Reading it.", tool_calls=call(1)),                   # 1
        Message("tool", "parser.py: 400 lines", tool_call_id="c1"),               # 2
        Message("assistant", "Found it."),                                         # 3
        Message("user", "Now add a test."),                                        # 4
        Message("assistant", "Writing the test.", tool_calls=call(2)),             # 5
        Message("tool", "test_parser.py written", tool_call_id="c2"),             # 6
        Message("assistant", "Done."),                                             # 7
        Message("user", "Run it."),                                                # 8
        Message("assistant", "Running.", tool_calls=call(3)),                      # 9
        Message("tool", "1 passed", tool_call_id="c3"),                           # 10
        Message("assistant", "Passed."),                                           # 11
    )
    return Session(messages)


def _request(*messages: ChatMessage, system: str = "agent") -> ModelRequest:
    return ModelRequest("m", system, tuple(messages), 1000)


def test_a_compaction_between_turns_with_a_tail_and_a_resent_prompt():
    session = _session()
    script = script_from_session(session)
    used = sum(1 for s in script.steps if s.turn < 2)  # turns 1 and 2 done, the third not started
    asked = Observed(1, "compaction", _request(ChatMessage("user", "summarize"), system="You are a summarizer"),
                     {}, used, "SUMMARY: parser fixed, test written")
    after = Observed(2, "turn", _request(
        ChatMessage("user", "What did we do so far?"),
        ChatMessage("assistant", "SUMMARY: parser fixed, test written"),
        ChatMessage("user", "Fix the parser."),                       # an early prompt, re-sent: not the tail
        ChatMessage("assistant", "Writing the test.", (ToolCallSpec("c2", "bash", {}),)),
        ChatMessage("tool", "test_parser.py written", tool_call_id="c2"),
        ChatMessage("assistant", "Done."),
        ChatMessage("user", "Run it.")), {}, used, "Running.")
    [found] = compactions([asked, after], script, session)
    assert (found.position, found.mid_turn, found.covers) == (8, False, 5)
    assert found.summary == "SUMMARY: parser fixed, test written"
    assert [k["content"] for k in found.kept] == ["What did we do so far?", "Fix the parser."]
    record = found.record()
    assert record.meta["kept_history"][0]["content"] == "What did we do so far?" and record.covers == 5


def test_a_mid_turn_compaction_folds_the_outputs_it_had_and_keeps_no_tail():
    session = _session()
    script = script_from_session(session)
    used = next(s.number for s in script.steps if s.source == 9)  # the step that ran `c3`, its output folded
    asked = Observed(1, "compaction", _request(ChatMessage("user", "summarize")), {}, used, "S")
    after = Observed(2, "turn", _request(ChatMessage("user", "Run it."), ChatMessage("user", "handoff: S")),
                     {}, used, "Passed.")
    [found] = compactions([asked, after], script, session)
    assert (found.position, found.mid_turn, found.covers) == (11, True, 11)
    assert [k["content"] for k in found.kept] == ["Run it."]  # re-injected ahead of the summary (Codex's way)
