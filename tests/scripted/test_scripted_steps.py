"""The script built from a case: folding, closing steps, parallel calls, what precedes each step, fixtures."""

from __future__ import annotations

from harness.cases import load_case
from harness.scripted import script_from_session, write_workspace
from harness.scripted.steps import CLOSING_TEXT
from harness.session import Message, Session, ToolCall


def _session(*messages: Message) -> Session:
    return Session(tuple(messages), "system")


def _call(call_id: str) -> ToolCall:
    return ToolCall(call_id, "read_file", {"path": "x"})


def test_a_text_only_reply_inside_a_turn_is_folded_into_the_next_step():
    script = script_from_session(_session(
        Message("user", "fix it"),
        Message("assistant", "looking", (_call("a"),)), Message("tool", "out a", tool_call_id="a"),
        Message("assistant", "found the cause."),
        Message("assistant", "patching", (_call("b"),)), Message("tool", "out b", tool_call_id="b"),
        Message("assistant", "done"),
    ))
    assert [s.text for s in script.steps] == ["looking", "found the cause.\n\npatching", "done"]
    assert [[c.id for c in s.calls] for s in script.steps] == [["a"], ["b"], []]
    assert [(e.kind, e.text, e.call_id) for e in script.steps[1].before] == [("tool", "out a", "a")]
    assert script.steps[1].source == 4


def test_a_turn_ending_on_calls_gets_a_closing_step_and_the_next_turn_expects_its_prompt():
    script = script_from_session(_session(
        Message("user", "one"),
        Message("assistant", "", (_call("a"), _call("b"))),
        Message("tool", "A", tool_call_id="a"), Message("tool", "B", tool_call_id="b"),
        Message("user", "two"),
        Message("assistant", "answer"),
    ))
    assert script.prompts == ("one", "two")
    first, closing, second = script.steps
    assert [c.id for c in first.calls] == ["a", "b"]  # parallel calls stay one step
    assert closing.text == CLOSING_TEXT and closing.source is None and closing.turn == 0
    assert [(e.call_id, e.text) for e in closing.before] == [("a", "A"), ("b", "B")]
    assert [(e.kind, e.text) for e in second.before] == [("user", "two")] and second.turn == 1
    assert [s.number for s in script.steps] == [1, 2, 3]


def test_the_real_case_becomes_69_steps_using_every_call_once():
    case = load_case("cases/edge-32k-window")
    script = script_from_session(case.session)
    recorded = [c.id for m in case.session.messages for c in m.tool_calls]
    assert len(script.prompts) == 16 and len(script.steps) == 69
    assert [c.id for c in script.calls] == recorded and len(recorded) == 53


def test_fixtures_hold_each_output_byte_for_byte_under_a_safe_unique_name(tmp_path):
    output = "naïve\r\nline two  \n\ttab\n\n"
    script = script_from_session(_session(
        Message("user", "go"),
        Message("assistant", "", (_call("../../etc/x"),)), Message("tool", output, tool_call_id="../../etc/x"),
        Message("assistant", "", (_call("etc/x"),)), Message("tool", "", tool_call_id="etc/x"),
    ))
    case_dir = tmp_path / "case"
    (case_dir / "files" / "src").mkdir(parents=True)
    (case_dir / "files" / "src" / "main.go").write_text("package main\n")
    root = write_workspace(script, tmp_path / "ws", case_dir)
    first, second = script.calls
    assert first.fixture == ".replay/etc_x.txt" and second.fixture == ".replay/etc_x-2.txt"
    assert (root / first.fixture).read_bytes() == output.encode("utf-8")
    assert (root / second.fixture).read_bytes() == b""
    assert (root / "src" / "main.go").read_text() == "package main\n"
    assert not (tmp_path / "etc").exists()


def test_a_call_id_used_again_later_gets_its_own_output_and_fixture():
    script = script_from_session(_session(
        Message("user", "go"),
        Message("assistant", "", (_call("t1"),)), Message("tool", "first", tool_call_id="t1"),
        Message("user", "again"),
        Message("assistant", "", (_call("t1"),)), Message("tool", "second", tool_call_id="t1"),
    ))
    assert [(c.fixture, c.output) for c in script.calls] == [(".replay/t1.txt", "first"),
                                                               (".replay/t1-2.txt", "second")]
