"""POLICY.md's trigger and tail rules, each on a small hand-built session with the tail written out."""

import pytest

from harness.errors import HarnessError
from harness.policy import ContextView, PolicyConfig, SendPoint, make_policy
from harness.policy.default import turn_first_tail
from harness.tokens import MessageTokens, counter

from builders import Builder


def view(session, end=None, live_start=0):
    tokens = MessageTokens(counter("chars4"), session.messages)
    return ContextView(session, live_start, len(session.messages) if end is None else end, tokens.__getitem__)


def config(**settings):
    return PolicyConfig(context_window=settings.pop("context_window", 100_000), **settings)


def five_small_turns():
    b = Builder()
    for _ in range(5):
        b.user(10)
        b.step(50)
        b.step()
    return b  # turn k starts at 4k: user, asst+tool, asst


def test_all_three_turns_fit():
    session = five_small_turns().session()
    plan = turn_first_tail(config(), view(session))
    assert (plan.tail_start, plan.tail.turns, plan.tail.steps, plan.tail.truncated_to_step) == (8, 3, 6, False)


def test_oldest_turns_dropped_until_the_tail_fits():
    b = Builder()
    b.user(10); b.step(5000)          # turn 0: 0..2
    b.user(10); b.step(9000)          # turn 1: 3..5  (~9.03K)
    b.user(10); b.step(8000)          # turn 2: 6..8  (~8.03K)
    b.user(10); b.step(7000)          # turn 3: 9..11 (~7.03K)
    plan = turn_first_tail(config(), view(b.session()))
    # turns 1-3 are ~24K > 16384: drop turn 1; turns 2-3 are ~15K and fit.
    assert (plan.tail_start, plan.tail.turns, plan.tail.steps) == (6, 2, 2)


def test_one_turn_over_the_cap_is_cut_to_its_last_step():
    b = Builder()
    b.user(10); b.step()                             # turn 0: 0..1
    b.user(10); b.step(9000); b.step(9000); b.step(3)  # turn 1: user 2, steps at 3, 5, 7
    plan = turn_first_tail(config(tail_turns=1), view(b.session()))
    assert (plan.tail_start, plan.tail.turns, plan.tail.steps, plan.tail.truncated_to_step) == (7, 1, 1, True)


def test_last_turn_alone_over_the_cap_after_dropping_older_turns():
    b = Builder()
    b.user(10); b.step(100)                           # turn 0: 0..2
    b.user(10); b.step(100)                           # turn 1: 3..5
    b.user(10); b.step(12000); b.step(12000)          # turn 2: user 6, steps 7, 9
    plan = turn_first_tail(config(), view(b.session()))
    assert (plan.tail_start, plan.tail.truncated_to_step) == (9, True)


def test_one_step_over_the_cap_is_kept_whole():
    b = Builder()
    b.user(10); b.step(100)                # 0..2
    b.user(10); b.step(40000)              # user 3, step 4..5 (40K alone, over the cap)
    plan = turn_first_tail(config(), view(b.session()))
    assert (plan.tail_start, plan.tail.steps, plan.tail.truncated_to_step) == (4, 1, True)
    assert view(b.session()).span_tokens(4, 6) > 16384  # never less than one step


def test_parallel_tool_calls_stay_in_one_step():
    b = Builder()
    b.user(10); b.step(100)                    # 0..2
    b.user(10); b.step(9000); b.step(4000, 4000, 4000)  # user 3, step 4..5, parallel step 6..9
    session = b.session()
    plan = turn_first_tail(config(), view(session))
    assert plan.tail_start == 6  # the assistant message with all three results, none split off
    assert [m.role for m in session.messages[6:]] == ["assistant", "tool", "tool", "tool"]


def test_mid_turn_trigger_puts_the_turns_user_message_in_the_head():
    b = Builder()
    b.user(10); b.step(100)                      # 0..2
    b.user(10, tag="fix the parser"); b.step(9000); b.step(9000)  # user 3, steps 4, 6; send at 8
    session = b.session()
    plan = turn_first_tail(config(), view(session, end=8))
    assert plan.tail_start == 6 and plan.tail_start > 3  # the user message (3) is folded


def test_trigger_fires_at_exactly_window_minus_reserve():
    policy = make_policy("default", config(context_window=100_000, reserve_tokens=16384))
    assert policy.should_compact(SendPoint(5, 83_616, False))
    assert not policy.should_compact(SendPoint(5, 83_615, False))
    assert policy.should_compact(SendPoint(5, 90_000, True))  # between tool rounds too


def test_off_and_disabled_never_fire():
    for settings in ({"mode": "off"}, {"enabled": False}):
        policy = make_policy("default", config(**settings))
        assert not policy.should_compact(SendPoint(5, 10**9, False))


def test_defaults_are_the_policy_under_test():
    c = PolicyConfig(context_window=200_000)
    assert (c.enabled, c.mode, c.reserve_tokens, c.tail_turns, c.tail_cap_tokens) == (
        True, "read_write", 16384, 3, 16384)


def test_bad_settings_are_clear_errors():
    with pytest.raises(HarnessError, match="unknown mode"):
        config(mode="sometimes")
    with pytest.raises(HarnessError, match="unknown policy 'nope'"):
        make_policy("nope", config())
