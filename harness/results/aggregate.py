"""Aggregates of a run: pass rates by condition, kind, pool, fact age and compactions survived; summary
checks, usage, cost and latency.

Built incrementally: `Aggregator.add` folds one case record into running counts, so the aggregates after
each finished case cost the same at case 190 as at case 19. `aggregate(records)` is the same fold over a
whole list. The dict helpers at the top (`ok_records`, `passed`) serve renderers that read run.json.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Iterable

from harness.metrics import Rate, normalised_retention
from harness.probes import CONDITIONS
from harness.results.headline import agreement, headline, inapplicable, judged, never_compacted
from harness.results.schema import Aggregates, CaseRecord, ProbeRecord, TimingRecord
from harness.results.spend import add_role_costs, finish_role_costs

GRADES = ("answered", "retained")
# The groupings of probe rates, named as in run.json.
GROUPINGS = ("by_kind", "by_pool", "by_age", "by_compactions_survived")
OVERALL = ("overall", "")


def ok_records(records: Iterable[dict]) -> list[dict]:
    return [r for r in records if r.get("status") == "ok"]


def passed(probe: dict, condition: str, grade: str) -> bool | None:
    result = probe.get("conditions", {}).get(condition, {})
    return result.get(grade)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _groups_of(record: CaseRecord, probe: ProbeRecord) -> tuple[tuple[str, str], ...]:
    return (OVERALL, ("by_kind", probe.kind), ("by_pool", record.pool),
            ("by_age", probe.age_bucket or "?"), ("by_compactions_survived", str(probe.compactions_survived or 0)))


class Aggregator:
    """Running totals over the case records of one run. Sums of integers, lists of the figures that need
    percentiles or means (exact whatever the order cases finish in), and per-case figures whose order in
    run.json follows the case files (errors, compactions, dollars)."""

    def __init__(self, records: Iterable[CaseRecord] = ()) -> None:
        self.records: dict[str, CaseRecord] = {}
        self._reset()
        for record in records:
            self.add(record)

    def _reset(self) -> None:
        self.rate_counts: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0])
        self.group_names: dict[str, set[str]] = {name: set() for name in GROUPINGS}
        self.answered_graded = False
        self.probes = self.valid_probes = self.floor_survives = 0
        self.invalid_probes: list[str] = []
        self.unreached_probes = 0  # invalid because the replay never reached their point (never graded)
        self.failed: dict[str, list[dict[str, Any]]] = {}  # case key -> the grades its failed requests cost
        self.ungraded = 0  # probes a failed request left neither valid nor invalid
        self.summary_values: dict[str, list[float]] = defaultdict(list)
        self.summary_counts: dict[str, int] = defaultdict(int)
        self.usage: dict[str, int] = {}
        self.timings: list[TimingRecord] = []
        self.timings_by_model: dict[tuple[str, str], list[TimingRecord]] = defaultdict(list)
        # per record key: (case, probe) as in run.json, for the headline, and the case's facts; read in case-file
        # order, so the resampled intervals do not depend on the order cases finished in
        self.rows_of: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
        self.case_facts: dict[str, dict[str, Any]] = {}
        self.role_costs: dict[str, dict[str, Any]] = {}
        self.ceilings: dict[str, int] = defaultdict(int)

    def add(self, record: CaseRecord) -> None:
        """Fold in a finished case. A case seen before (a failed case run again on --resume) replaces its
        earlier record, which needs a recount: rare, so the counts are rebuilt."""
        if record.key in self.records:
            self.records[record.key] = record
            self._reset()
            for known in self.records.values():
                self._count(known)
            return
        self.records[record.key] = record
        self._count(record)

    def _count(self, record: CaseRecord) -> None:
        if record.outcome is None:
            return
        case = {"case": record.case, "pool": record.pool}
        self._count_failures(record)
        for probe in record.outcome.probes:
            self._count_probe(record, probe)
            if probe.failure is None:  # a probe lost whole to a failed request is in no group
                self.rows_of[record.key].append((case, probe.to_json()))
        self.case_facts[record.key] = {**case, "status": "ok", "events": record.outcome.events,
                                       "context_whole": record.outcome.context_whole}
        self._count_summaries(record)
        add_role_costs(self.role_costs, record.outcome.role_costs)
        for key, value in record.outcome.usage.to_json().items():
            self.usage[key] = self.usage.get(key, 0) + value
        model_of = {e.number: e.summarizer for e in record.outcome.events}
        for timing in record.outcome.timings.compactions:
            self.timings.append(timing)
            self.timings_by_model[(model_of.get(timing.number, "?"), timing.latency_source)].append(timing)

    def _count_probe(self, record: CaseRecord, probe: ProbeRecord) -> None:
        self.probes += 1
        if probe.ceiling:
            self.ceilings[probe.ceiling] += 1
        self.ceilings["not_sent"] += sum(1 for _, g in probe.conditions or () if (g.error or "").startswith("not sent"))
        groups = _groups_of(record, probe)
        for name, value in groups[1:]:
            self.group_names[name].add(value)
        if probe.passed("full", "answered") is not None:
            self.answered_graded = True
        ceiling = probe.grade("full")
        if probe.failure is not None or not probe.valid and ceiling is not None and ceiling.failure is not None:
            self.ungraded += 1  # lost whole, or the ceiling's answer failed: unknown, neither valid nor invalid
            return
        if not probe.valid:
            self.invalid_probes.append(f"{record.case}/{probe.id}")
            self.unreached_probes += probe.conditions is None
            return
        self.valid_probes += 1
        self.floor_survives += bool(probe.floor_survives)
        for grade in GRADES:
            if grade == "answered" and probe.failures:  # an answer missing under one condition: none paired
                continue
            for condition in CONDITIONS:
                outcome = probe.passed(condition, grade)
                if outcome is None:
                    continue
                for name, value in groups:
                    counts = self.rate_counts[(name, value, grade, condition)]
                    counts[0] += bool(outcome)
                    counts[1] += 1

    def _count_failures(self, record: CaseRecord) -> None:
        """One entry per grade a failed request cost (a whole probe, or one condition's answer), and the
        replay's own failure when it cost no probe."""
        outcome, entries = record.outcome, []
        for probe in outcome.probes:
            for condition, failure in probe.failures:
                entries.append({"probe": probe.id, "at": probe.at,
                                **({} if condition is None else {"condition": condition}), **failure.to_json()})
        if outcome.failure is not None and not any(p.failure for p in outcome.probes):
            entries.append({"probe": None, **outcome.failure.to_json()})
        if entries:
            self.failed[record.key] = entries

    def _count_summaries(self, record: CaseRecord) -> None:
        for summary in record.outcome.summaries if record.outcome else ():
            self.summary_counts["count"] += 1
            if summary.opaque or summary.not_compacted:  # nothing readable to measure
                continue
            for name in ("summary_tokens", "compression_ratio", "artifact_recall", "artifact_precision"):
                value = getattr(summary, name)
                if value is not None:
                    self.summary_values[name].append(value)
            self.summary_counts["hallucinated_paths"] += len(summary.hallucinated_paths)
            self.summary_counts["stale_facts"] += len(summary.stale_facts)
            self.summary_counts["missing_sections"] += len(summary.sections_missing)
            self.summary_counts["truncated"] += bool(summary.truncated)
            self.summary_counts["over_budget"] += bool(summary.over_budget_tokens)

    # -- the aggregates document

    def result(self, final: bool = True) -> Aggregates:
        """The aggregates document; `final` adds the resampled (case-clustered) intervals, computed once a run
        has finished rather than after every case."""
        keys = sorted(self.records, key=lambda k: f"{k}.json")
        in_file_order = [self.records[key] for key in keys]
        ok = [r for r in in_file_order if r.outcome is not None]
        grade = "answered" if self.answered_graded else "retained"
        return {
            "grade": grade,
            "cases": len(in_file_order),
            "cases_ok": len(ok),
            "errors": {r.case: r.error for r in in_file_order if r.status == "error"},
            "failed_requests": self._failed_requests(),
            "probes": self.probes,
            "valid_probes": self.valid_probes,
            "invalid_probes": sorted(self.invalid_probes),
            "unreached_probes": self.unreached_probes,
            "floor_survives": self.floor_survives,
            "overall": {g: self._rates(OVERALL, g) for g in GRADES},
            **{name: {value: self._rates((name, value), grade) for value in sorted(self.group_names[name])}
               for name in GROUPINGS},
            "compactions": {r.case: len(r.outcome.events) for r in ok},
            "summary": self._summary(),
            "usage": dict(self.usage),
            "cost": _cost(ok),
            "cost_by_role": finish_role_costs(self.role_costs),
            "ceilings": dict(sorted(self.ceilings.items())),
            "latency": {**_latency(self.timings), "by_model": self._latency_by_model()},
            **self._headline(grade, final, keys),
        }

    def _failed_requests(self) -> dict[str, Any]:
        probes = sum(len({e["probe"] for e in entries if e["probe"] is not None}) for entries in self.failed.values())
        return {"probes": probes, "ungraded": self.ungraded,
                "cases": {key: self.failed[key] for key in sorted(self.failed)}}

    def _headline(self, grade: str, final: bool, keys: list[str]) -> dict[str, Any]:
        """EVALUATION.md: the headline is over summary-testing probes, with the other groups beside it. A probe
        with an answer lost to a failed request is left out of the answer grades (counted in failed_requests)."""
        retained = [row for key in keys for row in self.rows_of.get(key, ())]
        answered = [row for row in retained if not any("failure" in g for g in row[1].get("conditions", {}).values())]
        rows = {"answered": answered, "retained": retained}
        graded = [g for g in GRADES if any(p.get("conditions", {}).get("full", {}).get(g) is not None
                                           for _, p in rows[g]) and not inapplicable(rows[g], g)]
        return {"headline": {g: headline(rows[g], g, cluster=final) for g in graded},
                "agreement": agreement(answered) if "answered" in graded else None,
                "judged": judged(answered),
                "never_compacted": never_compacted(sorted((self.case_facts[k] for k in keys if k in self.case_facts),
                                                   key=lambda c: c["case"]))}

    def _rates(self, group: tuple[str, str], grade: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for condition in CONDITIONS:
            passed_, total = self.rate_counts.get((*group, grade, condition), (0, 0))
            out[condition] = Rate(passed_, total).to_json()
        values = [out[c]["rate"] for c in CONDITIONS]
        out["normalised_retention"] = (None if None in values else
                                       _round(normalised_retention(values[0], values[1], values[2])))
        return out

    def _summary(self) -> dict[str, Any]:
        values, counts = self.summary_values, self.summary_counts
        return {"count": counts["count"], "mean_tokens": _mean(values["summary_tokens"]),
                "mean_compression_ratio": _mean(values["compression_ratio"]),
                "mean_artifact_recall": _mean(values["artifact_recall"]),
                "mean_artifact_precision": _mean(values["artifact_precision"]),
                "hallucinated_paths": counts["hallucinated_paths"], "stale_facts": counts["stale_facts"],
                "missing_sections": counts["missing_sections"], "truncated": counts["truncated"],
                "over_budget": counts["over_budget"]}

    def _latency_by_model(self) -> list[dict[str, Any]]:
        """Compaction latency per summarizer model and per source of its model time (live/recorded/modelled)."""
        return [{"summarizer": model, "latency_source": source, **_latency(timings)}
                for (model, source), timings in sorted(self.timings_by_model.items())]


def aggregate(records: Iterable[CaseRecord]) -> Aggregates:
    return Aggregator(records).result()


def _cost(ok: list[CaseRecord]) -> dict[str, Any]:
    costs = [r.outcome.cost for r in ok if r.outcome.cost.usd is not None]
    compactions = sum(len(r.outcome.events) for r in ok)
    compacting = sum(1 for r in ok if r.outcome.events and r.outcome.cost.usd is not None)
    total = sum(c.usd for c in costs)  # summed in case-file order, as the figure has always been
    sources = sorted({part for c in costs for part in (c.source or "").split("/") if part})
    return {"usd": round(total, 6) if costs else None,
            "per_compaction": round(total / compactions, 6) if costs and compactions else None,
            # over the sessions that compacted: the divisor `compaction-harness cost` uses
            "per_session": round(total / compacting, 6) if costs and compacting else None,
            "source": "/".join(sources) or None}


def _latency(timings: list[TimingRecord]) -> dict[str, Any]:
    sources = sorted({t.latency_source for t in timings})
    harness = [t.harness_time_s for t in timings]
    model = [t.model_time_s for t in timings]
    return {"compactions": len(timings), "model_time_source": "/".join(sources) or None,
            "harness_p50_s": _round(percentile(harness, 50)), "harness_p95_s": _round(percentile(harness, 95)),
            "model_p50_s": _round(percentile(model, 50)), "model_p95_s": _round(percentile(model, 95))}


__all__ = ["GRADES", "Aggregator", "aggregate", "ok_records", "passed", "percentile"]
