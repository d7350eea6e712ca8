"""The cost study's figures: billed requests, one compaction's price per shape, totals and break-even.

A compaction's whole price in one shape is its summarizer call plus the first agent request after it, which
carries the new prefix (system, tools, summary, tail) the cache has never seen and so writes it (Anthropic) or
pays it uncached (OpenAI). It is set against what the agent's request at the same point would have cost
uncompacted; the difference is `extra`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from harness.models.base import Usage
from harness.models.pricing import ModelPrice, PriceTable, cost, resolve

TOKEN_KEYS = ("input_tokens", "uncached_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


@dataclass(frozen=True)
class Billed:
    """One request's billed tokens and dollars, with where the figures come from."""

    shape: str
    model: str
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    usd: float
    source: str  # live | recorded | modelled

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cached_input_tokens - self.cache_write_tokens

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "uncached_tokens": self.uncached_tokens, "usd": round(self.usd, 6)}


def billed(shape: str, model: str, usage: Usage, prices: PriceTable, source: str = "modelled",
           long_ttl: bool = False) -> Billed:
    return Billed(shape, model, usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens,
                  usage.output_tokens, cost(usage, model, prices, long_ttl=long_ttl), source)


@dataclass(frozen=True)
class EventCost:
    """One compaction priced: per shape the summarizer call (`shapes`) and the first request after it
    (`firsts`, same order); the uncompacted request at the same point, cached and uncached; and whether the
    summarizer met a cache the idle gap before it had expired."""

    case: str
    model: str
    number: int
    send_index: int
    shapes: tuple[Billed, ...]
    firsts: tuple[Billed, ...] = ()
    uncompacted: Billed | None = None
    uncompacted_off: Billed | None = None
    idle_s: float | None = None
    cold: bool = False

    def shape(self, name: str) -> Billed:
        return next(b for b in self.shapes if b.shape == name)

    def first(self, name: str) -> Billed:
        return next(b for b in self.firsts if b.shape == name)

    def against(self, name: str) -> Billed | None:
        """The uncompacted request this shape is compared with: uncached when the shape has no cache."""
        return self.uncompacted_off if name == "cache-off" else self.uncompacted

    def whole_usd(self, name: str) -> float:
        return self.shape(name).usd + (self.first(name).usd if self.firsts else 0.0)

    def to_json(self) -> dict[str, Any]:
        shapes = {}
        for b in self.shapes:
            row = b.to_json()
            if self.firsts:
                against = self.against(b.shape)
                row["first_request"] = self.first(b.shape).to_json()
                row["whole_usd"] = round(self.whole_usd(b.shape), 6)
                row["extra_usd"] = round(self.whole_usd(b.shape) - against.usd, 6) if against else None
            shapes[b.shape] = row
        return {"case": self.case, "model": self.model, "number": self.number, "send_index": self.send_index,
                "idle_s": self.idle_s, "cold_cache": self.cold, "shapes": shapes,
                "uncompacted": self.uncompacted.to_json() if self.uncompacted else None}


def _add(into: dict[str, Any], b: Billed) -> None:
    for key in TOKEN_KEYS:
        into[key] += getattr(b, key)
    into["usd"] += b.usd


def _blank(b: Billed) -> dict[str, Any]:
    return {"model": b.model, "source": b.source, **{k: 0 for k in TOKEN_KEYS}, "usd": 0.0}


def totals(rows: list[EventCost], sessions: int) -> dict[str, dict[str, Any]]:
    """Per shape: the summarizer call's summed tokens and dollars, per compaction and per session; with the
    first request after each compaction, the whole price and its difference from the uncompacted request."""
    out: dict[str, dict[str, Any]] = {}
    for event in rows:
        for b in event.shapes:
            t = out.setdefault(b.shape, _blank(b))
            _add(t, b)
            if event.firsts:
                first = t.setdefault("first_request", _blank(event.first(b.shape)))
                _add(first, event.first(b.shape))
                against = event.against(b.shape)
                t["uncompacted_usd"] = t.get("uncompacted_usd", 0.0) + (against.usd if against else 0.0)
    for t in out.values():
        _finish(t, len(rows), sessions)
    return out


def _finish(t: dict[str, Any], events: int, sessions: int) -> None:
    per = (lambda usd: round(usd / events, 6) if events else None)
    t["per_compaction_usd"] = per(t["usd"])
    t["per_session_usd"] = round(t["usd"] / sessions, 6) if sessions else None
    t["cache_hit_rate"] = round(t["cached_input_tokens"] / t["input_tokens"], 4) if t["input_tokens"] else None
    first = t.get("first_request")
    if first is not None:
        first["usd"] = round(first["usd"], 6)
        first["per_compaction_usd"] = per(first["usd"])
        first["write_share"] = round(first["cache_write_tokens"] / first["input_tokens"], 4) \
            if first["input_tokens"] else None
        whole = t["usd"] + first["usd"]
        t["whole_usd"] = round(whole, 6)
        t["whole_per_compaction_usd"] = per(whole)
        t["whole_per_session_usd"] = round(whole / sessions, 6) if sessions else None
        t["uncompacted_per_compaction_usd"] = per(t["uncompacted_usd"])
        t["extra_per_compaction_usd"] = per(whole - t["uncompacted_usd"])
        t["uncompacted_usd"] = round(t["uncompacted_usd"], 6)
    t["usd"] = round(t["usd"], 6)


def price_ratio(alt: ModelPrice, same: ModelPrice, input_tokens: int, output_tokens: int) -> float:
    """The alternative's price relative to the same model's, weighted by this workload's input and output."""
    same_cost = input_tokens * same.input + output_tokens * same.output
    alt_cost = input_tokens * alt.input + output_tokens * alt.output
    return alt_cost / same_cost if same_cost else float("nan")


def break_even(same_on_usd: float, same_off_usd: float, same_first_usd: float = 0.0,
               alt_first_usd: float = 0.0) -> float | None:
    """The price ratio (alternative / same model, all rates scaled alike) at which the cheaper summarizer,
    paying for the whole history as new input, costs what the same model costs with its cache hit. With the
    first requests after the compactions (always the session model's), the ratio is on the whole price."""
    if not same_off_usd:
        return None
    return (same_on_usd + same_first_usd - alt_first_usd) / same_off_usd


def flip_hit_rate(row: ModelPrice, input_tokens: int, output_tokens: int, alt_usd: float,
                  write_tokens: int = 0) -> float | None:
    """The cache hit rate (share of the input read from cache) at which the same model costs as much as
    the alternative; below it the alternative is cheaper. None when the cache gives no discount."""
    discount = input_tokens * (row.input - row.cache_read)
    if discount <= 0:
        return None
    extra_write = write_tokens * (row.write_rate - row.input)
    uncached = input_tokens * row.input + output_tokens * row.output + extra_write
    return (uncached - alt_usd * 1_000_000) / discount


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def alternative_figures(same: ModelPrice, on: dict[str, Any], off: dict[str, Any], alt: dict[str, Any],
                        prices: PriceTable) -> dict[str, Any]:
    ratio = price_ratio(resolve(alt["model"], prices), same, on["input_tokens"], on["output_tokens"])
    even = break_even(on["usd"], off["usd"])
    first_on = on.get("first_request", {}).get("usd", 0.0)
    first_alt = alt.get("first_request", {}).get("usd", 0.0)
    whole_even = break_even(on["usd"], off["usd"], first_on, first_alt)
    whole_on, whole_alt = on.get("whole_usd", on["usd"]), alt.get("whole_usd", alt["usd"])
    return {
        "price_ratio": round(ratio, 4), "break_even_ratio": _round(even),
        "break_even_ratio_whole": _round(whole_even),
        "cheaper": alt["usd"] < on["usd"], "saving_usd": round(on["usd"] - alt["usd"], 6),
        "cheaper_whole": whole_alt < whole_on, "saving_whole_usd": round(whole_on - whole_alt, 6),
        "flip_hit_rate": _round(flip_hit_rate(same, on["input_tokens"], on["output_tokens"], alt["usd"],
                                              on["cache_write_tokens"])),
    }


def provider_figures(on: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
    """Provider compaction against the same model with its cache, on the whole price. Its break-even ratio is
    how many times the listed rates its call could be billed at before it costs the whole price of the
    same-model call (compaction is assumed billed at the model's rates; no separate price is published)."""
    first_on = on.get("first_request", {}).get("usd", 0.0)
    first_provider = provider.get("first_request", {}).get("usd", 0.0)
    whole_on, whole_provider = on.get("whole_usd", on["usd"]), provider.get("whole_usd", provider["usd"])
    return {"break_even_ratio": _round(break_even(on["usd"], provider["usd"])),
            "break_even_ratio_whole": _round(break_even(on["usd"], provider["usd"], first_on, first_provider)),
            "cheaper": provider["usd"] < on["usd"], "saving_usd": round(on["usd"] - provider["usd"], 6),
            "cheaper_whole": whole_provider < whole_on, "saving_whole_usd": round(whole_on - whole_provider, 6)}


def model_summary(model: str, rows: list[EventCost], sessions: int, prices: PriceTable) -> dict[str, Any]:
    shape_totals = totals(rows, sessions)
    same = resolve(model, prices)
    on, off = shape_totals.get("cache-on"), shape_totals.get("cache-off")
    alternatives = {t["model"]: alternative_figures(same, on, off, t, prices) for shape, t in shape_totals.items()
                    if shape.startswith("alt:") and on is not None and off is not None}
    provider = {shape: provider_figures(on, t) for shape, t in shape_totals.items()
                if shape.endswith("-compact") and on is not None}
    return {"model": model, "compactions": len(rows), "sessions": sessions, "shapes": shape_totals,
            "cache_hit_rate": on["cache_hit_rate"] if on else None, "alternatives": alternatives,
            "provider_compaction": provider,
            "cold_cache_compactions": sum(r.cold for r in rows)}
