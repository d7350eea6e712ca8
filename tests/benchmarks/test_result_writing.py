"""Result writing per finished case: run.json rebuilt from memory (incremental) against the old rebuild
that re-read every case file and re-aggregated them all after every case (quadratic over a run).

The folder is fed the library's case records (a builtin run over cases/, made once per module) at 19
cases and ten times over at 190 (ids renamed); each round starts from a folder holding those and adds one
more case, so a round is the work one finished case costs: its case file, and run.json rewritten with it.
With `--benchmark-disable` (the default test run) two small hand-made cases stand in for the library, so
the suite stays fast while the paths are still exercised.

    pytest tests/benchmarks/test_result_writing.py --benchmark-columns=min,median,mean,max,rounds

The comparator below (`old_rebuild_run`, `old_aggregate`) is the code as it was before the redesign, kept
here only to measure against.
"""

from __future__ import annotations

import copy
import json
import statistics
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

import pytest

from harness.cases import discover
from harness.metrics import Rate, normalised_retention
from harness.probes import CONDITIONS
from harness.results.aggregate import percentile
from harness.results.folder import RunFolder, _write_text as write_text, read_run, write_json
from harness.results.schema import CaseRecord
from harness.run.config import RunConfig
from harness.run.matrix import run_cases, run_header

ROOT = Path(__file__).parents[2]
SIZES = {"19-cases": 1, "190-cases": 10}  # the library once, and ten times over


@pytest.fixture(scope="module")
def library(request, tmp_path_factory) -> list[CaseRecord]:
    root = tmp_path_factory.mktemp("library")
    if request.config.getoption("benchmark_disable"):
        import sys

        sys.path.insert(0, str(ROOT / "tests"))
        from test_runner import make_case

        for name in ("a", "b"):
            make_case(root / "cases", name)
        cases = discover(root / "cases")
    else:
        cases = discover(ROOT / "cases")
    folder = RunFolder(root / "run")
    run_cases(cases, RunConfig(), folder, run_id="library")
    return folder.case_records()


def records_of(library: list[CaseRecord], size: str) -> list[CaseRecord]:
    """The library's records `SIZES[size]` times over, ids renamed (19 or 190 cases from the library)."""
    return [replace(r, case=f"{r.case}-x{i}") for i in range(SIZES[size]) for r in library]


def folder_of(records: list[CaseRecord], path: Path) -> RunFolder:
    folder = RunFolder(path)
    folder.create(run_header(RunConfig(), "bench", None), resume=False)
    for record in records:
        folder.add(record, write_run=False)
    folder.write_run()
    return folder


@pytest.mark.parametrize("size", SIZES)
def test_incremental_write(benchmark, tmp_path, library, size):
    records = records_of(library, size)
    base = folder_of(records, tmp_path / "run")
    extra = replace(records[0], case="zz-extra")  # the case that finishes: the run holds the others

    def fresh() -> tuple[tuple[RunFolder], dict]:
        return (copy.deepcopy(base),), {}  # a folder holding exactly the others, every round

    benchmark.extra_info["cases"] = len(records) + 1
    benchmark.pedantic(lambda folder: folder.add(extra), setup=fresh, rounds=10 if size == "19-cases" else 5)
    assert len(read_run(base.path)["cases"]) == len(records) + 1


@pytest.mark.parametrize("size", SIZES)
def test_bytes_floor(benchmark, tmp_path, library, size):
    """Only writing run.json's bytes, atomically: the part of a case's write that must grow with the run."""
    folder = folder_of(records_of(library, size) + [replace(library[0], case="zz-extra")], tmp_path / "run")
    data = folder.run_file.read_text(encoding="utf-8")
    benchmark.extra_info["bytes"] = len(data.encode())
    benchmark.pedantic(lambda: write_text(folder.run_file, data), rounds=20, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("size", SIZES)
def test_old_rebuild_write(benchmark, tmp_path, library, size):
    records = records_of(library, size)
    folder = folder_of(records, tmp_path / "run")  # the case files, as the old runner left them
    extra = replace(records[0], case="zz-extra")

    def one_case() -> None:
        write_json(folder.case_file(extra.case, extra.repeat), extra.to_json())
        old_rebuild_run(folder)

    benchmark.extra_info["cases"] = len(records) + 1
    benchmark.pedantic(one_case, rounds=10 if size == "19-cases" else 5, iterations=1, warmup_rounds=1)
    assert len(read_run(folder.path)["cases"]) == len(records) + 1


# -- the comparator: the old rebuild, verbatim apart from names --------------------------------


def old_rebuild_run(folder: RunFolder, finished: bool = False) -> dict[str, Any]:
    """run.json from the case files: the one place the run document is assembled."""
    from harness.results.folder import now

    run = read_run(folder.path)
    records = [json.loads(p.read_text()) for p in sorted((folder.path / "cases").glob("*.json"))]
    run["cases"] = {_record_key(r): {k: v for k, v in r.items() if k != "contexts"} for r in records}
    run["aggregates"] = old_aggregate(records)
    if finished:
        run["finished"] = now()
    write_json(folder.run_file, run)
    return run


def _record_key(record: dict[str, Any]) -> str:
    return record["case"] + (f".r{record['repeat']}" if record.get("repeat") else "")


GRADES = ("answered", "retained")


def ok_records(records: Iterable[dict]) -> list[dict]:
    return [r for r in records if r.get("status") == "ok"]


def probe_rows(records: Iterable[dict]) -> list[tuple[dict, dict]]:
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

def old_aggregate(records: list[dict]) -> dict[str, Any]:
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
            "over_budget": sum(1 for s in summaries if s.get("over_budget_tokens")),
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
