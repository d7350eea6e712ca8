"""Asking probes of a context and grading the answers.

For each probe point there are three conditions (EVALUATION.md): `compacted` (what the policy produced),
`full` (the whole history: the ceiling) and `floor` (the same tail with no summary). Grades:
`retained` (the expected facts are in the context text; no model), `answered` (a model answers; the
probe's matchers grade it) and, when a judge is given, `judged` (0 to 5 with a reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from harness.cases.schema import Probe
from harness.compaction import ContextSnapshot
from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse
from harness.session import Message, Session, message_text
from harness.chat import chat_message

CONDITIONS = ("compacted", "full", "floor")
ANSWER_INSTRUCTION = "Answer from the conversation above, briefly and exactly.\n\nQuestion: {question}"
JUDGE_SYSTEM = ("You grade an answer to a question about an agent session. Score it from 0 to 5 against the "
                "expected facts: 5 all facts right, 0 none or contradicted. Reply with `score: N` on the first "
                "line and a one-line reason on the second.")
ANSWER_TOKENS = 512
JUDGE_TOKENS = 200
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Case, whitespace and path separators do not matter when matching facts."""
    return _SPACE.sub(" ", text.replace("\\", "/").lower()).strip()


@dataclass(frozen=True)
class Match:
    passed: bool
    missing: tuple[str, ...] = ()  # `all` items with no alternative present
    forbidden: tuple[str, ...] = ()  # `none` items present
    regex_ok: bool = True


class Text:
    """A text to match probes against, normalised once: a long context is asked many questions."""

    def __init__(self, raw: str):
        self.raw = raw

    @cached_property
    def normalised(self) -> str:
        return normalise(self.raw)


def match(text: str | Text, probe: Probe, *, check_none: bool = True, check_regex: bool = True) -> Match:
    text = text if isinstance(text, Text) else Text(text)
    haystack = text.normalised
    missing = tuple(item[0] for item in probe.all if not any(normalise(a) in haystack for a in item))
    forbidden = tuple(n for n in probe.none if normalise(n) in haystack) if check_none else ()
    regex_ok = True
    if check_regex and probe.regex is not None:
        regex_ok = re.search(probe.regex, text.raw, re.IGNORECASE | re.MULTILINE) is not None
    return Match(not missing and not forbidden and regex_ok, missing, forbidden, regex_ok)


def retained(context_text: str | Text, probe: Probe) -> Match:
    """Facts present in the context itself. Superseded values are expected in a history, so `none` does
    not apply here; a regex only when it is the probe's sole matcher (regexes usually shape answers)."""
    return match(context_text, probe, check_none=False, check_regex=not probe.all)


# ---------------------------------------------------------------------------------------------
# the three conditions of a snapshot


@dataclass(frozen=True)
class Condition:
    name: str
    system: str | None
    messages: tuple[Message, ...]
    summary: str | None  # shown as the first user message when kept messages are empty
    kept: tuple[Message, ...] = ()

    def chat(self) -> tuple[ChatMessage, ...]:
        summary = (ChatMessage("user", self.summary),) if self.summary else ()
        return (*map(chat_message, self.kept), *summary, *map(chat_message, self.messages))

    def text(self) -> str:
        parts = [self.system or "", *(message_text(m) for m in self.kept), self.summary or "",
                 *(message_text(m) for m in self.messages)]
        return "\n".join(p for p in parts if p)


def conditions(session: Session, snapshot: ContextSnapshot) -> dict[str, Condition]:
    kept, summary, tail = snapshot.parts(session)
    return {
        "compacted": Condition("compacted", session.system, tuple(tail), summary, tuple(kept)),
        "full": Condition("full", session.system, session.messages[:snapshot.end], None),
        "floor": Condition("floor", session.system, tuple(tail), None, tuple(kept)),
    }


# ---------------------------------------------------------------------------------------------
# asking and judging


def answer_request(condition: Condition, probe: Probe, model: str) -> ModelRequest:
    history = condition.chat()
    question = ChatMessage("user", ANSWER_INSTRUCTION.format(question=probe.question))
    return ModelRequest(model, condition.system, (*history, question), ANSWER_TOKENS,
                        cache_prefix_messages=len(history), label=f"answer:{probe.id}:{condition.name}")


def judge_request(probe: Probe, answer: str, model: str) -> ModelRequest:
    expected = "; ".join(" or ".join(item) for item in probe.all) or f"matches /{probe.regex}/"
    wrong = f"\nMust not state: {'; '.join(probe.none)}" if probe.none else ""
    rubric = f"\nRubric: {probe.rubric}" if probe.rubric else ""
    prompt = f"Question: {probe.question}\nExpected facts: {expected}{wrong}{rubric}\nAnswer to grade: {answer}"
    return ModelRequest(model, JUDGE_SYSTEM, (ChatMessage("user", prompt),), JUDGE_TOKENS, cache=False,
                        label=f"judge:{probe.id}")


_SCORE = re.compile(r"score\s*[:=]?\s*([0-5])", re.IGNORECASE)


def parse_judgement(text: str) -> tuple[int | None, str]:
    found = _SCORE.search(text)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    reason = lines[1] if len(lines) > 1 else (lines[0] if lines else "")
    return (int(found.group(1)) if found else None), reason


@dataclass(frozen=True)
class Grade:
    retained: bool
    answered: bool | None
    answer: str | None
    missing: tuple[str, ...]
    forbidden: tuple[str, ...]
    judged: int | None = None
    judge_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, ())}


def grade(condition: Condition, probe: Probe, answerer: ModelClient | None, answerer_model: str,
          judge: ModelClient | None = None, judge_model: str = "", context_text: Text | None = None) -> Grade:
    kept = retained(context_text if context_text is not None else condition.text(), probe).passed
    if answerer is None:
        return Grade(kept, None, None, (), ())
    response: ModelResponse = answerer.complete(answer_request(condition, probe, answerer_model))
    result = match(response.text, probe)
    score = reason = None
    if judge is not None:
        score, reason = parse_judgement(judge.complete(judge_request(probe, response.text, judge_model)).text)
    return Grade(kept, result.passed, response.text, result.missing, result.forbidden, score, reason,
                 response.usage.__dict__ if response.usage else None)
