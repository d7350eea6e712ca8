"""Evaluate one case: open its clients, replay it through the compaction path, grade every probe under
each control, and build its case record (results.schema)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from harness.cases.schema import Case
from harness.compaction import Compactor, Replay, SummaryCall
from harness.compaction.controls import ControlSummarizer
from harness.compaction.provider import NOT_COMPACTED, ProviderSummarizer
from harness.compaction.summarizer import ModelSummarizer, Summarizer
from harness.errors import HarnessError
from harness.metrics import check_summary
from harness.models import ModelClient, cassette_path, open_client
from harness.models.cassette_claim import FolderClaimed
from harness.models.compaction_item import item_reference
from harness.policy import make_policy
from harness.redact import redact
from harness.results.schema import (CaseOutcome, CaseRecord, ContextRecord, CostRecord, EventRecord, SummaryRecord,
                                    Timeline, TimingRecord, Timings, UsageTotals)
from harness.run.config import RunConfig, RunPlan, plan_run
from harness.run.failed_requests import Named
from harness.run.grading import Answerers, Stopped, grade_probes
from harness.run.spend import Meters, role_costs
from harness.scripted.normalise import key_normaliser


@dataclass
class Clients:
    """One client per model spec within a case, so a cassette file has one writer. A repeat of a case
    (`--repeat`) is a separate sample with its own cassette (`<case>.r1`), replayed as recorded."""

    plan: RunPlan
    case_id: str
    opened: dict[str, ModelClient] = field(default_factory=dict)

    def get(self, spec: str) -> ModelClient:
        if spec not in self.opened:
            cassette = None
            if self.plan.spec(spec).provider != "builtin":
                cassette = cassette_path(self.plan.cassettes, self.case_id, spec)
            config = self.plan.config
            # a runtime's prompts carry its scratch paths, dates and minted ids: keys normalise them
            key = key_normaliser(None) if self.plan.runtime is not None else None
            self.opened[spec] = open_client(spec, cassette_path=cassette, record_mode=config.record_mode,
                                            case_id=self.case_id, timeout=config.request_timeout, cassette_key=key,
                                            max_retries=config.retries, transport=self.plan.transport(spec),
                                            limiter=self.plan.limiter(spec), record_errors=config.record_errors)
        return self.opened[spec]

    def close(self) -> None:
        for client in self.opened.values():
            client.close()


def evaluate_case(case: Case, config: RunConfig | RunPlan, repeat: int = 0) -> dict[str, Any]:
    """The case file's document (a dict, for callers that read the JSON form)."""
    return case_record(case, plan_run(config), repeat).to_json()


def guarded_case_record(case: Case, plan: RunPlan, repeat: int = 0) -> CaseRecord:
    """A case's record, or its error record: one failing case is reported and the others go on."""
    try:
        return case_record(case, plan, repeat)
    except FolderClaimed:  # another process's recording holds the cassettes: the run stops, with that line
        raise
    except HarnessError as exc:
        return CaseRecord.failed(case.id, case.pool, repeat, redact(str(exc)))
    except Exception as exc:  # isolate the case; the run goes on and reports it, naming the case's file
        return CaseRecord.failed(case.id, case.pool, repeat, redact(f"{case.directory / 'case.toml'}: "
                                                                    f"{type(exc).__name__}: {exc}"))


def case_record(case: Case, plan: RunPlan, repeat: int = 0) -> CaseRecord:
    config = plan.config
    started = time.perf_counter()
    clients = Clients(plan, case.id if not repeat else f"{case.id}.r{repeat}")
    try:
        template = config.instruction_for(case)
        summarizer: Summarizer = ModelSummarizer(clients.get(config.summarizer_spec), plan.summarizer.model,
                                                 cache=config.cache, sections=config.sections, template=template)
        if plan.summarizer.compacts:  # the provider's own compaction; its client answers probes on the item
            summarizer = ProviderSummarizer(clients.get(config.summarizer_spec), config.sections, template)
        if config.control:
            summarizer = ControlSummarizer(config.control, summarizer)
        driven = None
        if plan.runtime is not None:  # the runtime compacts with its own trigger, prompt and tail; we replay it
            from harness.run import runtime as rt

            sizes = plan.policy_config(case)
            driven = rt.driven_case(case, plan.runtime, clients.get(config.summarizer_spec), plan.runtime_logs,
                                    config.runtime_compaction, sizes.context_window, sizes.max_output_tokens,
                                    config.runtime_settings, config.runtime_fault, config.runtime_canary,
                                    config.runtime_control, rt.pricing_of(plan), config.runtime_sandbox,
                                    config.runtime_window_recorded)
            case = driven.case
        policy_config = plan.policy_config(case)
        policy = make_policy(config.policy, policy_config)
        if driven is not None:  # a runtime that never compacted is graded on what it sent, uncompacted
            policy = replace(policy, none_is_fine=True)
        if config.at_points:
            from harness.policy.recorded import at_recorded_points

            policy = at_recorded_points(policy, config.recorded_tail, config.summary_tokens)
        points = set(case.points) | {"end"}
        # a summarizer request that fails for good stops the replay there; the probes before it stand
        compactor = Compactor(case.session, policy, summarizer, points=points, stop_on_failure=True,
                              true=case.true_tokens)
        replay = compactor.run()
        if driven is not None:  # graded on what the runtime sent, its own cuts of tool outputs included
            replay.snapshots = rt.as_sent(replay.snapshots, driven.sent)
        replayed = time.perf_counter()
        meters = Meters(clients.get(config.answerer_spec), clients.get(config.judge) if config.judge else None)
        judge_spec = plan.judge
        judge = Named(meters.judge, "judge") if meters.judge is not None else None
        answerers = Answerers(Named(meters.answerer, "answer"), plan.answerer.model, judge,
                              judge_spec.model if judge_spec else "")
        runtime = driven.record if driven is not None else None
        probes = grade_probes(case, replay, answerers, plan.answerer_window(case), compactor.failure,
                              Stopped.of(runtime))
        if driven is not None and driven.control is not None:  # the same probes on what the control sent
            cut, empty = rt.control_case(case, replay, driven.control)
            control = grade_probes(cut, empty, answerers, plan.answerer_window(cut))
            runtime = {**runtime, "control": {**runtime["control"], **rt.split(probes, control)}}
        graded = time.perf_counter()
    finally:
        clients.close()
    summaries = [SummaryRecord.from_json(_summary_json(case, call, config)) for call in replay.summaries]
    calls = [(call.request, call.result) for call in replay.summaries]
    outcome = CaseOutcome(
        messages=len(case.session.messages),
        events=tuple(EventRecord.from_event(e) for e in replay.events),
        risk_counts=tuple(replay.risk_counts().items()),
        summaries=(*summaries, *_recorded_summaries(case, replay)),
        probes=tuple(probes),
        usage=_usage_totals(calls),
        cost=summary_cost(calls, plan),
        role_costs=role_costs(plan, calls, meters),
        timings=Timings(round(replayed - started, 4), round(graded - replayed, 4),
                        tuple(TimingRecord.from_event(e) for e in replay.events)),
        contexts=tuple((point, ContextRecord.from_snapshot(s)) for point, s in sorted(replay.snapshots.items())),
        context_whole=all(s.live_start == 0 and s.summary is None and not s.kept for s in replay.snapshots.values()),
        timeline=Timeline(policy_config.context_window, policy_config.reserve_tokens, tuple(replay.timeline)),
        failure=compactor.failure, runtime=runtime)
    return CaseRecord(case.id, case.pool, repeat, "ok", outcome=outcome)


def _summary_json(case: Case, call: SummaryCall, config: RunConfig) -> dict[str, Any]:
    """A summary measured against its own compaction; a rejected one (no compaction) is marked so."""
    request, result = call.request, call.result
    superseded = [value for probe in case.probes if probe.kind == "update" and probe.planted_at < call.tail_start
                  for value in probe.none]
    reference = item_reference(result.text)
    text = result.text if reference is None else (reference.readable or "")  # the checks read what is readable
    check = check_summary(call.event.number if call.event else None, text, request.head,
                          request.previous_summary, call.request_tokens, call.summary_tokens, config.sections,
                          superseded, earlier=case.session.messages[:request.head_start], forms=case.normal_forms)
    return {**check.to_json(), "model": result.model, "finish_reason": result.finish_reason,
            "truncated": bool(result.extra.get("truncated")), "latency_source": result.latency_source,
            **({"over_budget_tokens": result.extra["over_budget_tokens"]} if result.extra.get("over_budget_tokens")
               else {}),
            **({"opaque": True} if reference is not None and reference.readable is None else {}),
            **_unfolded(call)}


def _unfolded(call: SummaryCall) -> dict[str, Any]:
    """A call that made no compaction: the policy rejected its summary, or the provider returned no item."""
    if not call.rejected:
        return {}
    return {"not_compacted": True} if call.result.finish_reason == NOT_COMPACTED else {"rejected": True}


def _recorded_summaries(case: Case, replay: Replay) -> list[SummaryRecord]:
    """The summary-level checks of the session's own summaries (the `recorded` policy), as for ours; the
    section check is left out (the sections are our prompt's, not the agent's)."""
    from harness.policy.recorded import recorded_points

    recorded = [e for e in replay.events if e.source == "recorded"]
    if not recorded:
        return []
    points = recorded_points(case.session)
    out, previous = [], None
    for event, point in zip(recorded, points):
        head = case.session.messages[event.head_start:event.tail_start]
        superseded = [v for probe in case.probes if probe.kind == "update" and probe.planted_at < event.tail_start
                      for v in probe.none]
        head_tokens = case.true_tokens.span(range(event.head_start, event.tail_start))  # counted once per run
        check = check_summary(event.number, point.summary, head, previous, head_tokens, event.summary_tokens, (),
                              superseded, earlier=case.session.messages[:event.head_start], forms=case.normal_forms)
        out.append(SummaryRecord.from_json({**check.to_json(), "model": f"recorded:{point.origin}",
                                            "finish_reason": "recorded", "truncated": False,
                                            "latency_source": "recorded"}))
        previous = point.summary
    return out


def summary_cost(calls, plan: RunPlan) -> CostRecord:
    """Dollars of the summarizer calls (only they are charged to compaction), labelled by usage source:
    live (billed), recorded (a cassette), modelled (the emulator's cache simulation)."""
    from harness.models.pricing import cost

    spec = plan.summarizer
    sources = "/".join(sorted({result.latency_source for _, result in calls}))
    if plan.prices is None:
        return CostRecord(None, sources, note="no price for a custom server")
    usd = sum(cost(result.usage, str(spec), plan.prices) for _, result in calls if result.usage is not None)
    return CostRecord(round(usd, 6), sources or None, round(usd / len(calls), 6) if calls else None)


def _usage_totals(calls) -> UsageTotals:
    total = {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0}
    for _, result in calls:
        if result.usage is not None:
            for key in total:
                total[key] += getattr(result.usage, key)
    return UsageTotals(**total, calls=len(calls))
