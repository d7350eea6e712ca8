"""What an import tells the user: the `ImportReport` (mapped, repaired, skipped, left out), the `CaseMeta`
that case.toml needs beyond the session, and the context windows of common models (`known_window`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# The text the session builder gives a tool call with no result in the source; the report counts them.
NO_RESULT = "[no result recorded]"
DEFAULT_MAX_OUTPUT_TOKENS = 16384

# Context windows of a few common models, used when the transcript does not state its window.
# Hard-coded here because the price table module (harness.models.pricing) may not exist yet; the longest
# matching prefix wins. Sources: the providers' model pages.
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,  # every current Claude model (3.x, 4.x) has a 200k standard window
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
}


def known_window(model: str | None) -> int | None:
    if not model:
        return None
    name = model.lower().split("/")[-1]
    best = ""
    for prefix in KNOWN_WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return KNOWN_WINDOWS[best] if best else None


@dataclass
class ImportReport:
    """What an import mapped, repaired, skipped and left out. Nothing is dropped without a count here."""

    source: str
    format: str = ""
    detected: bool = False  # True when `--from auto` chose the format
    messages: dict[str, int] = field(default_factory=dict)  # by role, system included
    turns: int = 0
    tool_calls: int = 0
    pairs: int = 0  # tool calls paired with a real result from the source
    synthetic_results: int = 0  # calls that got NO_RESULT
    compactions: int = 0
    skipped: Counter = field(default_factory=Counter)  # kind -> count of source items not mapped
    left_out: Counter = field(default_factory=Counter)  # thinking / encrypted / images, by kind
    tagged: Counter = field(default_factory=Counter)  # messages kept but tagged in meta (noise, demo...)
    redacted: int = 0  # secrets replaced by [REDACTED]
    entries: Counter = field(default_factory=Counter)  # fate -> source entries (formats that account per entry)
    thinking: Counter = field(default_factory=Counter)  # "blocks" / "characters" kept in meta.thinking, "empty"
    model: str | None = None
    window: int | None = None
    window_source: str = ""
    notes: list[str] = field(default_factory=list)

    def skip(self, kind: str, count: int = 1) -> None:
        self.skipped[kind] += count

    def leave_out(self, kind: str, count: int = 1) -> None:
        self.left_out[kind] += count

    def tag(self, kind: str, count: int = 1) -> None:
        self.tagged[kind] += count

    def fate(self, kind: str, count: int = 1) -> None:
        """What became of source entries: kept, kept as tagged noise, skipped as noise, off-branch, ..."""
        self.entries[kind] += count

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "format": self.format, "detected": self.detected,
            "messages": dict(self.messages), "turns": self.turns, "tool_calls": self.tool_calls,
            "pairs": self.pairs, "synthetic_results": self.synthetic_results, "compactions": self.compactions,
            "skipped": dict(self.skipped), "left_out": dict(self.left_out), "tagged": dict(self.tagged),
            "redacted": self.redacted, "entries": dict(self.entries), "thinking": dict(self.thinking), "model": self.model, "window": self.window,
            "window_source": self.window_source, "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        how = "detected" if self.detected else "given"
        roles = ", ".join(f"{role} {n}" for role, n in self.messages.items()) or "none"
        out = [
            f"format: {self.format} ({how})",
            f"messages: {sum(self.messages.values())} ({roles})",
            f"turns: {self.turns}",
            f"tool calls: {self.tool_calls}, paired with a result: {self.pairs}, "
            f"given {NO_RESULT!r}: {self.synthetic_results}",
            f"compaction records: {self.compactions}",
            "skipped: " + (_counts(self.skipped) or "nothing"),
            "left out: " + (_counts(self.left_out) or "nothing"),
            "tagged: " + (_counts(self.tagged) or "nothing"),
            f"secrets redacted: {self.redacted}",
            *self._entry_lines(),
            f"model: {self.model or 'unknown'}; window: {self.window} ({self.window_source})",
        ]
        out += [f"note: {note}" for note in self.notes]
        return out

    def _entry_lines(self) -> list[str]:
        out = []
        if self.entries:
            out.append(f"entries: {sum(self.entries.values())} ({_counts(self.entries)})")
        if self.thinking:
            out.append(f"thinking kept in meta.thinking: {self.thinking['blocks']} blocks, "
                       f"{self.thinking['characters']} characters; signature-only blocks: {self.thinking['empty']}")
        return out

    def render(self) -> str:
        return "\n".join(self.lines())


def _counts(counter: Counter) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counter.items()) if n)


@dataclass(frozen=True)
class CaseMeta:
    """What `case.toml` needs beyond the session: title, pool and the session model."""

    title: str
    context_window: int
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    model: str | None = None
    pool: str = "autonomous"
    source: str = ""
    format: str = ""
