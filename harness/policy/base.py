"""What every policy shares: its configuration, the send point it judges, the plan it returns.

Policies are pure: they see token counts and the turn/step structure of the live context, never a
model or a file. A small registry maps names (`default`, later the peers) to policy factories.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import AbstractSet, Callable, Iterator, NamedTuple, Protocol

from harness.errors import HarnessError
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
class Plan:
    """Where the tail starts; everything live before it is the head (folded into the summary)."""

    tail_start: int
    turns_kept: int
    steps_kept: int
    truncated_to_step: bool
    summarize: bool = True  # False: the head is dropped with no summary (the `truncate` floor)
    # Peer extras; the defaults are the policy under test.
    kept_head: tuple[int, ...] = ()  # messages kept verbatim ahead of the new summary (codex: user messages)
    summary_tokens: int | None = None  # the summarizer's output budget (None: config.summary_tokens)
    tool_result_chars: int | None = None  # tool results cut to this many characters in the summarizer input
    split_turn_start: int | None = None  # the tail splits the turn opened here: its prefix is in the head
    reject_if_larger: bool = False  # keep the old context when the summary would make it larger
    trim_summary_request: bool = False  # drop the oldest head messages until the summary request fits
    summary_appendix: str | None = None  # text the harness appends to the new summary (pi's file lists)
    recorded_summary: str | None = None  # fold this recorded summary as is, no model call (the `recorded` policy)


class Policy(Protocol):
    name: str
    config: PolicyConfig

    def should_compact(self, send: SendPoint) -> bool: ...

    def plan(self, view: ContextView) -> Plan: ...

    # Optional hooks, looked up with getattr by the compactor (the default policy has none):
    #   prune(view) -> tuple[int, ...]    tool results to clear, asked at sends between whole turns
    #   would_trigger(tokens) -> bool     the trigger on a token count alone (for the no_shrink risk)
    #   begin(session, tokens, system_tokens) / folded(tail_start, kept, summary, summary_tokens) / end()
    #                                     lifecycle of a stateful policy (an external adapter process)
    #   compaction_points: set of message indices, read after begin(); before each of those messages the
    #   compactor compacts with forced_plans(view) -> tuple[Plan, ...] whatever the trigger says
    #                                     (the `recorded` policy and --at-recorded-points)


_REGISTRY: dict[str, Callable[[PolicyConfig], Policy]] = {}


def register(name: str):
    def add(factory):
        _REGISTRY[name] = factory
        return factory

    return add


def policy_names() -> list[str]:
    return sorted(_REGISTRY)


def make_policy(name: str, config: PolicyConfig) -> Policy:
    import harness.policy  # noqa: F401  (registers the built-in policies)

    if name.startswith("cmd:"):  # a policy run as a subprocess: cmd:"node adapter.js"
        from harness.policy.external import ExternalPolicy

        return ExternalPolicy.from_command(name[4:], config)
    factory = _REGISTRY.get(name)
    if factory is None:
        raise HarnessError(f"unknown policy {name!r}: choose one of {', '.join(policy_names())}")
    return factory(config)
