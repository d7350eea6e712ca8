"""`--window recorded` without a runtime: each adapter's trigger rule, the window at which it fires at a given
context, how many prompts a calibration sends, and the context read from what the runtime sent there."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases import load_case
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.chat import openai_prompt_tokens
from harness.runtimes.adapter import load
from harness.runtimes.observe import Observed
from harness.runtimes.window import TriggerRule, context_at, prompts_to_reach, recorded_point, rule_of
from harness.scripted.steps import script_from_session

REAL = sorted(p for p in Path("cases").glob("real-*") if p.is_dir())


@pytest.mark.parametrize("name, max_output, context, window", [
    ("pi", 32000, 150_000, 181_999),     # the overflow (prompt + 32000 > window) comes before window - 16384
    ("pi", 8192, 150_000, 166_383),      # its own threshold, window - 16384
    ("codex", 32000, 150_000, 166_666),  # 90% of the window
    ("opencode", 32000, 150_000, 181_999),
])
def test_each_shipped_adapter_states_a_rule_that_fires_at_the_context_it_is_given(name, max_output, context, window):
    rule = rule_of(load(name))
    assert rule.window_for(context, max_output) == window
    assert context - 1 <= rule.threshold(window, max_output) < context  # that context reaches it, one less does not


def test_a_rule_that_never_reaches_the_context_has_no_window_and_one_with_a_share_rounds_up():
    assert TriggerRule("min(window, 100000) - max_output").window_for(150_000, 8192) is None
    rule = TriggerRule("0.9 * window - 1000")
    window = rule.window_for(90_001, 0)
    assert rule.threshold(window, 0) >= 90_000 > rule.threshold(window - 1, 0)


def test_an_adapter_without_a_rule_has_none():
    assert rule_of(load("qwen-code")) is None


@pytest.mark.parametrize("case_dir", REAL, ids=lambda p: p.name)
def test_a_calibration_of_a_real_case_sends_the_prompts_up_to_the_turn_of_its_first_compaction(case_dir):
    case = load_case(case_dir)
    script = script_from_session(case.session)
    position = recorded_point(case)
    assert position is not None  # every real case compacted
    sent = prompts_to_reach(script, case, position)
    assert 1 <= sent <= len(script.prompts)
    steps_in_reach = [s for s in script.steps if s.turn < sent]
    assert any(s.source is not None and s.source >= position for s in steps_in_reach) or \
        sent == len(script.prompts)  # the turn that reaches the point is sent
    assert not any(s.source is not None and s.source >= position for s in script.steps if s.turn < sent - 1)


def test_the_context_at_the_point_is_the_servers_count_of_the_request_that_asked_for_that_step():
    case = load_case("cases/real-agentstuff-22")
    script = script_from_session(case.session)
    position = recorded_point(case)
    step = next(s for s in script.steps if s.source is not None and s.source >= position)
    payload = {"messages": [{"role": "user", "content": "x " * 500}], "tools": []}
    asked = ModelRequest("m", None, (ChatMessage("user", "x " * 500),), 100)
    seen = [Observed(1, "turn", ModelRequest("m", None, (ChatMessage("user", "a"),), 100), {}, step.number - 2, "r"),
            Observed(2, "turn", asked, {}, step.number - 1, "r", wire="openai", payload=payload),
            Observed(3, "turn", asked, {}, step.number - 1, None, wire="openai", payload=payload),  # refused
            Observed(4, "turn", ModelRequest("m", None, (ChatMessage("user", "later"),), 100), {}, step.number, "r")]
    assert context_at(seen, script, case, position) == len(openai_prompt_tokens(payload)) > 400
    assert context_at(seen[:1], script, case, position) is None  # the drive never reached it


def test_a_tool_call_request_is_counted_with_its_calls():
    call = ToolCallSpec("c1", "bash", {"command": "cat .replay/c1.txt"})
    request = ModelRequest("m", "sys", (ChatMessage("user", "go"), ChatMessage("assistant", "", (call,)),
                                        ChatMessage("tool", "out", tool_call_id="c1")), 100)
    from harness.runtimes.window import reported_tokens

    bare = Observed(1, "turn", request, {}, 0, "r", wire="responses")
    assert reported_tokens(bare) > reported_tokens(Observed(1, "turn", ModelRequest("m", "sys", (), 100), {}, 0, "r"))
