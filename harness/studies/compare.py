"""Configurations side by side: pass rates with intervals, retention, compactions, summary size, cost,
latency, and pairwise significance on the probes two runs share."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from harness.errors import HarnessError
from harness.studies.gate import outcomes
from harness.metrics import bootstrap_difference, mcnemar_exact


def label_of(run: dict[str, Any]) -> str:
    config = run["configuration"]
    name = run.get("label") or f"{config['policy']} / {config['model']} / {config['summarizer_spec']}"
    return name + ("" if config.get("cache", True) else " (cache off)")


def comparison(runs: list[dict[str, Any]]) -> dict[str, Any]:
    if len(runs) < 2:
        raise HarnessError("compare needs two or more runs")
    grades = {run["aggregates"]["grade"] for run in runs}
    grade = "answered" if "answered" in grades and len(grades) == 1 else "retained"
    columns = []
    for run in runs:
        agg = run["aggregates"]
        columns.append({
            "run": run["run_id"], "label": label_of(run), "configuration": run["configuration"],
            "pass_rate": agg["overall"][grade]["compacted"],
            "full": agg["overall"][grade]["full"], "floor": agg["overall"][grade]["floor"],
            "normalised_retention": agg["overall"][grade]["normalised_retention"],
            "by_kind": {k: v["compacted"] for k, v in agg["by_kind"].items()} if agg["grade"] == grade else {},
            "by_pool": {k: v["compacted"] for k, v in agg["by_pool"].items()} if agg["grade"] == grade else {},
            "compactions": sum(agg["compactions"].values()),
            "summary_tokens": agg["summary"]["mean_tokens"],
            "cost": agg.get("cost", {}),
            "latency": agg.get("latency", {}),
        })
    pairs = [pairwise(runs[i], runs[j], grade) for i, j in combinations(range(len(runs)), 2)]
    return {"grade": grade, "runs": columns, "pairs": pairs}


def pairwise(a: dict[str, Any], b: dict[str, Any], grade: str) -> dict[str, Any]:
    """Exact McNemar on the discordant shared probes, and a bootstrap interval for the difference."""
    left, right = outcomes(a), outcomes(b)
    shared = [k for k in sorted(set(left) & set(right))
              if left[k]["valid"] and right[k]["valid"] and left[k][grade] is not None and right[k][grade] is not None]
    x = [float(left[k][grade]) for k in shared]
    y = [float(right[k][grade]) for k in shared]
    only_a = sum(1 for p, q in zip(x, y) if p and not q)
    only_b = sum(1 for p, q in zip(x, y) if q and not p)
    difference, low, high = bootstrap_difference(x, y) if shared else (0.0, 0.0, 0.0)
    return {"a": label_of(a), "b": label_of(b), "shared_probes": len(shared), "only_a": only_a, "only_b": only_b,
            "difference": round(difference, 4), "ci95": [round(low, 4), round(high, 4)],
            "p_value": round(mcnemar_exact(only_a, only_b), 6)}


def markdown(result: dict[str, Any]) -> str:
    runs = result["runs"]
    lines = [f"## Comparison ({result['grade']})", "", "| | " + " | ".join(r["label"] for r in runs) + " |",
             "| --- |" + " --- |" * len(runs)]
    for title, cell in table_rows(result):
        lines.append(f"| {title} | " + " | ".join(cell(r) for r in runs) + " |")
    lines += ["", "### Pairwise (shared valid probes)", "", "| a | b | probes | only a | only b | b - a [95%] | McNemar p |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in result["pairs"]:
        lines.append(f"| {p['a']} | {p['b']} | {p['shared_probes']} | {p['only_a']} | {p['only_b']} | "
                     f"{p['difference']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] | {p['p_value']:.4f} |")
    return "\n".join(lines) + "\n"


def table_rows(result: dict[str, Any]):
    """(row title, cell function) for the side-by-side table, shared by the terminal and markdown."""
    from harness.render.run import fmt_rate

    kinds = sorted({k for r in result["runs"] for k in r["by_kind"]})
    pools = sorted({k for r in result["runs"] for k in r["by_pool"]})
    rows = [("pass rate", lambda r: fmt_rate(r["pass_rate"])),
            ("full / floor", lambda r: f"{_pct(r['full'])} / {_pct(r['floor'])}"),
            ("normalised retention", lambda r: _num(r["normalised_retention"]))]
    rows += [(f"kind {k}", lambda r, k=k: fmt_rate(r["by_kind"].get(k))) for k in kinds]
    rows += [(f"pool {p}", lambda r, p=p: fmt_rate(r["by_pool"].get(p))) for p in pools]
    rows += [("compactions", lambda r: str(r["compactions"])),
             ("summary tokens (mean)", lambda r: _num(r["summary_tokens"])),
             ("cost per compaction", lambda r: _usd(r["cost"].get("per_compaction"), r["cost"].get("source"))),
             ("cost per session", lambda r: _usd(r["cost"].get("per_session"), r["cost"].get("source"))),
             ("model latency p50 / p95 s", lambda r: f"{_num(r['latency'].get('model_p50_s'))} / "
                                                   f"{_num(r['latency'].get('model_p95_s'))} "
                                                   f"({r['latency'].get('model_time_source') or '-'})")]
    return rows


def _pct(rate: dict | None) -> str:
    return "-" if not rate or rate.get("rate") is None else f"{100 * rate['rate']:.1f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _usd(value: float | None, source: str | None) -> str:
    return "-" if value is None else f"${value:.5f} ({source or '-'})"
