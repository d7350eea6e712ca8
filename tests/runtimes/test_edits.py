"""Compactions without a model call (Inspect's CompactionEdit and CompactionTrim): found where a turn request
does not carry the one before it on, only for adapters that declare `edits_context`; a summarization call's
own hand-back is not counted twice."""

from __future__ import annotations

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.runtimes.capture import compactions
from harness.runtimes.edits import carries_on, edited
from harness.runtimes.observe import Observed
from harness.scripted.steps import script_from_session
from harness.session import Message, Session

CALL = (ToolCallSpec("c1", "bash", {"command": "cat .replay/c1.txt"}),)
CALL2 = (ToolCallSpec("c2", "bash", {"command": "cat .replay/c2.txt"}),)


def _session() -> Session:
    return Session((
        Message("user", "Fix the parser."),                            # 0
        Message("assistant", "Reading it.", tool_calls=CALL),          # 1
        Message("tool", "parser.py: 400 lines", tool_call_id="c1"),    # 2
        Message("assistant", "Testing it.", tool_calls=CALL2),         # 3
        Message("tool", "3 failed", tool_call_id="c2"),                # 4
        Message("assistant", "Found it."),                             # 5
    ))


def _request(*messages: ChatMessage) -> ModelRequest:
    return ModelRequest("m", "agent", tuple(messages), 1000)


FIRST = (ChatMessage("user", "Fix the parser."),)
SECOND = FIRST + (ChatMessage("assistant", "Reading it.", CALL), ChatMessage("tool", "parser.py: 400 lines",
                                                                               tool_call_id="c1"))
CLEARED = FIRST + (ChatMessage("assistant", "Reading it.", CALL), ChatMessage("tool", "(Tool result removed)",
                                                                                tool_call_id="c1"),
                   ChatMessage("assistant", "Testing it.", CALL2), ChatMessage("tool", "3 failed", tool_call_id="c2"))


def _seen() -> list[Observed]:
    return [Observed(1, "turn", _request(*FIRST), {}, 0, "Reading it."),
            Observed(2, "turn", _request(*SECOND), {}, 1, "Testing it."),
            Observed(3, "turn", _request(*CLEARED), {}, 2, "Found it.")]


def test_a_request_that_extends_the_last_carries_it_on_and_an_edited_one_does_not():
    assert carries_on(_request(*FIRST), _request(*SECOND))
    assert not carries_on(_request(*SECOND), _request(*CLEARED))  # its tool result was cleared
    assert not carries_on(_request(*SECOND), _request(*FIRST))  # shorter: messages dropped
    assert not carries_on(_request(*FIRST), ModelRequest("m", "another system", SECOND, 1000))


def test_an_edited_history_is_a_compaction_without_a_call_where_the_adapter_declares_it():
    session = _session()
    script = script_from_session(session)
    assert compactions(_seen(), script, session) == []  # not declared: other runtimes' pruning is no compaction
    found = compactions(_seen(), script, session, edits=True)
    assert len(found) == 1
    edit = found[0]
    assert (edit.number, edit.requests, edit.summary, edit.used_before) == (1, (), "", 2)
    assert edit.after.seq == 3 and edit.mid_turn  # between the tool rounds of the first turn
    assert edit.position == 5  # it had sent messages 0-4: the step due (message 5) comes after it
    assert edit.covers == 0  # the whole history was kept (edited, not dropped)


def test_the_hand_back_after_a_summarization_call_is_not_counted_again():
    seen = _seen()
    assert [s.seq for s in edited(seen, after_calls={3})] == []
    assert [s.seq for s in edited(seen, after_calls=set())] == [3]
