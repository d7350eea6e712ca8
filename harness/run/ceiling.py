"""The ceiling a probe is graded against, within the answerer's window.

EVALUATION.md makes the full history the ceiling: a probe it cannot answer is invalid. On long cases the full
history does not fit the answerer (235K to 650K tokens against 128K and 200K windows), so a real model would
reject the request and every such probe would turn into an error. When the full history at a probe point fits
the answerer's window minus its answer budget, the ceiling is `full`, as before. When it does not, it is the
`oracle`: the system prompt and the messages that establish the probe's facts (the message at `planted_at`, and
the messages before the point holding an `all` item), each with its tool calls and their results, in session
order, as many as the window holds. One oracle serves every probe asked at a point (the facts of each, taken
in turn), so its probes share one context and its prompt cache, as they do on the full history; a probe whose
facts it cannot hold beside the others' gets an oracle of its own. The builtin
answerer gets the same window as the model it stands in for, so offline and live runs grade against the same
ceiling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from harness.cases.schema import Probe
from harness.matching import Texts
from harness.session import Message, Session, message_text
from harness.tokens import MessageTokens

CEILINGS = ("full", "oracle")
# Provider tokens per o200k token, as a margin on our count: the wire adds ids and JSON around tool calls, and
# Claude 4.7 and later tokenize the same text into about 30% more tokens (PROVIDERS.md).
WIRE_MARGIN = 1.05
NEWER_CLAUDE_MARGIN = 1.3
_NEWER_CLAUDE = re.compile(r"claude-(?:(?:opus|sonnet|haiku)-(?:4-[7-9]|[5-9])|[a-z]+-[5-9])")
FIXED_OVERHEAD = 256  # the question, the answer instruction and the request's own framing


@dataclass(frozen=True)
class AnswererWindow:
    """What the answerer accepts: `window` tokens for prompt and answer together."""

    window: int
    answer_tokens: int
    margin: float = WIRE_MARGIN

    @property
    def prompt_budget(self) -> int:
        """Our (o200k) tokens a prompt may hold so that the provider's count plus the answer fits."""
        return int((self.window - self.answer_tokens - FIXED_OVERHEAD) / self.margin)

    def fits(self, prompt_tokens: int) -> bool:
        return prompt_tokens <= self.prompt_budget


def margin_for(model: str) -> float:
    return NEWER_CLAUDE_MARGIN if _NEWER_CLAUDE.search(model) else WIRE_MARGIN


@dataclass(frozen=True)
class Ceiling:
    """The ceiling at a probe point: `full` (the whole history up to the point) or `oracle` (the chosen
    messages). `left_out` counts the fact-holding steps the window could not take; `unseen` names the probes
    none of whose fact-holding steps fit."""

    kind: str
    indices: tuple[int, ...]
    tokens: int
    left_out: int = 0
    unseen: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.indices

    def shows(self, probe: Probe) -> bool:
        return bool(self.indices) and probe.id not in self.unseen

    def messages(self, session: Session) -> tuple[Message, ...]:
        return tuple(session.messages[i] for i in self.indices)


class CeilingBuilder:
    """Ceilings for the probes of one session: per-message counts and normalised texts computed once."""

    def __init__(self, session: Session, sizes: MessageTokens, window: AnswererWindow,
                 forms: dict[str, str] | None = None):
        self.session, self.sizes, self.window = session, sizes, window
        self._units = steps(session.messages)
        self._texts = Texts((message_text(m) for m in session.messages), forms)
        self._system = sizes.text(session.system)

    def for_probe(self, probe: Probe, end: int) -> Ceiling:
        return self.for_point((probe,), end)

    def for_point(self, probes: Sequence[Probe], end: int) -> Ceiling:
        """The ceiling of the probes asked at one point (ending at message `end`)."""
        full = self._system + self.sizes.span(range(end))
        if self.window.fits(full):
            return Ceiling("full", tuple(range(end)), full)
        return self.oracle(probes, end)

    def oracle(self, probes: Sequence[Probe], end: int) -> Ceiling:
        budget = self.window.prompt_budget - self._system
        wanted = {probe.id: self._wanted_units(probe, end) for probe in probes}
        chosen: set[int] = set()
        used = left_out = 0
        for unit in _in_turns(list(wanted.values())):
            cost = self.sizes.span(self._units[unit])
            if used + cost > budget:
                left_out += 1
                continue
            chosen.add(unit)
            used += cost
        indices = sorted(i for unit in chosen for i in self._units[unit] if i < end)
        indices, used = self._with_opening_user(indices, used, budget)
        unseen = frozenset(pid for pid, units in wanted.items() if not chosen.intersection(units))
        return Ceiling("oracle", tuple(indices), self._system + used, left_out, unseen)

    def _wanted_units(self, probe: Probe, end: int) -> list[int]:
        """planted_at's step first, then for each `all` item the steps holding it, latest first, taken in
        turns across the items so that each item is represented before any gets a second message."""
        unit_of = {i: u for u, members in enumerate(self._units) for i in members}
        first = [unit_of[probe.planted_at]] if 0 <= probe.planted_at < end else []
        per_item = [self._holding(item, end, unit_of) for item in probe.all]
        return list(dict.fromkeys(first + _in_turns(per_item)))

    def _holding(self, item: tuple[str, ...], end: int, unit_of: Mapping[int, int]) -> list[int]:
        found = sorted(set().union(*(self._texts.holding(alt, end) for alt in item)), reverse=True)
        return list(dict.fromkeys(unit_of[i] for i in found))

    def _with_opening_user(self, indices: list[int], used: int, budget: int) -> tuple[list[int], int]:
        """A conversation opens with a user message: when the chosen steps do not, the user message that
        began the first one's turn goes first (when the window holds it)."""
        messages = self.session.messages
        if not indices or messages[indices[0]].role == "user":
            return indices, used
        opener = next((i for i in range(indices[0] - 1, -1, -1) if messages[i].role == "user"), None)
        if opener is None or used + self.sizes[opener] > budget:
            return indices, used
        return [opener, *indices], used + self.sizes[opener]


def _in_turns(lists: list[list[int]]) -> list[int]:
    """The first of each list, then the second of each, ... (duplicates kept first)."""
    order = [units[rank] for rank in range(max((len(u) for u in lists), default=0)) for units in lists
             if rank < len(units)]
    return list(dict.fromkeys(order))


def steps(messages: Sequence[Message]) -> list[tuple[int, ...]]:
    """The messages grouped so that none is sent without what it needs: an assistant message with its tool
    calls' results; a tool result whose call is unknown stays with the step before it; others alone."""
    units: list[list[int]] = []
    owner: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.role == "tool":
            unit = owner.get(message.tool_call_id or "", len(units) - 1)
            if unit >= 0:
                units[unit].append(index)
                continue
        units.append([index])
        for call in message.tool_calls:
            owner[call.id] = len(units) - 1
    return [tuple(unit) for unit in units]
