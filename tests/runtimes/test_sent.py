"""What a runtime sent at a probe point, without a runtime: the request that asked for the first step at or after
the point (the last one answered, after a mid-turn compaction's retry), its tool outputs shown in place of the
case's where it cut them; and the control's split of the run's lost probes into cut and compaction losses."""

from __future__ import annotations

from harness.compaction import ContextSnapshot
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.probes import conditions
from harness.results.schema import ConditionGrade, ProbeRecord
from harness.run.runtime import split
from harness.runtimes.observe import Observed
from harness.runtimes.sent import sent_contexts, step_starts
from harness.scripted.steps import script_from_session
from harness.session import Message, Session

LONG = "CODENAME HERON\n" + "filler line\n" * 50 + "tail: all pods ready"
CUT = "tail: all pods ready\n[Showing the last 20 bytes]"


def _session() -> Session:
    call = (ToolCallSpec("c1", "bash", {"command": "cat log"}),)
    return Session((
        Message("user", "Read the log."),                      # 0
        Message("assistant", "Reading.", tool_calls=call),     # 1
        Message("tool", LONG, tool_call_id="c1"),              # 2
        Message("assistant", "All pods are ready."),           # 3
        Message("user", "Thanks, what next?"),                 # 4
        Message("assistant", "Nothing: done."),                # 5
    ))


def _turn(seq: int, used: int, *messages: ChatMessage, reply: str | None = "ok") -> Observed:
    return Observed(seq, "turn", ModelRequest("m", "agent", tuple(messages), 100), {}, used, reply)


def _seen() -> list[Observed]:
    user, ask = ChatMessage("user", "Read the log."), ChatMessage("assistant", "Reading.", (ToolCallSpec("c1", "bash", {}),))
    output = ChatMessage("tool", CUT, tool_call_id="c1")
    return [_turn(1, 0, user),
            _turn(2, 1, user, ask, output, reply=None),  # refused (past the window): not what the model answered
            _turn(3, 1, user, ask, output),
            _turn(4, 2, user, ask, output, ChatMessage("assistant", "All pods are ready."),
                  ChatMessage("user", "Thanks, what next?"))]


def test_each_point_reads_the_request_that_carried_the_case_to_it():
    session = _session()
    script = script_from_session(session)
    assert step_starts(script, session) == (1, 3, 5)
    sent = sent_contexts(_seen(), script, session)
    assert sent.at(1) == ()  # before the output: nothing differs
    assert sent.request_at(3) is _seen_request(sent, 1)
    assert sent.at(3) == ((2, CUT),) and sent.at(5) == ((2, CUT),) and sent.at(6) == ((2, CUT),)


def _seen_request(sent, step: int):
    return sent.answered[step]


def test_the_compacted_condition_shows_the_cut_output_and_the_full_one_the_case():
    session = _session()
    sent = sent_contexts(_seen(), script_from_session(session), session)
    snapshot = ContextSnapshot("end", 6, 0, None, 0, 0, 0, sent=sent.at(6))
    named = conditions(session, snapshot)
    assert "CODENAME HERON" not in named["compacted"].text().verbatim.raw
    assert CUT in named["compacted"].text().verbatim.raw
    assert "CODENAME HERON" in named["full"].text().verbatim.raw


def _probe(pid: str, compacted: bool, full: bool = True) -> ProbeRecord:
    grades = (("compacted", ConditionGrade(retained=compacted)), ("full", ConditionGrade(retained=full)))
    return ProbeRecord(pid, "recall", "end", True, conditions=grades)


def test_the_split_names_cut_losses_apart_from_compaction_losses():
    run = [_probe("cut", False), _probe("folded", False), _probe("kept", True), _probe("control-only", True)]
    control = [_probe("cut", True, full=False), _probe("folded", True), _probe("kept", True),
               _probe("control-only", True, full=False)]
    out = split(run, control)
    assert out["retained"] == {"lost_to_cuts": ["cut"], "lost_to_compaction": ["folded"],
                               "lost": ["cut", "folded"], "lost_in_control_only": ["control-only"]}
    assert "answered" not in out  # no answerer graded it


def test_a_probe_the_case_fails_is_no_loss():
    invalid = ProbeRecord("x", "recall", "end", False, conditions=(("compacted", ConditionGrade(retained=False)),))
    assert split([invalid], [])["retained"]["lost"] == []


def test_a_control_without_a_runtime_to_compare_is_a_usage_error(tmp_path, capsys):
    from harness.cli import main

    assert main(["run", "--runtime-control", "--cases", "edge-32k-window", "--out", str(tmp_path)]) == 2
    assert main(["run", "--runtime", "pi", "--runtime-compaction", "off", "--runtime-control",
                 "--cases", "edge-32k-window", "--out", str(tmp_path)]) == 2
    assert "--runtime-control" in capsys.readouterr().err and not any(tmp_path.iterdir())
