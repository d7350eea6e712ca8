"""The summarizer side of a compaction: what it is given, what it returns.

The compactor hands a `SummaryInput` (the system prompt, the summary in effect, the head being folded,
an output budget) to a `Summarizer`. `PlaceholderSummarizer` needs no model: it returns a labelled
block of the configured size, so `simulate` can measure the policy's mechanics on its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from harness.chat import chat_message
from harness.models.base import ChatMessage, ModelClient, ModelRequest
from harness.session import Message
from harness.tokens import TokenCounter

SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")
SHAPES = ("prefix", "fresh", "tools-dropped")
# The instruction users copy and edit (`run --instruction FILE`): `{sections}` becomes the requested sections
# as `## Name` lines and `{budget}` the output budget in tokens; any other text is sent as written.
INSTRUCTION_FILE = Path(__file__).with_name("instruction.md")
SUMMARY_INSTRUCTION = INSTRUCTION_FILE.read_text(encoding="utf-8").rstrip("\n")
FRESH_SYSTEM = "You are a summarizer. You condense agent transcripts into structured notes."

SUMMARY_HEADER = "[Summary of the earlier conversation, written at compaction {number}]"


@dataclass(frozen=True)
class SummaryInput:
    system: str | None
    previous_summary: str | None  # the block in effect: on a second compaction nothing it held may be lost
    head: tuple[Message, ...]  # the messages folded now, oldest first
    budget_tokens: int
    number: int  # 1 for the first compaction of the replay
    head_start: int  # message index of head[0]
    # Peer policies only (empty for the default): messages kept verbatim ahead of the summary in effect,
    # shown before it (codex keeps recent user messages); and where a turn split by the tail begins in
    # `head`, as a message index (pi summarizes that turn's prefix on its own).
    kept: tuple[Message, ...] = ()
    split_turn_start: int | None = None
    # The session's tool definitions: a runtime sends them on the summarizer call too, or the cached prefix
    # (tools first) does not match.
    tools: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class SummaryResult:
    text: str
    model: str = "placeholder"
    usage: Any = None  # models.base.Usage when a model wrote it
    model_time_s: float = 0.0
    latency_source: str = "modelled"  # live | recorded | modelled
    finish_reason: str = "stop"
    extra: dict[str, Any] = field(default_factory=dict)
    # Wall seconds spent inside the model client; building the request around it is harness work.
    # None: the summarizer does not say, and all of its call counts as waiting on the model.
    client_time_s: float | None = None


class Summarizer(Protocol):
    name: str

    def summarize(self, request: SummaryInput) -> SummaryResult: ...


@dataclass(frozen=True)
class PlaceholderSummarizer:
    """A deterministic stand-in: a labelled summary of `budget_tokens` under chars/4, holding no facts."""

    name: str = "placeholder"
    sized_by_estimate: bool = True  # its size is the budget under chars/4 by design: never cut to true tokens

    def summarize(self, request: SummaryInput) -> SummaryResult:
        label = (f"[placeholder summary {request.number}: messages {request.head_start}"
                 f"..{request.head_start + len(request.head) - 1}"
                 f"{' + previous summary' if request.previous_summary else ''}]")
        filler = " ." * max(0, (request.budget_tokens * 4 - len(label)) // 2)
        return SummaryResult(label + filler)


def summary_block(text: str, number: int) -> str:
    """The summary as it stands in the compacted context (sent as the first user message)."""
    return f"{SUMMARY_HEADER.format(number=number)}\n{text}"


# ---------------------------------------------------------------------------------------------
# a model as the summarizer


def instruction(budget_tokens: int, sections: tuple[str, ...] = SECTIONS, template: str | None = None) -> str:
    """The instruction sent after the history: `template` (default: instruction.md) with its placeholders
    filled; replaced literally, so braces elsewhere in a user's text are kept."""
    text = SUMMARY_INSTRUCTION if template is None else template
    return text.replace("{sections}", "\n".join(f"## {s}" for s in sections)).replace("{budget}", str(budget_tokens))


def summary_request(request: SummaryInput, model: str, *, shape: str = "prefix", cache: bool = True,
                    sections: tuple[str, ...] = SECTIONS, cache_key: str | None = None,
                    template: str | None = None) -> ModelRequest:
    """The summarizer call. `prefix` keeps the session's exact prefix (system prompt, the summary in
    effect, the head as the model saw it) and appends the instruction, so a same-model call reads the
    history from the prompt cache. `fresh` sends the same content under a summarizer system prompt as one
    transcript: the shape that breaks the prefix (the cost study's mistake to detect)."""
    history = [chat_message(m) for m in request.kept]  # as the context holds them: ahead of the summary
    if request.previous_summary:
        history.append(ChatMessage("user", request.previous_summary))
    history.extend(chat_message(m) for m in request.head)
    if request.split_turn_start is not None:
        # pi: the tail cut a turn; its beginning gets a section of its own, since the rest stays verbatim
        sections = (*sections, "Turn in progress")
    ask = ChatMessage("user", instruction(request.budget_tokens, sections, template))
    if shape in ("prefix", "tools-dropped"):
        tools = request.tools if shape == "prefix" else ()
        return ModelRequest(model, request.system, (*history, ask), request.budget_tokens, cache=cache,
                            cache_key=cache_key, cache_prefix_messages=len(history), tools=tools,
                            label="summary")
    if shape != "fresh":
        raise ValueError(f"unknown request shape {shape!r}")
    transcript = "\n\n".join(f"[{m.role}] {_chat_text(m)}" for m in history)
    return ModelRequest(model, FRESH_SYSTEM, (ChatMessage("user", f"{transcript}\n\n{ask.content}"),),
                        request.budget_tokens, cache=cache, cache_key=cache_key, cache_prefix_messages=0,
                        label="summary-fresh")


def _chat_text(message: ChatMessage) -> str:
    calls = "\n".join(f"{c.name} {c.arguments}" for c in message.tool_calls)
    return f"{message.content}\n{calls}".strip()


@dataclass
class ModelSummarizer:
    """Summarize with a ModelClient. `same` in the runner means the session's own model."""

    client: ModelClient
    model: str
    shape: str = "prefix"
    cache: bool = True
    sections: tuple[str, ...] = SECTIONS
    responses: list[Any] = field(default_factory=list)
    template: str | None = None  # the instruction's text (None: the shipped instruction.md)

    @property
    def name(self) -> str:
        return self.client.spec if hasattr(self.client, "spec") else self.model

    def summarize(self, request: SummaryInput) -> SummaryResult:
        model_request = summary_request(request, self.model, shape=self.shape, cache=self.cache,
                                        sections=self.sections, template=self.template)
        called = time.perf_counter()
        response = self.client.complete(model_request)
        client_time_s = time.perf_counter() - called
        self.responses.append(response)
        return SummaryResult(response.text, self.name, response.usage, response.latency_s,
                             response.latency_source, response.finish_reason,
                             {"truncated": response.truncated}, client_time_s)


def model_summarizer(spec: str, **options: Any) -> ModelSummarizer:
    """A summarizer for a model spec (`builtin`, `openai:MODEL`, ...), opened now so a missing key fails early."""
    from harness.models import check_spec, open_client

    client_options = {k: options.pop(k) for k in ("cassette_path", "record_mode", "case_id", "transport")
                      if k in options}
    return ModelSummarizer(open_client(spec, **client_options), check_spec(spec).model, **options)


def within_budget(result: SummaryResult, budget: int, tokens: TokenCounter) -> SummaryResult:
    """The summary graded as the budget allows: one longer than `budget` true tokens is cut to its longest
    prefix within it (at a line or word end) and flagged with its size (`extra["over_budget_tokens"]`), so
    writing past the budget buys nothing. A budget of 0 (none given) and a provider's item are left alone."""
    size = tokens.count_text(result.text) if budget > 0 and not result.extra.get("provider_item") else 0
    if size <= budget:
        return result
    low, high = 0, len(result.text)
    while low < high:  # the longest prefix within the budget (a handful of counts)
        middle = (low + high + 1) // 2
        if tokens.count_text(result.text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    cut = result.text[:low]
    end = max(cut.rfind("\n"), cut.rfind(" "))
    text = cut[:end] if end > 0 and low < len(result.text) else cut
    return replace(result, text=text.rstrip(), extra={**result.extra, "over_budget_tokens": size})

