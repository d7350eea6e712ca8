"""The judge: a 0 to 5 score of one answer against the expected facts and the facts it must not state.

It reads the rubric request the harness sends (a JSON object: question, expected, expected_pattern,
must_not_state, rubric, answer; see harness.probes.judge_request), each field apart, and replies with the JSON
object the rubric asks for. Items match as the probes' matchers do (harness.matching): on token boundaries, and a
must-not value counts only where the answer states it as current.
"""

from __future__ import annotations

import json
import re

from harness.matching import Haystack, contains, states
from harness.models.base import ModelRequest
from harness.models.builtin.text import clip, last_user


def _reply(score: int, reason: str) -> tuple[str, str]:
    return json.dumps({"score": score, "reason": reason}), "stop"


def _fields(request: ModelRequest) -> dict | None:
    user = last_user(request)
    try:
        data = json.loads(user.content.split("\n\nYour previous reply", 1)[0]) if user else None
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def score(expected: list[list[str]], pattern: str | None, must_not: list[str], answer: str) -> tuple[int, str]:
    """5: every expected fact and nothing forbidden; 1-4: partly right; 1: right but hedged among forbidden
    values; 0: nothing right, or a forbidden value stated with the right one missing."""
    text = Haystack(answer)
    found = [any(contains(text, alt) for alt in item) for item in expected]
    if pattern is not None:
        found.append(re.search(pattern, answer, re.IGNORECASE | re.MULTILINE) is not None)
    stated = [n for n in must_not if states(text, n)]
    share = sum(found) / len(found)
    missing = [item[0] for item, ok in zip(expected, found) if not ok]
    if stated:
        value = 1 if share == 1 else 0
        return value, f"states {clip(', '.join(stated), 80)}, which must not be stated as current"
    if share == 1:
        return 5, f"all {len(found)} expected facts, nothing forbidden"
    value = 0 if share == 0 else min(4, int(1 + 3 * share + 0.5))
    return value, f"{sum(found)} of {len(found)} expected facts; missing: {clip('; '.join(missing), 120)}"


def judge(request: ModelRequest) -> tuple[str, str]:
    fields = _fields(request)
    if fields is None or not isinstance(fields.get("answer"), str):
        return _reply(0, "the request holds no JSON object with an answer to grade")
    expected = [[str(a) for a in item] if isinstance(item, list) else [str(item)]
                for item in fields.get("expected") or []]
    pattern = fields.get("expected_pattern")
    if not expected and not isinstance(pattern, str):
        return _reply(0, "no expected facts were given to grade against")
    must_not = [str(n) for n in fields.get("must_not_state") or []]
    return _reply(*score(expected, pattern if isinstance(pattern, str) else None, must_not, fields["answer"]))
