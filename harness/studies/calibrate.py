"""Calibration of the cache simulation on real billing (issue 16, item 4).

A real transcript that records each request's usage (Claude Code: input, cache read, cache write, output per
assistant message) is replayed through the cost study's cache simulation (harness.studies.cache_world) in the
same order and at the same times: every recorded request, and at each real compaction the runtime's own
compaction call as `compaction_call` says (it is not in the transcript). Each request's predicted cache-read
and cache-write shares are set against the recorded ones.

Token counts differ by tokenizer (the simulation counts o200k; Claude counts its own), and the runtime's
system prompt and tool definitions are not in a Claude Code transcript. Both are fitted from the recorded
prompt totals alone, never from the cache split being predicted: recorded_total = hidden + scale x counted,
by least squares over the session's requests. The hidden prefix is then sent as one block ahead of the
messages, in the simulation's units (hidden / scale), and shares (unitless) are compared; token figures are
shown in the recorded units (predicted x scale).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import Any, Sequence

from harness.errors import InputError
from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator import CacheBlock
from harness.session import Session
from harness.studies.cache_world import CacheWorld, Sent, send_times, timing_note
from harness.studies.digests import Digests

TTL_MODES = ("auto", "5m", "1h")
# How the runtime's compaction call meets the session's cache: `prefix`, the session's prefix plus an
# instruction (it reads the history and refreshes the entries); `separate`, a request that shares no entry
# with the session (another system prompt or tool set). On the real sessions only a compaction after an idle
# gap longer than the TTL tells them apart, and the one there is (docs/benchmarks.md) says `separate`.
COMPACTION_CALLS = ("separate", "prefix")
NEEDS_USAGE = ("calibration needs recorded usage per request (input, cache read, cache write tokens on "
               "assistant messages, as Claude Code transcripts record them); this transcript has none")


@dataclass(frozen=True)
class Recorded:
    total: int
    read: int
    write: int

    @property
    def read_share(self) -> float:
        return self.read / self.total if self.total else 0.0

    @property
    def write_share(self) -> float:
        return self.write / self.total if self.total else 0.0


def recorded(usage: dict[str, Any] | None) -> Recorded | None:
    """Anthropic usage (input is the uncached rest) or the normalised form (input is the whole prompt)."""
    if not usage:
        return None
    read = int(usage.get("cache_read_input_tokens", usage.get("cached_input_tokens")) or 0)
    write = int(usage.get("cache_creation_input_tokens", usage.get("cache_write_tokens")) or 0)
    rest = int(usage.get("input_tokens") or 0)
    total = rest + read + write if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage \
        else rest
    return Recorded(total, read, write) if total > 0 else None


@dataclass(frozen=True)
class Row:
    """One recorded request beside its prediction (predicted tokens in the simulation's units)."""

    index: int
    ts: str | None
    recorded: Recorded
    predicted: Sent
    after_compaction: bool
    ttl: str

    def read_error(self) -> float:
        return abs(self.predicted.read / self.predicted.total - self.recorded.read_share) \
            if self.predicted.total else 1.0

    def to_json(self, scale: float) -> dict[str, Any]:
        p = self.predicted
        return {"message": self.index, "ts": self.ts, "ttl": self.ttl, "after_compaction": self.after_compaction,
                "recorded": {"prompt": self.recorded.total, "cache_read": self.recorded.read,
                             "cache_write": self.recorded.write, "read_share": round(self.recorded.read_share, 4),
                             "write_share": round(self.recorded.write_share, 4)},
                "predicted": {"prompt": round(p.total * scale), "cache_read": round(p.read * scale),
                              "cache_write": round(p.write * scale),
                              "read_share": round(p.read / p.total, 4) if p.total else None,
                              "write_share": round(p.write / p.total, 4) if p.total else None},
                "read_share_error": round(self.read_error(), 4)}


# ---------------------------------------------------------------------------------------------
# the requests of a session


@dataclass(frozen=True)
class Segment:
    """Where a request's context starts: the summary in effect and the first live message."""

    summary: str | None
    live_start: int


def segments(session: Session) -> list[Segment]:
    """For each message index, the segment its requests belong to (compaction records cut the session)."""
    blocks = sorted(session.compactions, key=lambda c: c.position)
    out, current, b = [], Segment(None, 0), 0
    for i in range(len(session.messages)):
        while b < len(blocks) and blocks[b].position <= i:
            current = Segment(blocks[b].content, blocks[b].covers)
            b += 1
        out.append(current)
    return out


def request_messages(chat: Sequence[ChatMessage], segment: Segment, end: int) -> tuple[ChatMessage, ...]:
    head = (ChatMessage("user", segment.summary),) if segment.summary else ()
    return (*head, *chat[segment.live_start:end])


def chat_messages(session: Session, thinking: bool) -> list[ChatMessage]:
    """The messages as sent; with `thinking`, an assistant message's recorded thinking goes in front of its
    text (Claude models from Opus 4.5 on keep earlier turns' thinking in context)."""
    from harness.chat import chat_message

    out = []
    for message in session.messages:
        chat = chat_message(message)
        thought = (message.meta or {}).get("thinking") if thinking else None
        if thought and message.role == "assistant":
            text = thought if isinstance(thought, str) else "\n".join(str(t) for t in thought)
            chat = replace(chat, content=f"{text}\n{chat.content}" if chat.content else text)
        out.append(chat)
    return out


# ---------------------------------------------------------------------------------------------
# fitting the unseen prefix and the tokenizer ratio


def fit(groups: Sequence[Sequence[tuple[int, int]]]) -> tuple[float, list[float]]:
    """A shared scale and one intercept per group for totals = intercept + scale x counted, by least squares
    over (counted, total) pairs. Groups are the segments between compactions: the intercept of the first is
    the runtime's unseen prefix (system prompt, tools), a later one adds what the runtime re-attached after a
    compaction (restored files, todo lists) that the transcript does not hold."""
    pairs = [pair for group in groups for pair in group]
    centred = [(c - _mean_of(g, 0), t - _mean_of(g, 1)) for g in groups for c, t in g]
    var = sum(c * c for c, _ in centred)
    total_counted = sum(c for c, _ in pairs)
    scale = sum(c * t for c, t in centred) / var if var else 0.0
    if scale <= 0:  # too few or too alike requests to separate the two: the plain ratio, no unseen part
        scale = sum(t for _, t in pairs) / total_counted if total_counted else 1.0
        return scale, [0.0 for _ in groups]
    return scale, [max(0.0, _mean_of(g, 1) - scale * _mean_of(g, 0)) if g else 0.0 for g in groups]


def _mean_of(group: Sequence[tuple[int, int]], i: int) -> float:
    return statistics.fmean(p[i] for p in group) if group else 0.0


# ---------------------------------------------------------------------------------------------
# the replay


@dataclass
class Calibration:
    """One session's replay: its rows and the fitted prefix and scale."""

    path: str
    model: str
    rows: list[Row]
    hidden: float
    scale: float
    ttl: str
    ttl_source: str
    timing: str
    compactions: int

    def first_after(self) -> list[Row]:
        return [row for row in self.rows if row.after_compaction]

    def write_errors(self) -> list[float]:
        """Relative error of each first post-compaction request's predicted cache write (recorded units)."""
        return [abs(r.predicted.write * self.scale - r.recorded.write) / r.recorded.write
                for r in self.first_after() if r.recorded.write]

    def to_json(self, with_rows: bool = True) -> dict[str, Any]:
        out = {"path": self.path, "model": self.model, "requests": len(self.rows), "compactions": self.compactions,
               "hidden_prefix_tokens": round(self.hidden), "scale": round(self.scale, 4), "ttl": self.ttl,
               "ttl_source": self.ttl_source, "timing": self.timing, **errors(self.rows, self.write_errors()),
               "first_after_compaction": [r.to_json(self.scale) for r in self.first_after()]}
        if with_rows:
            out["rows"] = [r.to_json(self.scale) for r in self.rows]
        return out


def errors(rows: Sequence[Row], write_errors: Sequence[float]) -> dict[str, Any]:
    read = [r.read_error() for r in rows]
    first = [r.read_error() for r in rows if r.after_compaction]
    return {"median_read_share_error": _median(read), "mean_read_share_error": _mean(read),
            "median_first_after_read_share_error": _median(first),
            "median_first_after_write_error": _median(write_errors), "first_after_compactions": len(write_errors)}


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def calibrate_session(session: Session, path: str, model: str = "claude", ttl: str = "auto",
                      recorded_ttl: str | None = None, thinking: bool = True,
                      compaction_call: str = "separate") -> Calibration:
    chat = chat_messages(session, thinking)
    segs = segments(session)
    times = send_times(session.messages)
    wanted = [(i, rec) for i, m in enumerate(session.messages) if m.role == "assistant" and (rec := recorded(m.usage))]
    if not wanted:
        raise InputError(path, None, "usage", NEEDS_USAGE)
    chosen, source = (ttl, "--ttl") if ttl != "auto" else (recorded_ttl or "5m", "recorded" if recorded_ttl
                                                           else "assumed (no 5m/1h split recorded)")
    digests = Digests()

    def agent(i: int) -> ModelRequest:
        return ModelRequest(model, session.system, request_messages(chat, segs[i], i), 4096, tools=session.tools,
                            cache_ttl=chosen)

    starts = sorted({segs[i].live_start for i, _ in wanted})
    groups: dict[int, list[tuple[int, int]]] = {start: [] for start in starts}
    for i, rec in wanted:
        groups[segs[i].live_start].append((sum(b.tokens for b in digests.anthropic_blocks(agent(i))), rec.total))
    scale, intercepts = fit([groups[start] for start in starts])
    # the runtime's prefix: the first segment's intercept when the session starts uncompacted, else the least
    hidden = intercepts[0] if starts[0] == 0 else min(intercepts)
    unseen = {start: max(0.0, value - hidden) for start, value in zip(starts, intercepts)}
    prefix = Unseen(hidden / scale, unseen, scale, chosen)
    world = CacheWorld("anthropic", model, digests)
    pending = sorted(c.position for c in session.compactions)
    rows: list[Row] = []
    for i, rec in wanted:
        after = False
        while pending and pending[0] <= i:
            position = pending.pop(0)
            if compaction_call == "prefix":
                call = summarizer_call(model, session, chat, segs, position, chosen)
                start = segs[position - 1].live_start if position > 0 else 0
                world.send_blocks(prefix.blocks(digests, call, start), _at(times, position + 1))
            after = True
        request = agent(i)
        sent = world.send_blocks(prefix.blocks(digests, request, segs[i].live_start), _at(times, i))
        rows.append(Row(i, session.messages[i].ts, rec, sent, after, chosen))
    return Calibration(path, model, rows, hidden, scale, chosen, source, timing_note(session.messages),
                       len(session.compactions))


@dataclass(frozen=True)
class Unseen:
    """What the runtime sent that the transcript does not hold, in the simulation's units: the prefix ahead
    of every request, and per segment what follows the summary."""

    prefix: float
    per_segment: dict[int, float]
    scale: float
    ttl: str

    def blocks(self, digests: Digests, request: ModelRequest, live_start: int) -> list[CacheBlock]:
        own = digests.anthropic_blocks(request)
        lead = [CacheBlock("runtime-prefix", round(self.prefix), self.ttl)] if self.prefix >= 1 else []
        extra = round(self.per_segment.get(live_start, 0.0) / self.scale)
        if extra < 1:
            return [*lead, *own]
        # ahead of the segment's messages (summary included): Claude Code sends the restored files after the
        # summary, but the breakpoint on the last message covers both either way, and an order the cache sees
        # the same in every request of the segment gives the same reads and writes
        cut = len(digests.anthropic_head(request))
        added = CacheBlock(f"runtime-reattached:{live_start}", extra)
        return [*lead, *own[:cut], added, *own[cut:]]


def _at(times: Sequence[float | None], index: int) -> float | None:
    """The time of a request whose last message is `index - 1`."""
    return times[min(index, len(times)) - 1] if index > 0 and times else None


def summarizer_call(model: str, session: Session, chat: Sequence[ChatMessage], segs: Sequence[Segment],
                    position: int, ttl: str) -> ModelRequest:
    """The runtime's compaction call, absent from the transcript: the prefix before the boundary plus an
    instruction, a breakpoint on the last history message (it reads the cache and refreshes the prefix)."""
    from harness.compaction.summarizer import instruction

    history = request_messages(chat, segs[position - 1] if position > 0 else Segment(None, 0), position)
    return ModelRequest(model, session.system, (*history, ChatMessage("user", instruction(8192))), 8192,
                        tools=session.tools, cache_prefix_messages=len(history), cache_ttl=ttl, label="summary")


def calibrate(paths: Sequence[str], ttl: str = "auto", thinking: bool = True,
              compaction_call: str = "separate") -> dict[str, Any]:
    """Every transcript replayed and compared; pooled errors over all requests."""
    from harness.studies.transcripts import load, recorded_ttl_of

    runs = []
    for path in paths:
        session, model = load(path)
        runs.append(calibrate_session(session, path, model, ttl, recorded_ttl_of(path) if ttl == "auto" else None,
                                      thinking, compaction_call))
    rows = [row for run in runs for row in run.rows]
    writes = [e for run in runs for e in run.write_errors()]
    return {"source": "recorded vs modelled", "thinking_in_context": thinking, "compaction_call": compaction_call,
            "note": UNITS_NOTE,
            "total": {"requests": len(rows), "transcripts": len(runs), **errors(rows, writes)},
            "transcripts": [run.to_json() for run in runs]}


UNITS_NOTE = ("token counts differ by tokenizer (the simulation counts o200k): shares are compared, and the "
              "runtime's unseen prefix and the token ratio are fitted from the recorded prompt totals only")
