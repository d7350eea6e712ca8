"""Grading a case's probes: every probe under each condition, the ceiling within the answerer's window, and
the requests ordered context by context.

Requests on one context go one after another, the context's first request before the others: it writes the
prompt cache (Anthropic: the breakpoint on the context's last message; OpenAI: the context's
prompt_cache_key) and the rest read it. A context over the answerer's window is not sent: a provider would
reject it (EVALUATION.md: the compacted grade fails, and the report counts it). A request that failed for good
costs only the grades that needed it (run.failed_requests).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from harness.cases.schema import Case, Probe
from harness.compaction import ContextSnapshot, Replay
from harness.metrics import age_bucket
from harness.models.base import ModelClient
from harness.failure import RequestFailure
from harness.probes import CONDITIONS, Condition, ContextText, conditions, oracle_condition
from harness.results.schema import ConditionGrade, ProbeRecord
from harness.run.ceiling import AnswererWindow, Ceiling, CeilingBuilder
from harness.run.failed_requests import condition_grade, lost_probe

NOT_FITTING = "the messages establishing its facts do not fit the answerer's window"


@dataclass(frozen=True)
class Ask:
    """One answer request to make: a probe under a condition, on the context named `context`."""

    probe: int
    condition: str
    context: tuple[str, ...]
    asked: Condition
    not_sent: str | None = None  # why this context reached no model (a runtime that stopped before the point)


@dataclass(frozen=True)
class Stopped:
    """A real runtime gave up a turn and went no further: from the first case message it never asked for
    (`position`) on, nothing it could send holds a fact, so the compacted condition there is empty."""

    position: int
    reason: str

    @classmethod
    def of(cls, runtime: dict | None) -> Stopped | None:
        """The stop a runtime's drive record (harness.runtimes.record) names, if any."""
        if not runtime or runtime.get("stopped") is None:
            return None
        return cls(runtime["stopped_position"], runtime["stopped"])


@dataclass
class Answerers:
    answerer: ModelClient
    model: str
    judge: ModelClient | None = None
    judge_model: str = ""


def grade_probes(case: Case, replay: Replay, models: Answerers, window: AnswererWindow,
                 failure: RequestFailure | None = None, stopped: Stopped | None = None) -> list[ProbeRecord]:
    """Every probe graded under each condition; after a failed summarizer request (`failure`, which stopped
    the replay), the probes whose point was never reached record it instead; past a runtime's stop
    (`stopped`), the compacted condition is empty and names the stop."""
    builder = CeilingBuilder(case.session, case.true_tokens, window, case.normal_forms)
    asks: list[Ask] = []
    ceilings: dict[int, Ceiling] = {}
    at_point: dict[str, Ceiling] = {}
    for index, probe in enumerate(case.probes):
        snapshot = replay.snapshots.get(probe.at)
        if snapshot is None:
            continue
        if probe.at not in at_point:
            asked_here = [p for p in case.probes if p.at == probe.at]
            at_point[probe.at] = builder.for_point(asked_here, snapshot.end)
        ceilings[index] = at_point[probe.at]
        own = not ceilings[index].shows(probe) and ceilings[index].kind == "oracle"
        if own:  # the point's oracle could not hold this probe's facts beside the others': its own oracle
            ceilings[index] = builder.oracle([probe], snapshot.end)
        asks += _asks(case, index, probe, snapshot, ceilings[index], own, stopped)
    grades = _ask_all(case, asks, models, window)
    return [_record(case, replay, i, p, ceilings.get(i), grades, failure) for i, p in enumerate(case.probes)]


def _asks(case: Case, index: int, probe: Probe, snapshot: ContextSnapshot, ceiling: Ceiling,
          own: bool = False, stopped: Stopped | None = None) -> list[Ask]:
    named = conditions(case.session, snapshot)
    keys = {name: (probe.at, name) for name in CONDITIONS}
    if ceiling.kind == "oracle":
        named["full"] = oracle_condition(case.session, ceiling.messages(case.session))
        keys["full"] = (probe.at, "oracle", probe.id) if own else (probe.at, "oracle")
    past_stop = stopped is not None and snapshot.end > stopped.position
    if past_stop:
        named["compacted"] = Condition("compacted", case.session.system, (), None)
        keys["compacted"] = ("runtime-stopped",)
    reason = f"not sent: {stopped.reason}" if past_stop else None
    return [Ask(index, name, keys[name], named[name], reason if name == "compacted" else None)
            for name in CONDITIONS]


def _ask_all(case: Case, asks: list[Ask], models: Answerers,
             window: AnswererWindow) -> dict[tuple[int, str], ConditionGrade]:
    """Context-major order: a context's requests follow its first one, which warms the cache."""
    by_context: dict[tuple[str, ...], list[Ask]] = {}
    for ask in asks:
        by_context.setdefault(ask.context, []).append(ask)
    grades: dict[tuple[int, str], ConditionGrade] = {}
    for context, group in by_context.items():
        condition = group[0].asked
        text: ContextText = condition.text(case.normal_forms)  # the messages normalised once for all contexts
        size = condition.prompt_tokens(case.true_tokens)
        too_big = None if window.fits(size) else (f"not sent: {size} tokens exceed the answerer's window "
                                                  f"({window.window} with {window.answer_tokens} for the answer)")
        not_sent = group[0].not_sent or too_big
        key = _cache_key(case.id, context)
        for ask in group:
            grades[(ask.probe, ask.condition)] = condition_grade(
                ask.asked, case.probes[ask.probe], models.answerer, models.model, models.judge, models.judge_model,
                text, cache_key=key, not_sent=not_sent)
    return grades



def _cache_key(case_id: str, context: tuple[str, ...]) -> str:
    """One prompt_cache_key per context (OpenAI routes by it plus the prompt's first tokens)."""
    return "ctx-" + hashlib.sha256("\x1f".join((case_id, *context)).encode()).hexdigest()[:24]


def _record(case: Case, replay: Replay, index: int, probe: Probe, ceiling: Ceiling | None,
            grades: dict[tuple[int, str], ConditionGrade], failure: RequestFailure | None) -> ProbeRecord:
    snapshot = replay.snapshots.get(probe.at)
    if snapshot is None and failure is not None:
        return lost_probe(probe, failure, expected_facts(probe))
    if snapshot is None or ceiling is None:
        return ProbeRecord(probe.id, probe.kind, probe.at, False, invalid_reason=f"probe point {probe.at} never reached",
                           question=probe.question, expected=expected_facts(probe))
    mine = {name: grades[(index, name)] for name in CONDITIONS}
    full, floor = mine["full"], mine["floor"]
    valid = bool(full.answered if full.answered is not None else full.retained) and ceiling.shows(probe)
    age = snapshot.end - probe.planted_at
    return ProbeRecord(
        probe.id, probe.kind, probe.at, valid, planted_at=probe.planted_at, fact_age=age,
        age_bucket=age_bucket(age),
        compactions_survived=sum(1 for e in replay.events[:snapshot.compactions] if e.tail_start > probe.planted_at),
        invalid_reason=None if valid else _invalid_reason(ceiling, probe, full),
        floor_survives=bool(floor.answered if floor.answered is not None else floor.retained),
        conditions=tuple((name, mine[name]) for name in CONDITIONS),
        compactions_before=snapshot.compactions, question=probe.question, expected=expected_facts(probe),
        ceiling=ceiling.kind,
        ceiling_tokens=ceiling.tokens if ceiling.kind == "oracle" else None)


def _invalid_reason(ceiling: Ceiling, probe: Probe, full: ConditionGrade) -> str:
    if not ceiling.shows(probe):
        return NOT_FITTING
    if full.failure is not None:
        return f"not graded on its ceiling ({ceiling.kind}): the {full.failure.request} request failed"
    return "fails on the full history" if ceiling.kind == "full" else "fails on the oracle ceiling"


__all__ = ["Answerers", "NOT_FITTING", "Stopped", "grade_probes"]


def expected_facts(probe: Probe) -> tuple[str, ...]:
    """The probe's expected facts as a reader sees them: each item's alternatives, then its regex."""
    items = tuple(" or ".join(alternatives) for alternatives in probe.all)
    return items + ((f"matches /{probe.regex}/",) if probe.regex else ())
