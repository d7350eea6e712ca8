"""What a runtime re-sends (harness/models/emulator/resent.py, body.py): a request's check looks again only at
history items no recent request carried at the same place, with JSON's equality (`true` is not `1`), its nesting
check holds for new items as it did for whole bodies, and a body is parsed from where it changed into exactly
what json.loads reads."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings, strategies as st

from harness.models.emulator.body import Bodies
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.request_schema import MAX_DEPTH, check_request, parse_body
from harness.models.emulator.resent import Resent, depth_and_plain
from harness.validate import depth_exceeds

BLOCK = {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": True}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 40,
            "messages": [{"role": "user", "content": "Which port?"},
                         {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                                            "input": {"n": 1}}]},
                         {"role": "user", "content": [BLOCK]}]}


def test_a_boolean_where_a_recent_request_had_a_number_is_checked_again() -> None:
    """`1 == True` in Python: an item equal to a checked one by `==` but not as JSON must still be refused."""
    resent = Resent()
    check_request("anthropic", copy.deepcopy(MESSAGES), resent)
    swapped = copy.deepcopy(MESSAGES)
    swapped["messages"][2]["content"][0]["is_error"] = 1
    assert swapped["messages"] == MESSAGES["messages"]  # Python cannot tell them apart
    with pytest.raises(EmulatorError, match=r"messages\[2\]\.content\[0\]\.is_error: must be a boolean"):
        check_request("anthropic", swapped, resent)


def test_a_field_resent_exactly_is_the_object_first_checked_and_a_changed_one_is_checked_again() -> None:
    resent = Resent()
    first = copy.deepcopy(MESSAGES) | {"tools": [{"name": "bash", "input_schema": {"type": "object"}}],
                                       "stream": True}
    check_request("anthropic", first, resent)
    again = copy.deepcopy(first)
    check_request("anthropic", again, resent)
    assert again["tools"] is first["tools"] and again["messages"][1] is first["messages"][1]
    again = copy.deepcopy(first) | {"stream": 1}  # equal in Python, not in JSON
    with pytest.raises(EmulatorError, match="stream: must be a boolean"):
        check_request("anthropic", again, resent)


def test_a_history_that_changed_at_its_head_is_checked_from_there() -> None:
    """A compaction rewrites the head: every item from the first changed one is new."""
    resent = Resent()
    check_request("anthropic", copy.deepcopy(MESSAGES), resent)
    rewritten = copy.deepcopy(MESSAGES)
    rewritten["messages"][0]["content"] = "Summary: port 9090."
    rewritten["messages"][2]["content"][0]["content"] = 5
    with pytest.raises(EmulatorError, match=r"messages\[2\]\.content\[0\]\.content: must be"):
        check_request("anthropic", rewritten, resent)


def test_a_new_item_nesting_past_the_limit_is_refused_and_one_at_it_is_not() -> None:
    resent = Resent()
    body = copy.deepcopy(MESSAGES)
    check_request("anthropic", body, resent)

    def nested(levels: int) -> dict:  # an object `levels` deep, as a tool's input
        value: dict = {}
        for _ in range(levels - 1):
            value = {"a": value}
        return value

    # the body, messages, the message, content, the block: 5 levels above the input
    at_limit = copy.deepcopy(body)
    at_limit["messages"].append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t2", "name": "bash", "input": nested(MAX_DEPTH - 5)}]})
    assert check_request("anthropic", at_limit, resent) is at_limit
    past = copy.deepcopy(body)
    past["messages"].append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t2", "name": "bash", "input": nested(MAX_DEPTH - 4)}]})
    with pytest.raises(EmulatorError, match=f"nests deeper than {MAX_DEPTH}"):
        check_request("anthropic", past, resent)
    text = json.dumps(past)
    assert depth_exceeds(text, MAX_DEPTH) and not depth_exceeds(json.dumps(at_limit), MAX_DEPTH)
    with pytest.raises(EmulatorError, match=f"nests deeper than {MAX_DEPTH}"):  # and outside the history
        check_request("anthropic", parse_body(json.dumps({**body, "metadata": nested(MAX_DEPTH)}).encode()))


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner,
                                                                               max_size=3), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(0, 8))
def test_depth_and_plain_agree_with_the_text(value, limit) -> None:
    text = json.dumps(value)
    deep, plain = depth_and_plain(value, limit)
    assert deep == depth_exceeds(text, limit)
    if not deep:
        assert plain == (not any(isinstance(v, (bool, int, float)) for v in _leaves(value)))


@settings(max_examples=300, deadline=None)
@given(st.lists(JSON, max_size=5), st.lists(JSON, max_size=5))
def test_known_items_are_equal_as_json(before, now) -> None:
    """What `reuse` skips is exactly what a JSON text comparison would: the same items, types included; those
    items are put back as the objects first looked at, the rest left alone."""
    resent = Resent()
    resent.remember("r", before, [depth_and_plain(v, 50)[1] for v in before], {}, {}, None)
    texts = [json.dumps(v, sort_keys=True) for v in before], [json.dumps(v, sort_keys=True) for v in now]
    expected = 0
    while expected < min(len(before), len(now)) and texts[0][expected] == texts[1][expected]:
        expected += 1
    mine = list(now)
    assert len(resent.reuse("r", mine)) == expected
    assert all(a is b for a, b in zip(mine[:expected], before)) and mine[expected:] == now[expected:]
    assert [json.dumps(v, sort_keys=True) for v in mine] == texts[1]


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


ITEM = st.dictionaries(st.sampled_from(["role", "content", "n", "ok"]), JSON, max_size=3)


def _body(history, extra, spaced: bool) -> bytes:
    body = {"model": "m", "messages": history, **extra}
    return json.dumps(body, indent=1 if spaced else None).encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(ITEM, max_size=6), st.lists(ITEM, max_size=3), st.integers(0, 6), st.booleans(),
       st.dictionaries(st.sampled_from(["tools", "stream", "x"]), JSON, max_size=2))
def test_a_body_parsed_from_where_it_changed_is_what_json_reads(first, added, cut, spaced, extra) -> None:
    """Bodies.parse gives json.loads's object for a growing, cut or rewritten history, spaced or not, and the
    items it did not parse again are the previous body's objects."""
    bodies = Bodies()
    before = _body(first, extra, spaced)
    assert bodies.parse("openai", before) == json.loads(before)
    later = _body(first[:cut] + added, extra, spaced)
    parsed = bodies.parse("openai", later)
    assert json.dumps(parsed, sort_keys=True) == json.dumps(json.loads(later), sort_keys=True)


def test_a_body_that_begins_as_the_last_reuses_its_items_and_one_that_breaks_json_is_refused_as_before() -> None:
    bodies = Bodies()
    history = [{"role": "user", "content": f"step {i}"} for i in range(5)]
    first = bodies.parse("openai", _body(history, {"tools": []}, False))
    later = bodies.parse("openai", _body(history + [{"role": "user", "content": "next"}], {"tools": []}, False))
    assert all(a is b for a, b in zip(first["messages"], later["messages"])) and len(later["messages"]) == 6
    changed = history[:3] + [{"role": "user", "content": "step 3, retold"}] + history[4:]
    again = bodies.parse("openai", _body(changed, {"tools": []}, False))
    assert [a is b for a, b in zip(again["messages"], later["messages"])] == [True] * 3 + [False] * 2
    assert again["messages"] == changed
    for bad, words in ((_body(history, {}, False)[:-1], "body is not JSON"),
                       (_body(history, {}, False) + b" x", "body is not JSON"),
                       (_body(history, {}, False).replace(b'"step 4"', b'NaN'), "NaN is not a JSON number"),
                       (b"[" * 5000 + b"]" * 5000, f"nests deeper than {MAX_DEPTH}")):
        with pytest.raises(EmulatorError, match=words):
            bodies.parse("openai", bad)
    numbers = bodies.parse("openai", b'{"model": "m", "messages": [1, 2]}')
    assert bodies.parse("openai", b'{"model": "m", "messages": [12, 2]}')["messages"] == [12, 2] != numbers
