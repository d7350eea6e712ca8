"""Aggregates of a run: pass rates by condition, kind, pool, fact age and compactions survived; summary
checks, usage, cost and latency. Built from case records, read by every renderer and study."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Iterable

from harness.metrics import Rate, normalised_retention
from harness.probes import CONDITIONS

GRADES = ("answered", "retained")


def ok_records(records: Iterable[dict]) -> list[dict]:
    return [r for r in records if r.get("status") == "ok"]


def probe_rows(records: Iterable[dict]) -> list[tuple[dict, dict]]:
    """(case record, probe record) for every probe of every finished case."""
    return [(r, p) for r in ok_records(records) for p in r["probes"]]


def passed(probe: dict, condition: str, grade: str) -> bool | None:
    result = probe.get("conditions", {}).get(condition, {})
    return result.get(grade)


def rates(rows: list[tuple[dict, dict]], grade: str) -> dict[str, Any]:
    valid = [p for _, p in rows if p.get("valid")]
    out = {}
    for condition in CONDITIONS:
        outcomes = [passed(p, condition, grade) for p in valid]
        outcomes = [o for o in outcomes if o is not None]
        out[condition] = Rate(sum(outcomes), len(outcomes)).to_json()
    values = [out[c]["rate"] for c in CONDITIONS]
    out["normalised_retention"] = (None if None in values else
                                   _round(normalised_retention(values[0], values[1], values[2])))
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def grouped(rows, key, grade: str) -> dict[str, Any]:
    groups: dict[str, list] = defaultdict(list)
    for record, probe in rows:
        groups[str(key(record, probe))].append((record, probe))
    return {name: rates(members, grade) for name, members in sorted(groups.items())}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def aggregate(records: list[dict]) -> dict[str, Any]:
    rows = probe_rows(records)
    ok = ok_records(records)
    grade = "answered" if any(passed(p, "full", "answered") is not None for _, p in rows) else "retained"
    summaries = [s for r in ok for s in r.get("summaries", [])]
    timings = [t for r in ok for t in r.get("timings", {}).get("compactions", [])]
    return {
        "grade": grade,
        "cases": len(records),
        "cases_ok": len(ok),
        "errors": {r["case"]: r["error"] for r in records if r.get("status") == "error"},
        "probes": len(rows),
        "valid_probes": sum(1 for _, p in rows if p.get("valid")),
        "invalid_probes": sorted(f"{r['case']}/{p['id']}" for r, p in rows if not p.get("valid")),
        "floor_survives": sum(1 for _, p in rows if p.get("valid") and p.get("floor_survives")),
        "overall": {g: rates(rows, g) for g in GRADES},
        "by_kind": grouped(rows, lambda r, p: p["kind"], grade),
        "by_pool": grouped(rows, lambda r, p: r["pool"], grade),
        "by_age": grouped(rows, lambda r, p: p.get("age_bucket", "?"), grade),
        "by_compactions_survived": grouped(rows, lambda r, p: p.get("compactions_survived", 0), grade),
        "compactions": {r["case"]: len(r["events"]) for r in ok},
        "summary": {
            "count": len(summaries),
            "mean_tokens": _mean(s["summary_tokens"] for s in summaries),
            "mean_compression_ratio": _mean(s["compression_ratio"] for s in summaries),
            "mean_artifact_recall": _mean(s["artifact_recall"] for s in summaries),
            "mean_artifact_precision": _mean(s["artifact_precision"] for s in summaries),
            "hallucinated_paths": sum(len(s["hallucinated_paths"]) for s in summaries),
            "stale_facts": sum(len(s["stale_facts"]) for s in summaries),
            "missing_sections": sum(len(s["sections_missing"]) for s in summaries),
            "truncated": sum(1 for s in summaries if s.get("truncated")),
        },
        "usage": _sum_usage(r.get("usage", {}) for r in ok),
        "cost": _cost(ok),
        "latency": {**_latency(timings), "by_model": _latency_by_model(ok)},
    }


def _cost(ok: list[dict]) -> dict[str, Any]:
    costs = [r["cost"] for r in ok if r.get("cost", {}).get("usd") is not None]
    compactions = sum(len(r["events"]) for r in ok)
    total = sum(c["usd"] for c in costs)
    sources = sorted({part for c in costs for part in (c.get("source") or "").split("/") if part})
    return {"usd": round(total, 6) if costs else None,
            "per_compaction": round(total / compactions, 6) if costs and compactions else None,
            "per_session": round(total / len(costs), 6) if costs else None,
            "source": "/".join(sources) or None}


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 4) if present else None


def _sum_usage(usages: Iterable[dict]) -> dict[str, int]:
    total: dict[str, int] = defaultdict(int)
    for usage in usages:
        for key, value in usage.items():
            total[key] += value
    return dict(total)


def _latency(timings: list[dict]) -> dict[str, Any]:
    sources = sorted({t["latency_source"] for t in timings})
    harness = [t["harness_time_s"] for t in timings]
    model = [t["model_time_s"] for t in timings]
    return {"compactions": len(timings), "model_time_source": "/".join(sources) or None,
            "harness_p50_s": _round(percentile(harness, 50)), "harness_p95_s": _round(percentile(harness, 95)),
            "model_p50_s": _round(percentile(model, 50)), "model_p95_s": _round(percentile(model, 95))}


def _latency_by_model(ok: list[dict]) -> list[dict[str, Any]]:
    """Compaction latency per summarizer model and per source of its model time (live/recorded/modelled)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in ok:
        model_of = {e["number"]: e.get("summarizer", "?") for e in record.get("events", [])}
        for t in record.get("timings", {}).get("compactions", []):
            groups[(model_of.get(t["number"], "?"), t["latency_source"])].append(t)
    return [{"summarizer": model, "latency_source": source, **_latency(timings)}
            for (model, source), timings in sorted(groups.items())]
