"""`--window recorded`: a runtime compacts where the recorded session did, by its own trigger.

A real session compacted when its context reached some size; a runtime replaying it carries a different context
(its own system prompt and tools, `cat` calls in place of the recorded ones, its own cuts of long outputs), so
the recorded size says little about when the runtime's trigger fires. So each case is first driven with the
runtime's compaction off up to the turn holding the recorded compaction (the calibration), which gives the
runtime's own context at that point as the harness's server reported it; the window is then the one at which
the runtime's own trigger rule fires at that context, and the case is driven again with it.

Each adapter states its rule (`[compaction] trigger`, an expression harness/runtimes/trigger.py reads) as the
runtime applies it behind this server:

- pi: `window - max(16384, max_output)`: its `contextTokens > window - reserveTokens`, or the server's overflow
  error (prompt + max output over the window) when the model's max output is larger, which pi answers by compacting;
- codex: `0.9 * window`: 90% of `model_context_window`, checked before each request;
- opencode: `window - max_output`: its usable context.

Later compactions follow from the same window, as the recorded session's did from its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.cases.schema import Case
from harness.models.emulator.chat import openai_prompt_tokens
from harness.models.emulator.wire import content_tokens
from harness.runtimes import trigger
from harness.runtimes.observe import Observed
from harness.runtimes.sent import step_starts
from harness.scripted.steps import Script

_LARGEST = 1 << 30  # no model has a window this large: a rule that never reaches the context there never will


@dataclass(frozen=True)
class TriggerRule:
    """The runtime compacts once its context exceeds `threshold(window, max_output)` tokens."""

    text: str
    assumed_window: int | None = None

    def threshold(self, window: int, max_output: int) -> float:
        return trigger.evaluate(self.text, trigger.rule_names(window, max_output, self.assumed_window))

    def window_for(self, context: int, max_output: int) -> int | None:
        """The smallest window whose threshold a context of `context` tokens just exceeds (one token less
        does not); None when no window does. The rule grows with the window, so a bisection finds it."""
        if self.threshold(_LARGEST, max_output) < context - 1:
            return None
        low, high = 1, _LARGEST
        while low < high:
            middle = (low + high) // 2
            if self.threshold(middle, max_output) >= context - 1:
                high = middle
            else:
                low = middle + 1
        return low


def rule_of(adapter: Any) -> TriggerRule | None:
    """The adapter's trigger rule (checked when the adapter was read); None when it states none."""
    return TriggerRule(adapter.trigger, adapter.assumed_window) if adapter.trigger else None


def recorded_point(case: Case) -> int | None:
    """The case message before which the recorded session first compacted (None: it never did)."""
    positions = [c.position for c in case.session.compactions]
    return min(positions) if positions else None


def prompts_to_reach(script: Script, case: Case, position: int) -> int:
    """How many prompts a drive must send for the runtime to ask for the step at or after `position`."""
    starts = step_starts(script, case.session)
    step = next((k for k, start in enumerate(starts) if start >= position), len(starts) - 1)
    return script.steps[step].turn + 1 if script.steps else 0


def reported_tokens(seen: Observed) -> int:
    """The prompt tokens the server reported for a request, counted as the emulator counts its wire."""
    if seen.wire == "openai" and seen.payload is not None:
        return len(openai_prompt_tokens(seen.payload))
    return len(content_tokens(seen.request))


def context_at(seen: list[Observed], script: Script, case: Case, position: int) -> int | None:
    """The runtime's context when it asked for the step at `position`: the turn request it sent for that step
    (the last one answered, as sent.py reads a probe point)."""
    starts = step_starts(script, case.session)
    step = next((k for k, start in enumerate(starts) if start >= position), None)
    asked = [s for s in seen if s.kind == "turn" and s.reply is not None and
             (s.used_before == step if step is not None else True)]
    return reported_tokens(asked[-1]) if asked else None


def window_record(rule: TriggerRule | None, position: int | None, context: int | None, window: int,
                  seconds: float) -> dict[str, Any]:
    """What run.json keeps of how the window was chosen (outcome.runtime.window)."""
    return {"mode": "recorded", "rule": rule.text if rule else None, "recorded_position": position,
            "context_at_point": context, "window": window, "calibration_seconds": round(seconds, 2)}
