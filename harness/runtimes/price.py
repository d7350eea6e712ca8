"""The price of each real runtime compaction on the cost study's terms (harness.studies.costs): its summarization
call and the first turn request after it, priced with the cost study's price table, cache on and cache off.

The cache is measured from what the runtime really sent: every request it made (turns, side requests and
summarization calls, in order) goes through the emulator's automatic prefix-cache simulator (the rule of the
OpenAI wires pi and codex speak: a hit on the longest earlier prefix, from 1024 tokens, in 128-token steps), on
the emulator's token count of the request's content (`content_tokens`'s parts, each message encoded once per drive
and its tokens reused by every later request that re-sends it). A summarization call that sends the
history first, as the turn requests did, reads most of its input from that cache (codex); one under its own
system prompt with the history serialised into one message shares nothing (pi). `shared_prefix_tokens` is the
exact prefix the call shares with the runtime's previous turn request, before the cache's rounding;
`shared_history_tokens` the same with tool definitions set aside (Codex drops its tools from the call: its
history goes unchanged, yet the prefix breaks at the tools that lead it).

The first request after a compaction carries the summary and the tail the cache has not seen; what it still
shares with earlier requests (the runtime's system prompt and tools) is read from the cache. Output is the
summary's o200k length; the first request's own output is not part of the compaction (as in the cost study).
Cache off bills every input token at the input rate. All requests are taken as sent within the cache's
retention (a drive lasts seconds to minutes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from harness.errors import HarnessError
from harness.models import _tokens
from harness.models.base import Usage
from harness.models.pricing import PriceTable, cost, resolve
from harness.runtimes.capture import RuntimeCompaction
from harness.runtimes.observe import Observed
from harness.runtimes.prompt_parts import Parts, PrefixCache

# the cost study's OpenAI default model (studies.costs.DEFAULT_MODELS): pi and codex speak OpenAI wires
DEFAULT_MODEL = "openai:gpt-5"
CACHE_RULE = "openai prefix cache over the runtime's own requests, in order (emulator simulator)"


@dataclass(frozen=True)
class Pricing:
    model: str  # the model the compactions are priced as
    prices: PriceTable


def pricing_for(summarizer_spec: str, prices: PriceTable) -> Pricing:
    """The run's summarizer when it has a price (openai:gpt-5@emulator is priced as gpt-5); the cost study's
    default otherwise (the builtin and a free row have none)."""
    try:
        row = resolve(summarizer_spec, prices)
    except HarnessError:  # a custom server with no row: priced as the default, never a failed case
        row = None
    free = row is None or not (row.input or row.cache_read or row.output)
    return Pricing(DEFAULT_MODEL if free else summarizer_spec, prices)


@dataclass(frozen=True)
class Sent:
    """One observed request as a prompt cache sees it."""

    tokens: int
    cached: int
    shared: int  # exact prefix shared with the previous turn request (0 for the first)
    before: int  # the previous turn request's tokens: the runtime's context when it sent this one
    previous: Observed | None = None  # that request
    history_shared: int = 0  # a summarization call: `shared` with tool definitions set aside


def measured(seen: list[Observed]) -> dict[int, Sent]:
    """Per request (by seq): its tokens, what the prefix cache would have read, the prefix shared with the
    previous turn request."""
    counted = Parts()
    cache = PrefixCache(counted)
    previous: list[str] | None = None
    before = 0
    last: Observed | None = None
    out: dict[int, Sent] = {}
    for item in sorted(seen, key=lambda s: s.seq):
        parts = counted.split(item.request)
        tokens = counted.count(parts)
        out[item.seq] = Sent(tokens, cache.lookup_and_store(parts),
                             counted.common(parts, previous) if previous is not None else 0, before, last,
                             _history_shared(counted, item, last) if item.kind == "compaction" else 0)
        if item.kind == "turn":
            previous, before, last = parts, tokens, item
    return out


def _history_shared(counted: Parts, call: Observed, previous: Observed | None) -> int:
    """The prefix shared with the previous turn request once tool definitions are set aside: how much of the
    history the call re-sends unchanged (Codex drops its tools from the call, which alone breaks the cache)."""
    if previous is None:
        return 0
    return counted.common(counted.split(call.request, tools=False), counted.split(previous.request, tools=False))


def _usd(usage: Usage, pricing: Pricing) -> dict[str, float]:
    off = Usage(usage.input_tokens, 0, 0, usage.output_tokens)
    return {"on": round(cost(usage, pricing.model, pricing.prices), 6),
            "off": round(cost(off, pricing.model, pricing.prices), 6)}


def compaction_price(found: RuntimeCompaction, sent: Mapping[int, Sent], pricing: Pricing) -> dict[str, Any]:
    # a compaction without a call (edits.py) costs no call: only its first request after is priced
    calls = [sent[r.seq] for r in found.requests] or [replace(sent[found.after.seq], tokens=0, cached=0, shared=0)]
    output = sum(_tokens.count(r.reply or "") for r in found.requests)
    call = Usage(sum(c.tokens for c in calls), sum(c.cached for c in calls), 0, output)
    first = sent[found.after.seq] if found.after is not None else Sent(0, 0, 0, 0)
    after = Usage(first.tokens, first.cached, 0, 0)
    call_usd, first_usd = _usd(call, pricing), _usd(after, pricing)
    return {"before_tokens": calls[0].before, "input_tokens": call.input_tokens, "cached_tokens": call.cached_input_tokens,
            "new_tokens": call.input_tokens - call.cached_input_tokens,
            "shared_prefix_tokens": calls[0].shared,
            "shared_history_tokens": calls[0].history_shared if found.requests else 0,
            "output_tokens": output, "call_usd": call_usd,
            "first_request": {"input_tokens": first.tokens, "cached_tokens": first.cached, "usd": first_usd}
            if found.after is not None else None,
            "whole_usd": {k: round(call_usd[k] + first_usd[k], 6) for k in ("on", "off")}}


def priced(compactions: list[RuntimeCompaction], seen: list[Observed],
           pricing: Pricing) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(each compaction's price, the case's sum)."""
    sent = measured(seen)
    rows = [compaction_price(c, sent, pricing) for c in compactions]
    row = resolve(pricing.model, pricing.prices)
    total: dict[str, Any] = {"model": pricing.model, "price_row": row.model, "cache_rule": CACHE_RULE,
                             "compactions": len(rows)}
    for key in ("input_tokens", "cached_tokens", "new_tokens", "output_tokens"):
        total[key] = sum(r[key] for r in rows)
    for key in ("call_usd", "whole_usd"):
        total[key] = {k: round(sum(r[key][k] for r in rows), 6) for k in ("on", "off")}
    firsts = [r["first_request"] for r in rows if r["first_request"]]
    total["first_request_usd"] = {k: round(sum(f["usd"][k] for f in firsts), 6) for k in ("on", "off")}
    total["cache_hit_rate"] = round(total["cached_tokens"] / total["input_tokens"], 4) if total["input_tokens"] else None
    return rows, total
