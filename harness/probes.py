"""Asking probes of a context and grading the answers.

For each probe point there are three conditions (EVALUATION.md): `compacted` (what the policy produced),
`full` (the whole history: the ceiling) and `floor` (the same tail with no summary). Grades:
`retained` (the expected facts are in the context text; no model), `answered` (a model answers; the
probe's matchers grade it) and, when a judge is given, `judged` (0 to 5 with a reason).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness import probe_regex
from harness.cases.schema import Probe
from harness.compaction import ContextSnapshot
from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse
from harness.models.compaction_item import item_reference
from harness.session import Message, Session, message_text
from harness.tokens import MessageTokens
from harness.chat import chat_message
from harness.matching import (Haystack, Match, anchored, asks_absence, contains, last_stated_about, last_stated_in,
                              match_items, normalise_item, occurrences, question_anchors, stated_in)

CONDITIONS = ("compacted", "full", "floor")
ANSWER_INSTRUCTION = "Answer from the conversation above, briefly and exactly.\n\nQuestion: {question}"
JUDGE_SYSTEM = (
    "You grade one answer to a question about an agent session. Compare the answer with the expected facts and "
    "the facts it must not state as current. Score 0 to 5: 5 every expected fact right and nothing forbidden "
    "stated; 3-4 mostly right; 1-2 partly right or hedged among wrong values; 0 wrong, missing or a forbidden "
    "value stated as current. Reply with one JSON object and nothing else: "
    '{"score": <integer 0-5>, "reason": "<one sentence>"}.')
ANSWER_TOKENS = 512
JUDGE_TOKENS = 200


def anchors(probe: Probe) -> tuple[str, ...] | None:
    """What binds a fact to the probe's referent: its `anchor` words, or else the content words of its question
    (None when a question names nothing: then a fact needs no referent beside it)."""
    return probe.anchor or question_anchors(probe.question) or None


def match(text: str | Haystack, probe: Probe, *, check_none: bool = True, check_regex: bool = True) -> Match:
    """An answer graded by the probe's matchers (docs/evaluation.md: token boundaries, `none` as stated values,
    an item stated as absent missing, a long answer's items bound to the probe's referent)."""
    text = text if isinstance(text, Haystack) else Haystack(text)
    return match_items(text, probe.all, probe.none if check_none else (), probe.regex if check_regex else None,
                       anchors=anchors(probe), negatable=not asks_absence(probe.question))


@dataclass(frozen=True)
class ContextText:
    """A condition's text, normalised once (a long context is asked many questions): the verbatim messages
    (kept ahead of the summary, the tail; or the whole history) and the summary block, apart."""

    verbatim: Haystack
    summary: Haystack | None = None


def retained(context: ContextText | str, probe: Probe) -> Match:
    """The expected facts in what the context holds besides the system prompt (docs/evaluation.md): anywhere in
    the verbatim messages, or stated in the summary: in a line, sentence or clause that also names the probe's
    referent (an anchor), not stated as absent. `none`
    applies to the summary, where the compaction states values as current; verbatim history holds superseded
    values in their order. A regex counts only when it is the probe's sole matcher (regexes shape answers)."""
    if isinstance(context, str):
        context = ContextText(Haystack(context))
    verbatim, summary = context.verbatim, context.summary
    bound, negatable = anchors(probe), not asks_absence(probe.question)

    def present(item: str) -> bool:
        return contains(verbatim, item) or (summary is not None and stated_in(summary, item, bound, negatable))

    missing = tuple(item[0] for item in probe.all if not any(present(a) for a in item))
    forbidden = superseded_stated(summary, probe, bound, negatable) if summary is not None else ()
    regex_ok = True
    if probe.regex is not None and not probe.all:
        texts = [verbatim.raw] + ([u.raw for u in summary.statements] if summary is not None else [])
        regex_ok = probe_regex.search_any(probe.regex, texts)  # one time limit for all of them
    return Match(not missing and not forbidden and regex_ok, missing, forbidden, regex_ok)


def superseded_stated(summary: Haystack, probe: Probe, bound: tuple[str, ...] | None,
                      negatable: bool) -> tuple[str, ...]:
    """The probe's `none` items the summary states as current. A summary is read in order: for a fact that changed
    (kind update), a superseded value stated before the summary's last statement of the expected one is history
    ("352 tests pass" ... "345/345 tests pass"); for what remains (kind progress), an entry marked done is not left."""
    done = probe.kind == "progress"
    latest = -1
    if probe.kind == "update":
        latest = max((last_stated_in(summary, a, bound, negatable) for item in probe.all for a in item), default=-1)
    stated = ((n, last_stated_about(summary, n, bound, done)) for n in probe.none)
    return tuple(n for n, at in stated if at >= 0 and at >= latest)


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

    def text(self, forms: dict[str, str] | None = None) -> ContextText:
        """What the context holds besides the system prompt: for `compacted`, what the compaction produced
        (kept messages and tail verbatim, the summary apart); the system prompt is never retained content.
        `forms`: messages' normal forms kept across a case's contexts (Haystack.joined)."""
        verbatim = Haystack.joined((message_text(m) for m in (*self.kept, *self.messages)),
                                   {} if forms is None else forms)
        summary = self.summary
        reference = item_reference(summary)
        if reference is not None:  # a provider item: only what it lets anyone read (None when opaque)
            summary = reference.readable
        return ContextText(verbatim, Haystack(summary) if summary else None)

    def prompt_tokens(self, sizes: MessageTokens) -> int:
        """The context's true tokens: its messages from the session's table (counted once per run), its system
        prompt and summary as bare texts."""
        parts = sum(sizes.of(m) for m in (*self.kept, *self.messages))
        return parts + sum(sizes.count_text(t) for t in (self.system, self.summary) if t)

    @property
    def opaque(self) -> bool:
        """The context holds a provider compaction item nobody but its provider can read."""
        reference = item_reference(self.summary)
        return reference is not None and reference.readable is None


def conditions(session: Session, snapshot: ContextSnapshot) -> dict[str, Condition]:
    kept, summary, tail = snapshot.parts(session)
    return {
        "compacted": Condition("compacted", session.system, tuple(tail), summary, tuple(kept)),
        "full": Condition("full", session.system, session.messages[:snapshot.end], None),
        "floor": Condition("floor", session.system, tuple(tail), None, tuple(kept)),
    }


def oracle_condition(session: Session, messages: tuple[Message, ...]) -> Condition:
    """The ceiling when the full history does not fit the answerer (run.ceiling): it stands in the `full`
    slot, and the probe record says which ceiling it was."""
    return Condition("full", session.system, messages, None)


# ---------------------------------------------------------------------------------------------
# asking and judging


def answer_request(condition: Condition, probe: Probe, model: str, cache_key: str | None = None) -> ModelRequest:
    """Context first, question last: every probe on one context shares its prefix (`cache_key` names the
    context, OpenAI's prompt_cache_key, so its requests route to one cache)."""
    history = condition.chat()
    question = ChatMessage("user", ANSWER_INSTRUCTION.format(question=probe.question))
    return ModelRequest(model, condition.system, (*history, question), ANSWER_TOKENS, cache_key=cache_key,
                        cache_prefix_messages=len(history), label=f"answer:{probe.id}:{condition.name}")


def judge_request(probe: Probe, answer: str, model: str, *, retry_note: str | None = None) -> ModelRequest:
    """A rubric prompt: the question, the expected facts, the facts that must not be stated and the answer
    under test, each in its own field, so a judge (the builtin one included) reads them separately."""
    payload = {"question": probe.question,
               "expected": [list(item) for item in probe.all] or None,
               "expected_pattern": probe.regex if not probe.all else None,
               "must_not_state": list(probe.none), "rubric": probe.rubric, "answer": answer}
    prompt = json.dumps({k: v for k, v in payload.items() if v not in (None, [])}, ensure_ascii=False, indent=1)
    if retry_note:
        prompt += f"\n\n{retry_note}"
    return ModelRequest(model, JUDGE_SYSTEM, (ChatMessage("user", prompt),), JUDGE_TOKENS, cache=False,
                        label=f"judge:{probe.id}")


class JudgeReplyError(ValueError):
    """A judge reply that is not the JSON object the rubric asks for."""


def parse_judgement(text: str) -> tuple[int, str]:
    """Strict: one JSON object with an integer `score` 0-5 and a string `reason` (a code fence is tolerated)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise JudgeReplyError(f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise JudgeReplyError("not a JSON object")
    score, reason = data.get("score"), data.get("reason")
    if not isinstance(score, int) or isinstance(score, bool) or not 0 <= score <= 5:
        raise JudgeReplyError(f"score {score!r} is not an integer from 0 to 5")
    if not isinstance(reason, str):
        raise JudgeReplyError("reason is not a string")
    return score, reason.strip()


def judge_answer(judge: ModelClient, probe: Probe, answer: str, model: str) -> tuple[int | None, str]:
    """(score, reason), or (None, the error) when the reply is malformed twice: a judge error, never a 0."""
    try:
        return parse_judgement(judge.complete(judge_request(probe, answer, model)).text)
    except JudgeReplyError as first:
        note = f"Your previous reply was rejected: {first}. Reply with the JSON object only."
        try:
            return parse_judgement(judge.complete(judge_request(probe, answer, model, retry_note=note)).text)
        except JudgeReplyError as second:
            return None, f"judge error: {second}"


@dataclass(frozen=True)
class Grade:
    retained: bool | None  # None: not applicable (an opaque provider compaction item)
    answered: bool | None
    answer: str | None
    missing: tuple[str, ...]
    forbidden: tuple[str, ...]
    judged: int | None = None
    judge_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None
    judge_error: str | None = None
    in_system_prompt: tuple[str, ...] = ()  # expected items found only in the system prompt

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, ())}


def grade(condition: Condition, probe: Probe, answerer: ModelClient | None, answerer_model: str,
          judge: ModelClient | None = None, judge_model: str = "", context_text: ContextText | None = None,
          cache_key: str | None = None, not_sent: str | None = None) -> Grade:
    """`not_sent`: why the context was not asked (it exceeds the answerer's window): answered fails, as the
    provider would have rejected the request, and the reason is kept as the grade's error."""
    kept = retained(context_text if context_text is not None else condition.text(), probe)
    in_system = (tuple(m for m in kept.missing if match_items(Haystack(condition.system), ((m,),)).passed)
                 if condition.system and kept.missing else ())
    # Not applicable where the compaction is opaque: the facts may be in the item, unreadable to us.
    found = None if condition.opaque else kept.passed
    if answerer is None:
        return Grade(found, None, None, (), (), in_system_prompt=in_system)
    if not_sent is not None:
        return Grade(found, False, None, (), (), error=not_sent, in_system_prompt=in_system)
    response: ModelResponse = answerer.complete(answer_request(condition, probe, answerer_model, cache_key))
    result = match(response.text, probe)
    score = reason = error = None
    if judge is not None:
        score, reason = judge_answer(judge, probe, response.text, judge_model)
        if score is None:
            error, reason = reason, None
    return Grade(found, result.passed, response.text, result.missing, result.forbidden, score, reason,
                 response.usage.__dict__ if response.usage else None, judge_error=error, in_system_prompt=in_system)


# ---------------------------------------------------------------------------------------------
# which probes test the summary

GROUPS = ("tests_summary", "floor_answers", "no_compaction", "invalid")


def probe_group(valid: bool, compactions_before: int, floor_passes: bool) -> str:
    """EVALUATION.md: a probe tests the summary when a compaction happened before its point, it passes on the
    full history and fails on the floor. The others are reported beside the headline, never in it."""
    if not valid:
        return "invalid"
    if compactions_before == 0:
        return "no_compaction"
    return "floor_answers" if floor_passes else "tests_summary"


# ---------------------------------------------------------------------------------------------
# probe self-tests


def example_problems(probe: Probe) -> list[str]:
    """A matcher is a tiny classifier: every `accept` example must pass it and every `reject` example fail."""
    problems = []
    for answer in probe.accept:
        result = match(answer, probe)
        if not result.passed:
            problems.append(f"accept example {answer!r} fails ({result.decided_by})")
    for answer in probe.reject:
        if match(answer, probe).passed:
            problems.append(f"reject example {answer!r} passes (every item present, nothing forbidden stated)")
    return problems


# In the evidence message (a transcript: tool output, a long request) the referent may stand further from the fact
# than a summary's statement puts it; this many words either side.
EVIDENCE_WORDS = 40


def anchor_problems(probe: Probe, session: Session) -> list[str]:
    """Every probe names its referent (`anchor`: its question's words are too generic to bind a fact by), and one of
    its anchors stands beside one of its facts where the session establishes it (the `planted_at` message and the
    one before), so a summary can be asked to keep the two together."""
    if not probe.anchor:
        return ["no `anchor`: give the words naming what its fact is about (docs/evaluation.md, \"Binding a fact "
                "to its referent\"); its question's words bind by chance"]
    bound = probe.anchor
    if not probe.all or not 0 <= probe.planted_at < len(session.messages):
        return []
    # the message before it too: a tool result is about its call, a reply about what it answers
    text = Haystack(" ".join(evidence_text(m) for m in session.messages[max(0, probe.planted_at - 1):probe.planted_at + 1])).text
    spans = [(s, s + len(key)) for item in probe.all for key in map(normalise_item, item) for s in occurrences(text, key)]
    if not spans or any(anchored(text, start, end, bound, EVIDENCE_WORDS) for start, end in spans):
        return []  # (a fact established elsewhere than planted_at: the cases' own checks say where)
    return [f"its anchor ({', '.join(bound[:6])}) stands within {EVIDENCE_WORDS} words of none of its facts in message "
            f"{probe.planted_at}, where the fact is established"]


def evidence_text(message: Message) -> str:
    """The message's words and each tool call's name, argument names and values, in the call's order, as written: a
    JSON rendering would escape line breaks into the words around them and put a file's content before its path."""
    calls = (" ".join([c.name, *_strings(c.arguments)]) for c in message.tool_calls)
    return "\n".join([message.content, *calls])


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value if isinstance(value, str) else json.dumps(value)]

