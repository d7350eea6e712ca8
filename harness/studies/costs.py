"""The cost of the extra summarizer call (EVALUATION.md): four request shapes per compaction event.

Every compaction of the chosen cases (default policy, the builtin summarizer writing the summary text) is
priced as four summarizer requests built with `harness.summarizer.summary_request`:

  cache-on   the same model, the session's exact prefix plus the instruction: the history is a cache read
  cache-off  the same request billed with no cache (Anthropic: no cache_control; OpenAI cannot switch its
             automatic cache off, so the same tokens are billed at the uncached rate)
  alt:MODEL  a cheaper model: no cache is shared with the session, the whole history is new input
  fresh      the same model under a summarizer system prompt: the prefix breaks, and with it the cache hit

Only the summarizer call is charged (the agent's own earlier requests warmed the cache and would have
happened anyway). The figures here are `modelled`: before pricing a summarizer request, the agent's own
requests of the live segment are fed to the emulator's cache simulators (OpenAI automatic prefix caching,
Anthropic breakpoints with their 20-block lookback), assuming the sends came within the cache's TTL.
Token counts are o200k for every model (the emulator's convention; Claude's tokenizer differs). Output
tokens are the builtin summary's length for every shape. Measured figures (`live`, `recorded`) come from a
run's own events: see `measured_rows`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from harness.cases.schema import Case
from harness.compaction import Compactor
from harness.errors import HarnessError
from harness.models import _tokens
from harness.models.anthropic import message_params
from harness.models.base import ChatMessage, ModelRequest, Usage
from harness.models.emulator import (AnthropicBreakpointCache, OpenAIPrefixCache, anthropic_blocks,
                                     openai_prompt_tokens)
from harness.models.openai import chat_params
from harness.models.pricing import ModelPrice, PriceTable, bare, cost, load_prices, resolve
from harness.chat import chat_message
from harness.compaction.summarizer import SummaryInput, summary_request

DEFAULT_MODELS = ("anthropic:claude-sonnet-4-6", "openai:gpt-5")
DEFAULT_ALTERNATIVES = {"anthropic": "anthropic:claude-haiku-4-5", "openai": "openai:gpt-5-mini"}
SHAPES = ("cache-on", "cache-off", "fresh")  # and one alt:MODEL per cheaper model, before fresh


# ---------------------------------------------------------------------------------------------
# figures


@dataclass(frozen=True)
class Billed:
    """One summarizer request's billed tokens and dollars, with where the figures come from."""

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


def billed(shape: str, model: str, usage: Usage, prices: PriceTable, source: str = "modelled") -> Billed:
    return Billed(shape, model, usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens,
                  usage.output_tokens, cost(usage, model, prices), source)


@dataclass(frozen=True)
class EventCost:
    case: str
    model: str
    number: int
    send_index: int
    shapes: tuple[Billed, ...]

    def shape(self, name: str) -> Billed:
        return next(b for b in self.shapes if b.shape == name)

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "model": self.model, "number": self.number, "send_index": self.send_index,
                "shapes": {b.shape: b.to_json() for b in self.shapes}}


# ---------------------------------------------------------------------------------------------
# the cache simulation: the agent's own requests warm the cache before the summarizer call


@dataclass
class CacheWorld:
    """One provider cache as one deployment sees it (one per model and summarizer shape), with token
    counts memoised by content so the agent's many overlapping requests stay cheap to simulate."""

    provider: str
    namespace: str
    openai: OpenAIPrefixCache = field(default_factory=lambda: OpenAIPrefixCache(clock=lambda: 0.0))
    anthropic: AnthropicBreakpointCache = field(default_factory=lambda: AnthropicBreakpointCache(clock=lambda: 0.0))
    memo: dict[str, Any] = field(default_factory=dict)

    def send(self, request: ModelRequest) -> tuple[int, int, int]:
        """(input, cache read, cache write) tokens for one request under this provider's rules."""
        if self.provider == "anthropic":
            blocks = anthropic_blocks(message_params(request), self.memo)
            result = self.anthropic.process(self.namespace, blocks)
            return result.total_tokens, result.read_tokens, result.write_tokens
        tokens = openai_prompt_tokens(chat_params(request), self.memo)
        return len(tokens), self.openai.lookup_and_store(self.namespace, tokens), 0


def agent_request(model: str, system: str | None, previous: str | None, live: Iterable[ChatMessage]) -> ModelRequest:
    """The agent's own request: system, the summary block in effect, the live messages; cached as a runtime
    caches (Anthropic: breakpoints on the system prompt and on the last message)."""
    history = ([ChatMessage("user", previous)] if previous else []) + list(live)
    if not history:
        history = [ChatMessage("user", "(start)")]
    return ModelRequest(model, system, tuple(history), 4096, cache=True, label="agent")


# ---------------------------------------------------------------------------------------------
# replaying the cases


@dataclass(frozen=True)
class Fold:
    """One compaction as the summarizer saw it: its input, the summary written, and the agent's sends
    (message indices of assistant messages) in the live segment before it."""

    number: int
    send_index: int
    summary_input: SummaryInput
    summary_text: str
    sends: tuple[int, ...]


def folds_of(case: Case) -> list[Fold]:
    """Replay a case through the default policy with the builtin summarizer and keep each fold."""
    from harness.models.builtin import BuiltinClient
    from harness.policy import make_policy
    from harness.run.config import RunConfig, policy_config
    from harness.compaction.summarizer import ModelSummarizer

    summarizer = ModelSummarizer(BuiltinClient(), "builtin")
    replay = Compactor(case.session, make_policy("default", policy_config(case, RunConfig())), summarizer).run()
    messages = case.session.messages
    folds = []
    for call in replay.summaries:  # lookups and truncations made no summarizer call to price
        if call.event is None:
            continue  # a rejected summary folded nothing
        event = call.event
        sends = tuple(i for i in range(event.head_start, event.send_index) if messages[i].role == "assistant")
        folds.append(Fold(event.number, event.send_index, call.request, call.result.text, sends))
    return folds


# ---------------------------------------------------------------------------------------------
# pricing one model's compactions


def price_session(case: Case, folds: list[Fold], model: str, alternatives: list[str],
                  prices: PriceTable) -> list[EventCost]:
    row = resolve(model, prices)
    for alt in alternatives:
        resolve(alt, prices)
    name = bare(model)
    worlds = {shape: CacheWorld(row.provider, name) for shape in ("cache-on", "fresh")}
    messages = case.session.messages
    rows = []
    for fold in folds:
        request = fold.summary_input
        output = _tokens.count(fold.summary_text)
        live_start = request.head_start
        for world in worlds.values():  # the agent's own sends warmed the cache (each world sees them)
            warm(world, name, case.session.system, request.previous_summary, messages, live_start, fold.sends)
        shapes = []
        for shape, world in worlds.items():
            sent = summary_request(request, name, shape="prefix" if shape == "cache-on" else "fresh", cache=True)
            total, read, write = world.send(sent)
            shapes.append(billed(shape, model, Usage(total, read, write, output), prices))
        on, fresh = shapes
        off = billed("cache-off", model, Usage(on.input_tokens, 0, 0, output), prices)
        # no shared cache: all of it is new input (sent without breakpoints, so nothing is written either)
        alts = [billed(f"alt:{alt}", alt, Usage(on.input_tokens, 0, 0, output), prices) for alt in alternatives]
        shapes = [on, off, *alts, fresh]
        rows.append(EventCost(case.id, model, fold.number, fold.send_index, tuple(shapes)))
    return rows


def warm(world: CacheWorld, model: str, system: str | None, previous: str | None, messages, live_start: int,
         sends: tuple[int, ...]) -> None:
    """Feed the agent's requests of the live segment. OpenAI stores every prefix of a prompt, so the last
    request covers the earlier ones; Anthropic writes only at breakpoints, so every send matters."""
    chosen = sends[-1:] if world.provider == "openai" else sends
    for send in chosen:
        live = (chat_message(m) for m in messages[live_start:send])
        world.send(agent_request(model, system, previous, live))


def alternatives_for(model: str, alternatives: list[str] | None, prices: PriceTable) -> list[str]:
    if alternatives:
        return [a for a in alternatives if bare(a) != bare(model)]
    default = DEFAULT_ALTERNATIVES.get(resolve(model, prices).provider)
    return [default] if default and bare(default) != bare(model) else []


# ---------------------------------------------------------------------------------------------
# totals, break-even, the study


def totals(rows: list[EventCost], sessions: int) -> dict[str, dict[str, Any]]:
    """Per shape: summed tokens and dollars, per compaction and per session."""
    out: dict[str, dict[str, Any]] = {}
    for event in rows:
        for b in event.shapes:
            t = out.setdefault(b.shape, {"model": b.model, "source": b.source, "input_tokens": 0,
                                         "uncached_tokens": 0, "cached_input_tokens": 0, "cache_write_tokens": 0,
                                         "output_tokens": 0, "usd": 0.0})
            for key in ("input_tokens", "uncached_tokens", "cached_input_tokens", "cache_write_tokens",
                        "output_tokens"):
                t[key] += getattr(b, key)
            t["usd"] += b.usd
    for t in out.values():
        t["per_compaction_usd"] = round(t["usd"] / len(rows), 6) if rows else None
        t["per_session_usd"] = round(t["usd"] / sessions, 6) if sessions else None
        t["cache_hit_rate"] = round(t["cached_input_tokens"] / t["input_tokens"], 4) if t["input_tokens"] else None
        t["usd"] = round(t["usd"], 6)
    return out


def price_ratio(alt: ModelPrice, same: ModelPrice, input_tokens: int, output_tokens: int) -> float:
    """The alternative's price relative to the same model's, weighted by this workload's input and output."""
    same_cost = input_tokens * same.input + output_tokens * same.output
    alt_cost = input_tokens * alt.input + output_tokens * alt.output
    return alt_cost / same_cost if same_cost else float("nan")


def break_even(same_on_usd: float, same_off_usd: float) -> float | None:
    """The price ratio (alternative / same model, all rates scaled alike) at which the cheaper summarizer,
    paying for the whole history as new input, costs what the same model costs with its cache hit."""
    return same_on_usd / same_off_usd if same_off_usd else None


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


def model_summary(model: str, rows: list[EventCost], sessions: int, prices: PriceTable) -> dict[str, Any]:
    shape_totals = totals(rows, sessions)
    same = resolve(model, prices)
    on, off = shape_totals.get("cache-on"), shape_totals.get("cache-off")
    alternatives = {}
    for shape, t in shape_totals.items():
        if not shape.startswith("alt:") or on is None or off is None:
            continue
        ratio = price_ratio(resolve(t["model"], prices), same, on["input_tokens"], on["output_tokens"])
        even = break_even(on["usd"], off["usd"])
        alternatives[t["model"]] = {
            "price_ratio": round(ratio, 4), "break_even_ratio": None if even is None else round(even, 4),
            "cheaper": t["usd"] < on["usd"], "saving_usd": round(on["usd"] - t["usd"], 6),
            "flip_hit_rate": _round(flip_hit_rate(same, on["input_tokens"], on["output_tokens"], t["usd"],
                                                  on["cache_write_tokens"])),
        }
    return {"model": model, "compactions": len(rows), "sessions": sessions, "shapes": shape_totals,
            "cache_hit_rate": on["cache_hit_rate"] if on else None, "alternatives": alternatives}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def study(cases: list[Case], models: list[str] | None = None, alternatives: list[str] | None = None,
          prices_file: str | None = None) -> dict[str, Any]:
    """The cost study over `cases` for each model: per event, per model and per session."""
    prices = load_prices(prices_file)
    models = list(models or DEFAULT_MODELS)
    plan = {model: alternatives_for(model, alternatives, prices) for model in models}  # unknown prices fail here
    if not cases:
        raise HarnessError("cost: no cases to replay")
    folds = {case.id: folds_of(case) for case in cases}
    compacting = [case for case in cases if folds[case.id]]
    events: list[EventCost] = []
    summaries = []
    for model in models:
        rows = [row for case in compacting for row in price_session(case, folds[case.id], model, plan[model], prices)]
        events += rows
        summaries.append(model_summary(model, rows, len(compacting), prices))
    return {"source": "modelled", "cases": [c.id for c in cases], "sessions_with_compactions": len(compacting),
            "models": summaries, "events": [e.to_json() for e in events], "note": MODELLED_NOTE}


MODELLED_NOTE = ("modelled: the emulator's cache simulation under each provider's rules, the agent's own "
                 "requests warming the cache within its TTL; o200k token counts; output = the builtin "
                 "summary's length")


# ---------------------------------------------------------------------------------------------
# measured figures: a run's own summarizer calls


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
