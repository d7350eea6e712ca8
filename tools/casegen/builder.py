"""Session builder, probe-truth verification, the policy's expectations for tuning, and case.toml output.

Built on the harness itself: messages are `harness.session` types written by its session writer, case.toml
goes through the one case writer in `harness.cases`, and the expected compactions come from the policy
under test (`harness.policy`, "default") over the harness's chars/4 estimate (`harness.tokens`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from harness.cases import case_toml as write_case_toml
from harness.policy import ContextView, PolicyConfig, SendPoint, make_policy
from harness.session import CompactionRecord, Message, Session, ToolCall, message_text
from harness.tokens import MessageTokens, counter
from anchors import ANCHORS
from toolset import TOOLS

# The summary size assumed when predicting compactions (the real one comes from the summarizer).
ASSUMED_SUMMARY_TOKENS = 3000


@dataclass
class Probe:
    id: str
    kind: str
    question: str
    all: list[Any]
    at: str  # beat name (or "@<index>") where the fact was last established
    none: list[str] = field(default_factory=list)
    regex: str | None = None
    rubric: str | None = None
    planted_at: int = -1
    accept: list[str] = field(default_factory=list)
    reject: list[str] = field(default_factory=list)
    anchor: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, Any]:
        """The [[probe]] table, in the order case.toml shows it; empty optional fields are left out."""
        return {"id": self.id, "kind": self.kind, "question": self.question, "all": self.all,
                "none": self.none or None, "anchor": self.anchor or None, "regex": self.regex or None,
                "planted_at": self.planted_at,
                "rubric": self.rubric or None, "accept": self.accept or None, "reject": self.reject or None}


class Builder:
    """Collects the session as harness messages; `session()` is the canonical `Session` that is written."""

    def __init__(self, system: str):
        self.system = system
        self.msgs: list[Message] = []  # non-system messages, compaction blocks apart
        self.compactions: list[CompactionRecord] = []
        self.marks: dict[str, int] = {}
        self._calls = 0
        self.chars = len(system)

    # -- writing messages
    def _add(self, message: Message) -> int:
        self.msgs.append(message)
        self.chars += len(message_text(message))
        return len(self.msgs) - 1

    def user(self, text: str) -> int:
        return self._add(Message("user", text))

    def say(self, text: str) -> int:
        return self._add(Message("assistant", text))

    def step(self, text: str, calls: list[tuple[str, dict[str, Any], str, bool]]) -> tuple[int, list[int]]:
        tool_calls = []
        for name, args, _out, _err in calls:
            self._calls += 1
            tool_calls.append(ToolCall(f"call_{self._calls:04d}", name, args))
        a = self._add(Message("assistant", text, tuple(tool_calls)))
        outs = [self._add(Message("tool", out, tool_call_id=call.id, is_error=err))
                for call, (_name, _args, out, err) in zip(tool_calls, calls)]
        return a, outs

    def compaction(self, content: str, covers: int, position: int | None = None, origin: str = "manual") -> None:
        """A summary block before message `position` (default: the next message) standing for messages < covers."""
        at = len(self.msgs) if position is None else position
        self.compactions.append(CompactionRecord(content, covers, at, origin))

    def mark(self, name: str, index: int) -> None:
        self.marks[name] = index

    @property
    def tool_calls(self) -> int:
        return self._calls

    def session(self) -> Session:
        """With the agent's tool definitions (toolset.py): requests carry them ahead of the system prompt."""
        return Session(tuple(self.msgs), self.system, tuple(self.compactions), tools=TOOLS)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\\", "/")).lower()


def _item_in(item: Any, text: str) -> bool:
    if isinstance(item, list):
        return any(norm(str(x)) in text for x in item)
    return norm(str(item)) in text


def verify_probes(b: Builder, probes: list[Probe], planted: tuple[str, ...] = ()) -> list[str]:
    """Probe truth: every `all` item occurs at or before planted_at, the planted message holds one of them,
    update probes' old values appear before the new one and are not restated after planted_at. Old values are
    the `none` items the case planted (`planted`, the values kept out of noise); other `none` items are answers
    the grader refuses (a rejected option, a hedge), not facts of the session."""
    texts = [norm(message_text(m)) for m in b.msgs]
    problems = []
    for p in probes:
        if p.at.startswith("@"):
            p.planted_at = int(p.at[1:])
        else:
            p.planted_at = b.marks[p.at]
        upto = " \u241e ".join(texts[: p.planted_at + 1])
        for item in p.all:
            if not _item_in(item, upto):
                problems.append(f"{p.id}: {item!r} not found at or before message {p.planted_at}")
        if not any(_item_in(item, texts[p.planted_at]) for item in p.all):
            problems.append(f"{p.id}: planted message {p.planted_at} holds none of {p.all!r}")
        for old in (p.none if p.kind == "update" else ()):
            if old not in planted:
                continue
            first_old = next((i for i, t in enumerate(texts) if norm(old) in t), None)
            if first_old is None:
                problems.append(f"{p.id}: superseded value {old!r} never appears")
                continue
            if first_old >= p.planted_at:
                problems.append(f"{p.id}: superseded value {old!r} first appears at {first_old}, not before planted_at {p.planted_at}")
            for i in range(p.planted_at + 1, len(texts)):
                if norm(old) in texts[i]:
                    problems.append(f"{p.id}: superseded value {old!r} restated at message {i} after planted_at")
                    break
    return problems


# ------------------------------------------------------------------------------------------------
# what the policy under test would do with the session, to tune sizes and report expectations


def session_tokens(session: Session, counter_name: str = "chars4") -> int:
    """The session's size as the harness counts it: system prompt, every message and every summary block."""
    tokens = MessageTokens(counter(counter_name), session.messages)
    blocks = sum(tokens.text(block.content) for block in session.compactions)
    return tokens.text(session.system) + tokens.span(range(len(session.messages))) + blocks


def simulate(b: Builder, window: int, summary_tokens: int = ASSUMED_SUMMARY_TOKENS) -> list[dict[str, Any]]:
    """The compactions the default policy makes over the session, each summary taken as `summary_tokens`."""
    session = b.session()
    policy = make_policy("default", PolicyConfig(context_window=window))
    estimate = MessageTokens(counter("chars4"), session.messages)
    system = estimate.text(session.system)
    live_start, summary = 0, 0
    events = []
    for send, message in enumerate(session.messages):
        if message.role != "assistant":
            continue
        before = system + summary + estimate.span(range(live_start, send))
        mid_turn = send > 0 and session.messages[send - 1].role == "tool"
        if not policy.should_compact(SendPoint(send, before, mid_turn)):
            continue
        plan = policy.plan(ContextView(session, live_start, send, estimate.__getitem__))
        tail_from = max(plan.tail_start, live_start)
        turn = session.turns[session.turn_of[tail_from]]
        one_step = tail_from > max(turn.start, live_start)  # the tail is one step of a turn, not whole turns
        events.append({"send": send, "before": before, "tail_from": tail_from, "one_step": one_step,
                       "after": system + summary_tokens + estimate.span(range(tail_from, send))})
        live_start, summary = tail_from, summary_tokens
    return events


# ------------------------------------------------------------------------------------------------
# case.toml


def case_toml(case_id: str, title: str, pool: str, window: int, max_out: int, script: str, seed: int,
              probes: list[Probe], notes: str = "") -> str:
    return write_case_toml(case_id=case_id, title=title, pool=pool, context_window=window,
                           max_output_tokens=max_out, notes=notes or None,
                           tables={"generator": {"script": script, "seed": seed}},
                           probes=[replace(p, anchor=ANCHORS.get(case_id, {}).get(p.id, [])).fields() for p in probes])
