"""A run's own summarizer calls priced from their recorded usage (live, recorded or the emulator's figures)."""

from __future__ import annotations

from typing import Any

from harness.models.base import Usage
from harness.models.pricing import load_prices, resolve
from harness.studies.cost_totals import EventCost, billed, totals


def measured(run: dict[str, Any], prices_file: str | None = None) -> dict[str, Any]:
    """What a run's summarizer calls cost as billed (live), as recorded (cassette) or as the emulator
    modelled them, from each event's usage; one row per compaction."""
    prices = load_prices(prices_file)
    config = run["configuration"]
    spec = config["summarizer_spec"]
    shape = ("cache-on" if config.get("cache", True) else "cache-off") if config["summarizer"] == "same" \
        else f"alt:{spec}"
    rows, sessions = [], 0
    records = run.get("cases", {})
    for record in records.values() if isinstance(records, dict) else records:
        if record.get("status") != "ok":
            continue
        events = [e for e in record.get("events", []) if e.get("usage")]
        sources = [s.get("latency_source", "modelled") for s in record.get("summaries", [])]
        sessions += bool(events)
        for i, event in enumerate(events):
            usage = Usage(**{k: event["usage"].get(k, 0) for k in
                             ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")})
            source = sources[i] if i < len(sources) else "modelled"
            rows.append(EventCost(record["case"], spec, event["number"], event["send_index"],
                                  (billed(shape, spec, usage, prices, source),)))
    priced = resolve(spec, prices)  # unknown price: the one-line error
    return {"model": spec, "price": priced.model, "shape": shape, "totals": totals(rows, sessions).get(shape),
            "sources": sorted({b.source for r in rows for b in r.shapes}), "compactions": len(rows),
            "sessions": sessions}
