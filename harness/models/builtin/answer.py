"""The answerer: the best unit of the context for the last question, as a short reply.

A retrieval answerer: the context is cut into units (context.py), each unit is scored against the question
(scoring.py), and the best unit is the answer, clipped to what the question asks for (the value alone when the
question asks for a number). A few close runners-up may join it (the second fact of a two-part answer), at most
MAX_EXTRA_UNITS, none restating another, within MAX_ANSWER_CHARS: a short answer, never a list of every
candidate, which would pass a grader by hedging (a value question gets no runners-up at all).

What it cannot read, so no target for it assumes a reading model (issue 31 withdrew the 90% full-history target
on the real pool): a fact said in other words than the question's (paraphrase, a pronoun, "that fix"); a state
that only follows from several messages together (which value is current after three edits, whether a plan was
carried out); a fact stated by what a later step did rather than by a sentence; and which of two similar lines
is the one asked about when both score alike. tools/answer_recall.py measures how far its ranking bounds it.
"""

from __future__ import annotations

import re
from collections import Counter

from harness.models import _tokens
from harness.models.base import ModelRequest
from harness.models.builtin.context import ContextCache
from harness.models.builtin.question import ask_of, question_words
from harness.models.builtin.scoring import score_units
from harness.models.builtin.text import PATH, last_user


MAX_ANSWER_CHARS = 600
MAX_UNIT_CHARS = 240
MAX_ANSWER_PATHS = 4
MAX_EXTRA_UNITS = 4
EXTRA_SHARE = 0.3  # a further unit joins the answer when it scores at least this share of the best

_PAST_CLAUSE = re.compile(r"\b(from|was|were|old|previous(ly)?|no longer|drained|deprecated|collides?|goes away|"
                          r"instead of|rather than|used to|earlier|before)\b", re.I)
_CLAUSE_SPLIT = re.compile(r"\s*(?:[;—]|,\s+|\s+\(|\)\s*|:\s+(?=[a-z])|\s(?=because\b|since\b|as\b))\s*")
_VALUE = re.compile(r"(?<![\w.])v?\d[\w.:%/-]*")


def _clip_around(unit: str, wanted: frozenset[str], limit: int = MAX_UNIT_CHARS) -> str:
    """The unit, or for a long one the window around its first question word."""
    unit = " ".join(unit.split())
    if len(unit) <= limit:
        return unit
    lower = unit.lower()
    hits = [lower.find(w) for w in sorted(wanted) if len(w) > 2 and lower.find(w) >= 0]
    start = max(0, min(hits) - limit // 3) if hits else 0
    piece = unit[start:start + limit]
    return ("…" if start else "") + piece + ("…" if start + limit < len(unit) else "")


def _current_clauses(unit: str) -> str:
    """For a question about a current value: drop the clauses of the unit that state the old one."""
    pieces: list[str] = []
    last = 0
    for match in _CLAUSE_SPLIT.finditer(unit):
        pieces.append(unit[last:match.start()])
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(unit[last:])
    clauses = pieces[0::2]
    if sum(1 for c in clauses if c.strip()) < 2:
        return unit
    keep = [bool(c.strip()) and not _PAST_CLAUSE.search(c) for c in clauses]
    if not any(keep) or all(keep or not c.strip() for keep, c in zip(keep, clauses)):
        return unit
    out: list[str] = []
    for index, clause in enumerate(clauses):
        if keep[index]:
            if out and index > 0:
                out.append(pieces[2 * index - 1])
            out.append(clause)
    text = "".join(out).strip(" ,;:—(")
    return text if text and (_VALUE.search(text) or not _VALUE.search(unit)) else unit


def _value_of(unit: str, wanted: frozenset[str]) -> str | None:
    """The value a 'number only' question asks for: the number nearest after a question word."""
    values = [(m.start(), m.group(0).rstrip(".,;:")) for m in _VALUE.finditer(unit)]
    if not values:
        return None
    lower = unit.lower()
    anchors = [m.end() for w in sorted(wanted) for m in re.finditer(re.escape(w), lower)]
    if not anchors:
        return values[-1][1]
    return min(values, key=lambda v: min((v[0] - a) if v[0] >= a else 3 * (a - v[0]) for a in anchors))[1]


_OPENS = (":", "(", "[", "{", ",")


def _with_continuation(ctx, position: int, announced: bool = False) -> str:
    """A unit that ends open ('yaml: unmarshal errors:', 'raise ValueError(') introduces the unit after it in
    the same message: the two are read as one (up to two continuations); for the best unit (`announced`) so
    does a short sentence that announces the next one."""
    unit = ctx.units[position]
    for follow in range(position + 1, min(position + 3, len(ctx.units))):
        opens = unit.rstrip().endswith(_OPENS) or (announced and follow == position + 1 and _says_little(ctx, position))
        if not opens or ctx.messages[follow] != ctx.messages[position]:
            break
        unit = unit.rstrip() + " " + ctx.units[follow]
    return unit


SHORT_SAID = 4  # content words: "There's a mismatch." announces what the next sentence says


def _says_little(ctx, position: int) -> bool:
    """A short sentence the agent said, which announces the next one ('There's a mismatch.')."""
    return ctx.said[position] and len(ctx.words[position]) <= SHORT_SAID


RESTATED = 0.5  # share of shared words above which a unit restates another


def _restates(words: frozenset[str], other: frozenset[str]) -> bool:
    return bool(words) and len(words & other) / len(words | other) >= RESTATED


def _call_output(ctx, wanted: frozenset[str], call: int) -> int | None:
    """For a best unit that is a tool call: the line of the call's output that shares the most question
    words (the last such line; a run prints its totals at the end), which holds what the step found."""
    message = ctx.messages[call]
    outputs = [p for result in (message + 1, message + 2) for p in ctx.by_message.get(result, ())
               if ctx.roles[p] == "tool" and ctx.parent[p] == message]
    if not outputs:
        return None
    return max(outputs, key=lambda p: (len(ctx.words[p] & wanted), p))


PER_OUTPUT = 2  # lines one tool output may give the answer (an error line and the line that explains it)


def _runners_up(ctx, scored: list[tuple[float, int]], best: int, wanted: frozenset[str],
                used: tuple[int, ...] = ()) -> list[str]:
    """The next best units, close in score to the best: the second fact of a two-part answer often sits in
    the message beside the first. One unit per message said (two per tool output), none restating another."""
    top = scored[0][0]
    chosen = [best, *used]
    taken = Counter((ctx.messages[p], ctx.said[p]) for p in chosen)
    extra: list[str] = []
    for score, position in scored[1:12]:
        if len(extra) >= MAX_EXTRA_UNITS or score < EXTRA_SHARE * top:
            break
        key = (ctx.messages[position], ctx.said[position])
        if taken[key] >= (1 if ctx.said[position] else PER_OUTPUT):
            continue
        if position in ctx.stale or ctx.roles[position] == "system" or position in chosen:
            continue
        if any(_restates(ctx.words[position], ctx.words[other]) for other in chosen):
            continue  # the same statement again adds nothing, and an older wording of it may be out of date
        taken[key] += 1
        chosen.append(position)
        extra.append(_clip_around(_with_continuation(ctx, position), wanted))
    return extra


def _latest_restatement(ctx, scored: list[tuple[float, int]]) -> int:
    """For a question about the current state: the latest of the close-scoring units that restate the best
    one ('-destination name=iPhone 16', later '... name=iPhone 17 Pro'): a later wording replaces an earlier."""
    top, best = scored[0]
    latest = best
    for score, position in scored[1:10]:
        if score >= EXTRA_SHARE * top and position > latest and _restates(ctx.words[position], ctx.words[best]):
            latest = position
    return latest


def answer(request: ModelRequest, contexts: ContextCache) -> tuple[str, str]:
    """(reply, finish reason) for a question: the last user message, asked of everything before it."""
    question = last_user(request)
    if question is None:
        return "I don't know.", "stop"
    text_q = question.content.rsplit("Question:", 1)[-1]
    wanted = question_words(text_q)
    ctx = contexts.get(request)
    if not ctx.units:
        return "I don't know.", "stop"
    ask = ask_of(text_q)
    scored = score_units(ctx, wanted, ask)
    if not scored:
        return "I don't know.", "stop"
    best = _latest_restatement(ctx, scored) if ask.recency else scored[0][1]
    # an earlier value for the same thing in the running: answer with the current clauses of the best unit
    current = (ask.recency and ask.value) or (ask.value and any(p in ctx.stale for _, p in scored[:3]))
    unit = _with_continuation(ctx, best, announced=True)
    lines: list[str] = []
    if ask.number_only:
        value = _value_of(_current_clauses(unit), wanted) or _value_of(unit, wanted)
        if value:
            lines.append(value)
    if not lines:
        lines.append(_clip_around(_current_clauses(unit) if current else unit, wanted))
        output = _call_output(ctx, wanted, best) if ctx.roles[best] == "call" else None
        if output is not None:
            lines.append(_clip_around(_with_continuation(ctx, output), wanted))
        if not ask.value:
            lines += _runners_up(ctx, scored, best, wanted, (output,) if output is not None else ())
    if ask.file:
        paths: list[str] = []
        for _, position in scored[:8]:
            for path in PATH.findall(ctx.units[position]):
                path = path.strip("`'\",;:()")
                if "/" in path and path not in paths and not path.startswith(("http", "//")):
                    paths.append(path)
        paths = paths[: MAX_ANSWER_PATHS if ask.files_many else 2]
        if paths:
            lines.insert(0, "Files: " + ", ".join(paths))
    text = "\n".join(lines)
    if len(text) > MAX_ANSWER_CHARS:
        text = text[: MAX_ANSWER_CHARS - 1].rstrip() + "…"
    tokens = _tokens.encode(text)
    if len(tokens) > request.max_output_tokens:
        return _tokens.decode(tokens[: request.max_output_tokens]), "length"
    return text, "stop"
