"""Run totals of what the cases spent by role (run.json's aggregates.cost_by_role): tokens, dollars, the
source of each figure (live / recorded / modelled / builtin) and the share of input read from cache."""

from __future__ import annotations

from typing import Any, Iterable

from harness.results.schema import RoleCost

ROLES = ("summarizer", "answerer", "judge")


def add_role_costs(totals: dict[str, dict[str, Any]], costs: Iterable[RoleCost]) -> None:
    """Fold one case's role costs into run totals (run.json's aggregates.cost_by_role)."""
    for c in costs:
        row = totals.setdefault(c.role, {"spec": c.spec, "calls": 0, "input_tokens": 0, "cached_input_tokens": 0,
                                         "cache_write_tokens": 0, "output_tokens": 0, "usd": 0.0, "sources": []})
        for key in ("calls", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens"):
            row[key] += getattr(c, key)
        row["usd"] = None if row["usd"] is None or c.usd is None else round(row["usd"] + c.usd, 6)
        if c.source and c.source not in row["sources"]:
            row["sources"] = sorted({*row["sources"], *c.source.split("/")})


def finish_role_costs(totals: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Totals in role order, each with its source label and the share of its input read from cache."""
    out = {}
    for role in ROLES:
        if role not in totals:
            continue
        row = dict(totals[role])
        row["source"] = "/".join(row.pop("sources")) or None
        row["cache_read_share"] = (round(row["cached_input_tokens"] / row["input_tokens"], 4)
                                   if row["input_tokens"] else None)
        out[role] = row
    return out
