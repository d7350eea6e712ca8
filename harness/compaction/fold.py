"""The decision half of a compaction: a pure `prepare` turns the live context and the policy's plan into a
`Fold` that says what to do; the compactor then carries it out on one path (as pi's prepareCompaction /
compact). Nothing here calls a model or changes the context.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.compaction.context import LiveContext, pruned_message
from harness.compaction.events import Risk
from harness.compaction.summarizer import SummaryInput
from harness.policy.base import ModelSummary, Plan, PolicyConfig, RecordedSummary, Tail
from harness.session import Message

# What a fold does: ask the summarizer, drop the head with no summary, fold a block already written (the
# history's own for lookup, the transcript's for recorded), or nothing (a risk says why).
SUMMARIZER, TRUNCATE, LOOKUP, RECORDED, NOTHING = "summarizer", "truncate", "lookup", "recorded", "nothing"


@dataclass(frozen=True)
class SummaryAsk:
    """The summarizer call a fold makes, and what is done with its answer."""

    request: SummaryInput
    appendix: str | None = None  # appended to the summary the model writes (pi's file lists)
    reject_if_larger: bool = False  # keep the context as it was when the summary would grow it


@dataclass(frozen=True)
class Fold:
    """One compaction, decided: `source` is what it does, `tail` what stays verbatim."""

    source: str  # SUMMARIZER | TRUNCATE | LOOKUP | RECORDED | NOTHING
    send_index: int
    tail: Tail
    text: str | None = None  # the block folded as is (LOOKUP, RECORDED)
    ask: SummaryAsk | None = None  # the call that writes the summary (SUMMARIZER)
    request_tokens: int = 0  # true input tokens of the summarizer request (SUMMARIZER, TRUNCATE)
    risks: tuple[Risk, ...] = ()  # found while deciding; reported whatever the fold does


def prepare(context: LiveContext, config: PolicyConfig, send_index: int, plan: Plan | None, number: int) -> Fold:
    """What to do for a compaction before `send_index`. `plan` None is lookup mode: reuse the latest summary
    block of the history. `number` is the compaction this becomes if it is kept (the summarizer sees it)."""
    if plan is None:
        return _lookup(context, send_index)
    if isinstance(plan.summary, RecordedSummary):
        return Fold(RECORDED, send_index, plan.tail, text=plan.summary.text)
    if plan.tail.start <= context.live_start:
        return _nothing(context, send_index, "nothing_to_fold", "the tail is the whole live context")
    return _summarize(context, config, send_index, plan, number)


def _lookup(context: LiveContext, send_index: int) -> Fold:
    blocks = [c for c in context.session.compactions
              if c.position <= send_index and c.covers > context.live_start]
    if not blocks:
        return _nothing(context, send_index, "lookup_without_block", "no earlier summary block to reuse")
    block = max(blocks, key=lambda c: (c.position, c.covers))
    return Fold(LOOKUP, send_index, Tail(block.covers, 0, 0, False), text=block.content)


def _nothing(context: LiveContext, send_index: int, kind: str, detail: str) -> Fold:
    risk = Risk(kind, send_index, context.est_total, detail)
    return Fold(NOTHING, send_index, Tail(context.live_start, 0, 0, False), risks=(risk,))


def _summarize(context: LiveContext, config: PolicyConfig, send_index: int, plan: Plan, number: int) -> Fold:
    """A model summary of the head, or (the plan has no summary) the head dropped. Either way the request is
    sized, since a summary request that does not fit is a risk of the policy's tail."""
    summary = plan.summary
    budget = (summary.budget_tokens if summary else None) or config.summary_tokens
    first = context.live_start  # first message the summarizer is given
    request_tokens = (context.system_true + context.kept_true + context.summary_true
                      + context.span_true(range(first, plan.tail.start)))
    risks: tuple[Risk, ...] = ()
    if request_tokens + budget > config.context_window:
        risks = (Risk("summary_request_too_big", send_index, request_tokens,
                      f"summary request {request_tokens} + output {budget} > window {config.context_window}"),)
        if summary is not None and summary.trim_request:
            first, request_tokens = _trimmed(context, first, plan.tail.start, request_tokens,
                                             config.context_window - budget)
    if summary is None:
        return Fold(TRUNCATE, send_index, plan.tail, request_tokens=request_tokens, risks=risks)
    request = SummaryInput(
        context.session.system, context.summary, summary_head(context, first, plan.tail.start, summary),
        budget, number, first, kept=tuple(context.kept_messages()),
        split_turn_start=plan.tail.split_turn_start, tools=context.session.tools)
    ask = SummaryAsk(request, summary.appendix, plan.reject_if_larger)
    return Fold(SUMMARIZER, send_index, plan.tail, ask=ask, request_tokens=request_tokens, risks=risks)


def _trimmed(context: LiveContext, first: int, tail_start: int, request_tokens: int, limit: int) -> tuple[int, int]:
    """codex: drop the oldest head message until the request fits `limit`, keeping at least one."""
    while tail_start - first > 1 and request_tokens > limit:
        request_tokens -= context.true_of(first)
        first += 1
    return first, request_tokens


def summary_head(context: LiveContext, start: int, end: int, summary: ModelSummary) -> tuple[Message, ...]:
    """The messages folded now, as the summarizer sees them (pruned and cut where the policy says)."""
    head = context.session.messages[start:end]
    chars = summary.tool_result_chars
    if not context.pruned and chars is None:
        return head
    shown = []
    for i, message in enumerate(head, start):
        if i in context.pruned:
            message = pruned_message(message)
        elif message.role == "tool" and chars is not None:
            message = cut_tool_result(message, chars)
        shown.append(message)
    return tuple(shown)


def cut_tool_result(message: Message, chars: int) -> Message:
    """The first `chars` characters of a tool result and a marker saying how much was cut."""
    if len(message.content) <= chars:
        return message
    cut = len(message.content) - chars
    return replace(message, content=f"{message.content[:chars]}\n[... {cut} more characters of tool output cut]")


def with_appendix(text: str, appendix: str | None) -> str:
    return f"{text}\n\n{appendix}" if appendix else text
