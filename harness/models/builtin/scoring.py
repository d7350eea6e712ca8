"""Ranking a context's units against a question: IDF of the shared words, then weights for what the
question asks for (a file, a value, an error, a fix, a decision, the goal, the next step) and for recency."""

from __future__ import annotations

import math
import re

from harness.models.builtin.context import Context
from harness.models.builtin.question import Ask
from harness.models.builtin.shapes import shape_weight
from harness.models.builtin.text import DECISION_CUES, ERROR_LINE, HASH, PATH, TYPED_ERROR, stem, tool_action


_UPDATE_CUES = re.compile(r"\b(update|updated|actually|after all|instead|changed?|no longer|switch(ed)? to|now|"
                          r"correction|change of plan|moved|renamed|bump(ed)?)\b", re.I)
_FIX_CUES = re.compile(r"\b(fix(ed)?|fixes|resolved|solved|instead|now|switch(ed)?|changed?|use[sd]?|apply|"
                       r"applied|moved|wrap(ped)?|replac\w+|added|handl\w+)\b", re.I)
_NEXT_UNIT_CUES = re.compile(r"\b(next|then|i'll|i will|let's|plan|todo|remaining|still|not done|not yet|"
                             r"left|after that|should|need to|will)\b", re.I)
_REMAINING_UNIT_CUES = re.compile(r"\b(not done|not yet|remaining|still|left|todo|open|pending|failing|fail(ed|s)?|"
                                  r"not started|follow-up)\b", re.I)
_STATUS_CUES = re.compile(r"^(remaining|still open|not done|not yet done|todo|next step|next|follow-up|open)\b|"
                          r"\b(remaining|still open|not started|not done yet)\b", re.I)
_INTENT_WORDS = frozenset(stem(w) for w in ("fix", "fixed", "resolve", "resolved", "solve", "solved", "handled",
                                             "handle", "next", "report", "reported", "error", "raise", "raised"))
_HAS_DIGIT = re.compile(r"\d")
_IN_FLIGHT_FRAME = frozenset(stem(w) for w in (
    "moment", "compaction", "compacted", "context", "point", "time", "progress", "being", "made", "doing",
    "examined", "worked", "working", "change", "step", "implementation", "first", "second", "third"))
# a stated value: a token with a digit (8080, 50MB, HRB-4127, kw-prod-fra2), not a commit hash (eb6269d), which
# is a name of a commit and answers no 'what size' or 'which port'
_DIGIT_TOKEN = re.compile(r"[\w.:/-]*\d[\w.:/-]*")
_HASH = re.compile(HASH)


def _states_value(unit: str) -> bool:
    return any(not _HASH.fullmatch(token) for token in _DIGIT_TOKEN.findall(unit))
# a unit that lays out alternatives is not the choice made between them
_OPTIONS = re.compile(r"^\s*(options?|alternatives?|choices?|either)\b|\(a\).*\(b\)|\b1\).*\b2\)", re.I)
_CHOICE_CUES = re.compile(r"\b(choosing|chosen|picking|picked|settled on|going for|we'll use|i'll use|"
                          r"sticking with)\b", re.I)
_GENERIC_Q = frozenset(stem(w) for w in (
    "file", "files", "what", "which", "why", "how", "happen", "step", "thing", "agent", "done", "new", "kind",
    "part", "two", "three", "first", "did", "get", "got", "made", "make", "need", "needs", "way"))


_SEARCH_TOOL = re.compile(r"^\w*(grep|glob|search|find)\w*:", re.I)
ASKED = 0.5
FOCUS_WEIGHT = 1.6
MISSING_FOCUS = 0.6
IN_FLIGHT_MESSAGES = 8  # the last messages that hold what was under way at the cut
USER_SAID = 2.5  # a question about what the user said is answered by the user's words  # a unit that names nothing of the kind asked for


def score_units(ctx: Context, wanted: frozenset[str], ask: Ask) -> list[tuple[float, int]]:
    """(score, unit position) for every candidate unit, best first; ties go to the later unit.

    The steps run in this order, and each adds to or multiplies the scores in a fixed order, because the
    answers (and the recorded cassettes) depend on the exact floating-point figures."""
    scores = _word_scores(ctx, wanted, ask)
    _add_session_candidates(ctx, ask, scores)
    own = dict(scores)
    _lend_to_siblings(ctx, own, scores)
    if ask.fix or ask.decision:
        _lend_after_errors(ctx, own, scores)
    _lend_to_steps(ctx, ask, scores)
    focus = ask.focus & ctx.postings.keys()
    scored = [(_weighted(ctx, ask, position, score) * _informative(ctx, wanted, position)
               * (1.0 if not focus or focus & ctx.words[position] else MISSING_FOCUS)
               * shape_weight(ctx.units[position], ask.shape, ask.text), position)
              for position, score in scores.items()]
    scored.sort(key=lambda pair: (-pair[0], -pair[1]))
    return scored


def _informative(ctx: Context, wanted: frozenset[str], position: int) -> float:
    """How much a unit says beyond the question: a unit made of the question's own words ('Let me run the
    suite.' for 'what did the suite report?') answers nothing; one that adds rare words (a value, a name, an
    identifier's parts) can. 1.0 once the new words weigh as much as two words found in 1% of the units."""
    novel = ctx.words[position] - wanted
    if not novel:
        return 0.35
    total = len(ctx.units)
    info = sum(math.log(1.0 + total / len(ctx.postings[w])) for w in novel)
    return min(1.0, 0.5 + 0.5 * info / (2.0 * math.log(101.0)))


def _word_scores(ctx: Context, wanted: frozenset[str], ask: Ask) -> dict[int, float]:
    """The IDF of the question words each unit shares, generic and intent words discounted."""
    total = len(ctx.units)
    idf = {w: math.log(1.0 + total / len(ctx.postings[w])) for w in sorted(wanted)
           if w in ctx.postings}
    for w in _GENERIC_Q:
        if w in idf:
            idf[w] *= 0.3
    for w in _INTENT_WORDS:  # "how was it fixed": the word 'fixed' is the kind of answer, not its topic
        if w in idf and (ask.fix or ask.next or ask.error):
            idf[w] *= 0.3
    for w in _IN_FLIGHT_FRAME:  # "at the moment of compaction": when it was asked about, not what
        if w in idf and ask.in_flight:
            idf[w] *= 0.1
    for w in ask.focus:  # the kind of thing asked for: the answer names it
        if w in idf:
            idf[w] *= FOCUS_WEIGHT
    scores: dict[int, float] = {}
    for w, weight in sorted(idf.items()):
        for position in ctx.postings[w]:
            scores[position] = scores.get(position, 0.0) + weight
    return scores


def _add_session_candidates(ctx: Context, ask: Ask, scores: dict[int, float]) -> None:
    """A goal question and a next-step question are about the session as a whole: every user/assistant unit
    is a candidate even with no word in common."""
    total = len(ctx.units)
    if ask.goal:
        for rank, position in enumerate(ctx.by_message.get(ctx.first_user, ())):
            scores[position] = scores.get(position, 0.0) + (1.5 if rank == 0 else 0.7)
    if ask.in_flight:  # the last steps are candidates with no word in common: "what was being done"
        last = ctx.messages[-1] if ctx.messages else 0
        for position in range(total - 1, -1, -1):
            if last - ctx.messages[position] > IN_FLIGHT_MESSAGES:
                break
            if ctx.roles[position] in ("assistant", "call"):
                scores.setdefault(position, 0.5)
    if ask.next or ask.remaining:
        for position in range(max(0, total - 3000), total):
            if ctx.said[position] and ctx.roles[position] != "system" and _NEXT_UNIT_CUES.search(ctx.units[position]):
                scores.setdefault(position, 0.5)


def _lend_to_siblings(ctx: Context, own: dict[int, float], scores: dict[int, float]) -> None:
    """A sentence is read with its message: "Use 1200 per batch instead." answers a question about the
    backfill when the sentence before it is about the backfill."""
    for position, score in own.items():
        if not ctx.said[position] or ctx.roles[position] == "system":
            continue
        siblings = ctx.by_message.get(ctx.messages[position], ())
        if len(siblings) > 12:
            continue
        for sibling in siblings:
            if sibling != position and ctx.said[sibling]:
                scores[sibling] = scores.get(sibling, 0.0) + 0.35 * score


def _lend_after_errors(ctx: Context, own: dict[int, float], scores: dict[int, float]) -> None:
    """What the agent says right after an error is its diagnosis and fix."""
    best_error: dict[int, float] = {}
    for position, score in own.items():
        if ctx.roles[position] == "tool" and ctx.errorish[position]:
            best_error[ctx.messages[position]] = max(best_error.get(ctx.messages[position], 0.0), score)
    for message, lent in sorted(best_error.items(), key=lambda kv: (-kv[1], -kv[0]))[:20]:
        for follow in (message + 1, message + 3):
            for position in ctx.by_message.get(follow, ()):
                if ctx.roles[position] == "assistant":
                    scores[position] = scores.get(position, 0.0) + 0.5 * lent


def _lend_to_steps(ctx: Context, ask: Ask, scores: dict[int, float]) -> None:
    """What the agent said about a step lends its score to the step's tool call and output: "Running the CLI
    tests." makes the error printed by that run, and the path the next edit touched, answers."""
    best_said: dict[int, float] = {}
    for position, score in scores.items():
        if ctx.roles[position] in ("assistant", "call"):
            message = ctx.messages[position]
            best_said[message] = max(best_said.get(message, 0.0), score)
    top_messages = sorted(best_said.items(), key=lambda kv: (-kv[1], -kv[0]))[:40]
    for message, lent in top_messages:
        for position in ctx.by_message.get(message, ()):
            if ctx.roles[position] == "call":
                scores[position] = scores.get(position, 0.0) + 0.6 * lent
        for result in (message + 1, message + 2):
            positions = ctx.by_message.get(result, ())
            short = len(positions) <= 30
            for position in positions:
                if ctx.roles[position] != "tool" or ctx.parent[position] != message:
                    continue
                share = _output_share(ctx, ask, position, short)
                if share:
                    scores[position] = scores.get(position, 0.0) + share * lent


def _output_share(ctx: Context, ask: Ask, position: int, short: bool) -> float:
    """How much of a step's score its printed output gets (0: none, for a long output that is no error)."""
    if ask.error and ctx.errorish[position]:
        return 0.7
    if not short:
        return 0.0
    if ask.value and _HAS_DIGIT.search(ctx.units[position]):
        return 0.4
    return 0.25


def _weighted(ctx: Context, ask: Ask, position: int, score: float) -> float:
    """The unit's score weighted by its shape (length, speaker, code, staleness, recency), then by how well
    it fits what the question asks for."""
    return _intent_weighted(ctx, ask, position, _shape_weighted(ctx, ask, position, score))


def _shape_weighted(ctx: Context, ask: Ask, position: int, score: float) -> float:
    total = len(ctx.units)
    unit = ctx.units[position]
    role = ctx.roles[position]
    norm = 1.0 - 0.4 + 0.4 * ctx.lengths[position] / ctx.avg_length
    score /= max(norm, 0.5) ** 0.5
    if ctx.said[position]:
        score *= 0.6 if role == "system" else 1.3
    if ctx.code[position]:
        score *= 0.5
    if unit.rstrip().endswith("?") and not (ask.goal or ask.next or ask.remaining):
        score *= ASKED  # a question states nothing: the answer is elsewhere
    if role == "call" and not ask.command and _SEARCH_TOOL.match(unit):
        score *= ASKED  # a search names what was looked for, not what was found
    if position in ctx.stale:  # a value restated later is out of date
        score *= 0.15 if ask.recency else 0.3
    if ask.recency or ask.value:  # a later stated value replaces an earlier one
        score *= 1.0 + (1.2 if ctx.said[position] else 0.3) * position / total
    if (ask.recency or ask.value) and ctx.said[position] and _UPDATE_CUES.search(unit):
        score *= 1.4
    return score


def _intent_weighted(ctx: Context, ask: Ask, position: int, score: float) -> float:
    total = len(ctx.units)
    unit = ctx.units[position]
    role = ctx.roles[position]
    if ask.goal:
        if role == "user":
            score *= 4.0 if ctx.messages[position] == ctx.first_user else 1.2
        else:
            score *= 0.7 if role == "assistant" else 0.3
    if ask.constraint and not ask.goal:
        score *= 2.0 if role == "user" else (1.0 if role == "system" else 0.7)
    elif ask.user and not ask.goal:
        score *= USER_SAID if role == "user" else 0.7
    if ask.error:
        if not ctx.said[position] and (TYPED_ERROR.search(unit) or ERROR_LINE.search(unit)):
            score *= 2.5
        elif TYPED_ERROR.search(unit):
            score *= 1.6
    if ask.fix:
        if ctx.said[position] and role == "assistant" and _FIX_CUES.search(unit):
            score *= 2.0
        elif role in ("tool", "call") and ERROR_LINE.search(unit):
            score *= 0.5
    if ask.decision and role == "assistant" and (DECISION_CUES.search(unit) or _CHOICE_CUES.search(unit)
                                                 or "because" in unit.lower()):
        score *= 2.0
    if (ask.decision or ask.fix) and _OPTIONS.search(unit):
        score *= 0.5
    if ask.file:
        score *= 1.8 if PATH.search(unit) else 0.6
        if role == "call" and tool_action(unit.split(":", 1)[0]) in ("edited", "created"):
            score *= 1.5
    if ask.value and not ask.file:
        score *= 1.5 if _states_value(unit) else 0.7
    if ask.command and role == "call":
        score *= 1.5
    if ask.in_flight:  # the closer to the end of the history, the likelier what was under way
        behind = (ctx.messages[-1] if ctx.messages else 0) - ctx.messages[position]
        score *= 3.0 if behind <= 2 else (2.0 if behind <= IN_FLIGHT_MESSAGES else 0.2)
        if role in ("call", "assistant"):
            score *= 1.3
    if ask.next or ask.remaining:
        cues = _REMAINING_UNIT_CUES if ask.remaining else _NEXT_UNIT_CUES
        if ctx.said[position] and role != "system":
            cue = 3.0 if _STATUS_CUES.search(unit) else (1.6 if cues.search(unit) else 1.0)
            score *= cue * (1.0 + 2.0 * position / total) * (1.3 if role == "assistant" else 1.0)
        else:
            score *= 0.3
    return score
