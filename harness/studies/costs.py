"""The cost of compaction (EVALUATION.md): the summarizer call in six request shapes per compaction, plus the
first request after it, against the uncompacted request.

Every compaction of the chosen cases (default policy, the builtin summarizer writing the summary text) is
priced as summarizer requests built with `harness.compaction.summarizer.summary_request`:

  cache-on       the same model, the session's exact prefix (tools, system, history) plus the instruction
  cache-off      the same request billed with no cache (Anthropic: no cache_control; OpenAI cannot switch its
                 automatic cache off, so the same tokens are billed at the uncached rate)
  tools-dropped  the same model and history, the tool definitions left out: the prefix breaks at its start
  alt:MODEL      a cheaper model: no cache is shared with the session, the whole history is new input
  fresh          the same model under a summarizer system prompt: the prefix breaks, and with it the cache hit
  openai-compact / anthropic-compact
                 the provider's own compaction (harness.studies.cost_provider), with its own context after it

Then the agent's first request after the compaction (tools, system, the new summary, the tail) is sent in
the same cache: the summary and tail have never been cached, so that request writes them. Its price belongs
to the compaction; so does the comparison with what the agent's request at that point would have cost
uncompacted (harness.studies.cost_totals).

The figures are `modelled`: before each summarizer request the agent's own requests of the live segment are
fed to the emulator's cache simulators (harness.studies.cache_world), at the times the session's stamps
give (so idle gaps expire entries by the provider's TTL), or all at one time when it has none. Token counts
are o200k for every model (the emulator's convention; Claude's tokenizer differs). Output tokens are the
builtin summary's length for every shape.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from harness.cases.schema import Case
from harness.chat import chat_message
from harness.compaction import Compactor
from harness.compaction.summarizer import SummaryInput, summary_block, summary_request
from harness.errors import HarnessError
from harness.models import _tokens
from harness.models.base import ModelRequest, Usage
from harness.models.emulator import TTL_SECONDS
from harness.models.pricing import PriceTable, bare, load_prices, resolve
from harness.studies.cache_world import CacheWorld, agent_request, send_times, timing_note
from harness.studies.cost_measured import measured
from harness.studies.cost_totals import (Billed, EventCost, billed, break_even, flip_hit_rate, model_summary,
                                         totals)
from harness.studies.cost_provider import (ProviderFold, ProviderTrack, history_of, price_provider_fold,
                                           shape_for)
from harness.studies.digests import Digests

__all__ = ["Billed", "CacheWorld", "EventCost", "agent_request", "break_even", "flip_hit_rate", "folds_of",
           "measured", "price_session", "study", "totals"]

DEFAULT_MODELS = ("anthropic:claude-sonnet-4-6", "openai:gpt-5")
DEFAULT_ALTERNATIVES = {"anthropic": "anthropic:claude-haiku-4-5", "openai": "openai:gpt-5-mini"}
SHAPES = ("cache-on", "cache-off", "tools-dropped", "fresh")  # one alt:MODEL per cheaper model before fresh
SUMMARY_SHAPES = {"cache-on": "prefix", "tools-dropped": "tools-dropped", "fresh": "fresh"}
OPENAI_IDLE_S = 600.0  # the simulator's OpenAI retention (cache.py)


@dataclass(frozen=True)
class Fold:
    """One compaction as the summarizer saw it: its input, the summary written, the agent's sends (message
    indices of assistant messages) in the live segment before it, and where the verbatim tail starts."""

    number: int
    send_index: int
    summary_input: SummaryInput
    summary_text: str
    sends: tuple[int, ...]
    tail_start: int = 0


def folds_of(case: Case) -> list[Fold]:
    """Replay a case through the default policy with the builtin summarizer and keep each fold."""
    from harness.compaction.summarizer import ModelSummarizer
    from harness.models.builtin import BuiltinClient
    from harness.policy import make_policy
    from harness.run.config import RunConfig, policy_config

    summarizer = ModelSummarizer(BuiltinClient(), "builtin")
    replay = Compactor(case.session, make_policy("default", policy_config(case, RunConfig())), summarizer).run()
    messages = case.session.messages
    folds = []
    for call in replay.summaries:  # lookups and truncations made no summarizer call to price
        if call.event is None:
            continue  # a rejected summary folded nothing
        event = call.event
        sends = tuple(i for i in range(event.head_start, event.send_index) if messages[i].role == "assistant")
        folds.append(Fold(event.number, event.send_index, call.request, call.result.text, sends, event.tail_start))
    return folds


# ---------------------------------------------------------------------------------------------
# pricing one model's compactions


@dataclass
class Replay:
    """One case replayed for one model: the session's messages as chat messages (built once, so their
    digests are reused), send times, and one cache world per shape plus the session's own."""

    case: Case
    model: str
    ttl: str | None
    digests: Digests
    world_class: type[CacheWorld] = CacheWorld  # the benchmark swaps in its comparator

    def __post_init__(self) -> None:
        self.chat = [chat_message(m) for m in self.case.session.messages]
        self.times = send_times(self.case.session.messages)
        self.tools = self.case.session.tools
        self.worlds: dict[str, CacheWorld] = {}

    def world(self, name: str, provider: str) -> CacheWorld:
        if name not in self.worlds:
            self.worlds[name] = self.world_class(provider, self.model, self.digests)
        return self.worlds[name]

    def at(self, index: int) -> float | None:
        """When a request whose last message is `index - 1` goes out."""
        return self.times[index - 1] if index > 0 else None

    def request(self, previous: str | None, start: int, end: int) -> ModelRequest:
        return agent_request(self.model, self.case.session.system, previous, self.chat[start:end], self.tools,
                             self.ttl)


def price_session(case: Case, folds: list[Fold], model: str, alternatives: list[str], prices: PriceTable,
                  ttl: str | None = None, digests: Digests | None = None,
                  world_class: type[CacheWorld] = CacheWorld) -> list[EventCost]:
    row = resolve(model, prices)
    for alt in alternatives:
        resolve(alt, prices)
    replay = Replay(case, bare(model), ttl, digests or Digests(), world_class)
    provider = shape_for(row.provider)
    names = (*SUMMARY_SHAPES, *([provider] if provider else []), "session")
    worlds = {name: replay.world(name, row.provider) for name in names}
    # the provider shape's own context, carried from fold to fold (none for a provider without compaction)
    track = ProviderTrack(row.provider) if provider else None
    long_ttl = row.provider == "anthropic" and ttl == "1h"
    return [price_fold(replay, worlds, track, fold, model, alternatives, prices, long_ttl) for fold in folds]


def price_fold(replay: Replay, worlds: dict[str, CacheWorld], track: ProviderTrack | None, fold: Fold,
               model: str, alternatives: list[str], prices: PriceTable, long_ttl: bool) -> EventCost:
    request = replay_input(fold.summary_input, replay.tools)
    output = _tokens.count(fold.summary_text)
    provider = shape_for(track.provider) if track else None
    last_agent = None
    for name, world in worlds.items():  # the agent's own sends warmed the cache (each world sees them)
        build = _provider_agent(replay, track, request.head_start) if track and name == provider else \
            _agent(replay, request.previous_summary, request.head_start)
        last_agent = warm(world, replay, build, fold.sends)
    at = replay.at(fold.send_index)  # compaction fires at the next send
    sent = {}
    for shape, kind in SUMMARY_SHAPES.items():
        call = replace(summary_request(request, replay.model, shape=kind, cache=True), cache_ttl=replay.ttl)
        sent[shape] = worlds[shape].send(call, at)
    provided = _provider_fold(replay, worlds[provider], track, fold, request, output, at) if track else None
    bill = (lambda shape, name, usage: billed(shape, name, usage, prices, long_ttl=long_ttl))
    on = bill("cache-on", model, Usage(*sent["cache-on"], output))
    off = bill("cache-off", model, Usage(on.input_tokens, 0, 0, output))
    # no shared cache: all of it is new input (sent without breakpoints, so nothing is written either)
    alts = [bill(f"alt:{alt}", alt, Usage(on.input_tokens, 0, 0, output)) for alt in alternatives]
    summaries = [on, off, bill("tools-dropped", model, Usage(*sent["tools-dropped"], output)), *alts,
                 bill("fresh", model, Usage(*sent["fresh"], output))]
    if provided is not None:
        summaries.append(bill(provider, model, provided.call))
    after = replay.request(summary_block(fold.summary_text, fold.number), fold.tail_start, fold.send_index)
    firsts = {shape: worlds[shape].send(after, at) for shape in SUMMARY_SHAPES}
    firsts["session"] = worlds["session"].send(after, at)  # an alternative summarizer leaves this cache alone
    if provided is not None:
        firsts[provider] = provided.first
    uncompacted = worlds["session"].send(replay.request(request.previous_summary, request.head_start,
                                                        fold.send_index), at)
    first_rows = []
    for b in summaries:
        world = "session" if b.shape.startswith("alt:") else b.shape
        usage = (Usage(firsts["cache-on"].total) if b.shape == "cache-off" else Usage(*firsts[world]))
        first_rows.append(bill(b.shape, model, usage))
    idle = None if at is None or last_agent is None else max(0.0, at - last_agent)
    limit = TTL_SECONDS.get(replay.ttl or "5m", 300.0) if worlds["session"].provider == "anthropic" \
        else OPENAI_IDLE_S
    return EventCost(replay.case.id, model, fold.number, fold.send_index, tuple(summaries), tuple(first_rows),
                     bill("uncompacted", model, Usage(*uncompacted)),
                     bill("uncompacted", model, Usage(uncompacted.total)), idle,
                     idle is not None and idle > limit)


def _agent(replay: Replay, previous: str | None, live_start: int) -> Callable[[int], ModelRequest]:
    return lambda send: replay.request(previous, live_start, send)


def _provider_agent(replay: Replay, track: ProviderTrack, live_start: int) -> Callable[[int], ModelRequest]:
    """The agent's requests in the provider shape's world: its own compacted context ahead of the live part."""
    system = replay.case.session.system
    return lambda send: track.agent_request(replay.model, system, replay.chat[live_start:send], replay.tools,
                                            replay.ttl)


def _provider_fold(replay: Replay, world: CacheWorld, track: ProviderTrack, fold: Fold, request: SummaryInput,
                   output: int, at: float | None) -> ProviderFold:
    kept, head = history_of(request)
    system = replay.case.session.system
    build = (lambda t: t.compaction_request(replay.model, system, kept, head, replay.tools, replay.ttl,
                                            request.budget_tokens))
    after = (lambda t: t.agent_request(replay.model, system, replay.chat[fold.tail_start:fold.send_index],
                                       replay.tools, replay.ttl))
    return price_provider_fold(world, track, build, after, fold.summary_text, output, at)


def replay_input(request: SummaryInput, tools: tuple) -> SummaryInput:
    """The summarizer input with the session's tools (cases written before tools existed have none)."""
    return request if request.tools or not tools else replace(request, tools=tools)


def warm(world: CacheWorld, replay: Replay, build: Callable[[int], ModelRequest],
         sends: tuple[int, ...]) -> float | None:
    """Feed the agent's requests of the live segment (`build(send)`) at their times; the time of the last
    one. Anthropic writes only at breakpoints, so every send matters. OpenAI stores every prefix of a
    prompt, so a send is covered by the next one unless the gap between them outlives the retention
    (entries then count their hour's maximum age from the later send: a small undercount of expiry, for
    linear time)."""
    last = None
    times = [replay.at(send) for send in sends]
    for position, send in enumerate(sends):
        if world.provider == "openai" and position + 1 < len(sends) and not _gap(times[position],
                                                                                 times[position + 1]):
            continue
        world.send(build(send), times[position])
        last = times[position]
    return times[-1] if times else last


def _gap(before: float | None, after: float | None) -> bool:
    return before is not None and after is not None and after - before > OPENAI_IDLE_S


def alternatives_for(model: str, alternatives: list[str] | None, prices: PriceTable) -> list[str]:
    if alternatives:
        return [a for a in alternatives if bare(a) != bare(model)]
    default = DEFAULT_ALTERNATIVES.get(resolve(model, prices).provider)
    return [default] if default and bare(default) != bare(model) else []


# ---------------------------------------------------------------------------------------------
# the study


def study(cases: list[Case], models: list[str] | None = None, alternatives: list[str] | None = None,
          prices_file: str | None = None, ttl: str | None = None,
          on_case: Callable[[str, int], None] = lambda case_id, total: None) -> dict[str, Any]:
    """The cost study over `cases` for each model: per event, per model and per session; `on_case` is told
    each case id as its session is priced (for every model), with how many compacting sessions there are."""
    prices = load_prices(prices_file)
    models = list(models or DEFAULT_MODELS)
    plan = {model: alternatives_for(model, alternatives, prices) for model in models}  # unknown prices fail here
    if not cases:
        raise HarnessError("cost: no cases to replay")
    folds = {case.id: folds_of(case) for case in cases}
    compacting = [case for case in cases if folds[case.id]]
    digests = Digests()  # shared by every model and shape: each message is digested once
    events: list[EventCost] = []
    summaries = []
    by_model: dict[str, list[EventCost]] = {model: [] for model in models}
    for case in compacting:
        for model in models:
            by_model[model] += price_session(case, folds[case.id], model, plan[model], prices, ttl, digests)
        on_case(case.id, len(compacting))
    for model in models:
        events += by_model[model]
        summaries.append(model_summary(model, by_model[model], len(compacting), prices))
    timing = sorted({timing_note(case.session.messages) for case in compacting})
    return {"source": "modelled", "cases": [c.id for c in cases], "sessions_with_compactions": len(compacting),
            "cache_ttl": ttl or "5m", "timing": timing, "models": summaries,
            "events": [e.to_json() for e in events], "note": MODELLED_NOTE}


MODELLED_NOTE = ("modelled: the emulator's cache simulation under each provider's rules, the agent's own "
                 "requests warming the cache; o200k token counts; output = the builtin summary's length")
