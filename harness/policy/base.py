"""What every policy shares: its configuration, the send point it judges, the view it reads, the plan it
returns, and the `Policy` base with its optional hooks.

Policies are pure: they see token counts and the turn/step structure of the live context, never a
model or a file. Names are mapped to policies in `harness.policy.registry`; this module imports none of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import AbstractSet, Callable, Iterator, NamedTuple

from harness.errors import HarnessError
from harness.kept_items import KeptText
from harness.session import Session, Turn

MODES = ("read_write", "lookup", "off")


@dataclass(frozen=True)
class PolicyConfig:
    context_window: int
    max_output_tokens: int = 16384
    reserve_tokens: int = 16384
    tail_turns: int = 3
    tail_cap_tokens: int = 16384
    mode: str = "read_write"
    enabled: bool = True
    # Output budget of the summarizer call. POLICY.md leaves it open; 4096 is our choice.
    summary_tokens: int = 4096

    def __post_init__(self):
        if self.mode not in MODES:
            raise HarnessError(f"unknown mode {self.mode!r}: choose one of {', '.join(MODES)}")
        for name in ("context_window", "reserve_tokens", "tail_cap_tokens", "summary_tokens"):
            if getattr(self, name) <= 0:
                raise HarnessError(f"{name} must be positive, not {getattr(self, name)}")
        if self.tail_turns < 1:
            raise HarnessError(f"tail_turns must be at least 1, not {self.tail_turns}")

    def with_settings(self, **settings) -> PolicyConfig:
        return replace(self, **settings)

    @property
    def active(self) -> bool:
        return self.enabled and self.mode != "off"


class SendPoint(NamedTuple):
    """The moment before a model request: `index` is the message the request would produce.
    A NamedTuple rather than a dataclass: one is made on every send, the hot path."""

    index: int
    context_tokens: int  # the estimate over everything the request would send
    mid_turn: bool  # the last message is a tool result: between tool rounds of one turn


@dataclass(frozen=True)
class LiveTurn:
    """A turn clipped to the live context (the first may have lost its user message earlier)."""

    start: int
    end: int
    step_starts: tuple[int, ...]  # start of each step, oldest first
    has_user: bool


@dataclass(frozen=True)
class ContextView:
    """The live messages [live_start, end) of a session, with their estimated token counts."""

    session: Session
    live_start: int
    end: int
    tokens: Callable[[int], int]  # estimated tokens of one message by index
    # What a peer may need beyond the live range (all empty for the default policy):
    kept: tuple[int, ...] = ()  # messages kept verbatim ahead of the summary in effect (codex)
    summary: str | None = None  # the summary block in effect
    rejected_summaries: int = 0  # summaries this replay refused to fold (gemini-cli then only truncates)
    pruned: AbstractSet[int] = frozenset()  # tool results whose output was cleared (opencode, claude-code)

    def span_tokens(self, start: int, end: int) -> int:
        return sum(self.tokens(i) for i in range(start, end))

    def turns_newest_first(self) -> Iterator[LiveTurn]:
        if self.end <= self.live_start:
            return
        turns = self.session.turns
        number = self.session.turn_of[self.end - 1]
        while number >= 0:
            turn: Turn = turns[number]
            if turn.end <= self.live_start:
                return
            start, end = max(turn.start, self.live_start), min(turn.end, self.end)
            steps = tuple(s.start for s in turn.steps if start <= s.start < end)
            yield LiveTurn(start, end, steps, turn.has_user and turn.start >= self.live_start)
            number -= 1


@dataclass(frozen=True)
class Tail:
    """What stays verbatim: `messages[start:]`, and `kept_head` ahead of the new summary."""

    start: int
    turns: int  # turns the tail touches
    steps: int  # steps (assistant messages) the tail holds
    truncated_to_step: bool  # the tail starts inside a turn: that turn's user message is in the head
    split_turn_start: int | None = None  # the turn the tail splits opens here: its prefix is in the head (pi)
    kept_head: tuple[int, ...] = ()  # messages kept verbatim ahead of the new summary (codex: user messages)
    kept_text: tuple[KeptText, ...] = ()  # kept items with no message of their own, at their slots (recorded)


@dataclass(frozen=True)
class ModelSummary:
    """How the summarizer is asked to write the new summary. The defaults are the policy under test."""

    budget_tokens: int | None = None  # the summarizer's output budget (None: config.summary_tokens)
    tool_result_chars: int | None = None  # tool results cut to this many characters in the summarizer input
    trim_request: bool = False  # drop the oldest head messages until the summary request fits (codex)
    appendix: str | None = None  # text the harness appends to the new summary (pi's file lists)


@dataclass(frozen=True)
class RecordedSummary:
    """A summary folded as it was recorded: no model call, no harness header (the `recorded` policy)."""

    text: str


@dataclass(frozen=True)
class Plan:
    """What a compaction keeps, how the head becomes a summary, and whether a larger result is refused.

    `summary` None drops the head with no summary (the `truncate` floor)."""

    tail: Tail
    summary: ModelSummary | RecordedSummary | None = ModelSummary()
    reject_if_larger: bool = False  # keep the old context when the summary would make it larger (gemini-cli)

    @property
    def tail_start(self) -> int:
        return self.tail.start


class Policy(ABC):
    """A compaction policy: a trigger (`should_compact`) and a tail (`plan`), both pure.

    The hooks below are optional: each has a no-op default, so the compactor calls them on every policy.
    A stateful policy (an external adapter process, the recorded points) overrides the lifecycle ones."""

    name: str
    config: PolicyConfig

    @abstractmethod
    def should_compact(self, send: SendPoint) -> bool:
        """Whether to compact before this send."""

    @abstractmethod
    def plan(self, view: ContextView) -> Plan:
        """What the compaction keeps and how it summarizes, asked when `should_compact` fired."""

    def would_trigger(self, tokens: int) -> bool:
        """The trigger on a token count alone, to judge the `no_shrink` risk. False: the policy has no token
        trigger (an external adapter, recorded points), so no compaction is judged."""
        return False

    @property
    def prunes(self) -> bool:
        """Whether `prune` is asked at all; False spares building a view on every send of the hot path."""
        return False

    def prune(self, view: ContextView) -> tuple[int, ...]:
        """Tool results to clear (their output replaced by a marker), asked at sends between whole turns."""
        return ()

    def check_ready(self) -> None:
        """Raise HarnessError if the policy cannot work at all (a program to start is missing): asked before
        the first case, so the mistake is one line, not an error in every case."""

    def begin(self, session: Session, tokens: Callable[[int], int], system_tokens: int) -> None:
        """Called once before a replay, with the estimated tokens of each message and of the system prompt."""

    @property
    def compaction_points(self) -> frozenset[int]:
        """Message indices, read after `begin`, before which the compactor compacts whatever the trigger says,
        with the plans of `forced_plans`."""
        return frozenset()

    def forced_plans(self, view: ContextView) -> tuple[Plan, ...]:
        """The plans for a compaction point (`view.end` is the point), oldest first."""
        return ()

    def folded(self, tail_start: int, kept: tuple[int, ...], summary: str | None, summary_tokens: int) -> None:
        """Told after every fold: the new tail start, the kept messages, the summary block and its estimate."""

    def end(self) -> None:
        """Called once after a replay, also when it failed."""
