"""The case types: `Case` (one `cases/<id>/` folder) and `Probe` (a question asked of the compacted context),
with the probe kinds, case pools and probe points they may name. Reading and writing case.toml is in
`harness.cases.toml`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.session import Session, read_session
from harness.tokens import MessageTokens, counter

POOLS = ("desktop", "long", "autonomous", "edge", "real")
KINDS = ("goal", "constraint", "artifact", "decision", "error", "recall", "update", "progress", "continuation")
POINT = re.compile(r"^(end|compaction:[1-9]\d*|message:\d+)$")


@dataclass(frozen=True)
class Probe:
    id: str
    kind: str
    question: str
    all: tuple[tuple[str, ...], ...]  # each item: its alternatives
    none: tuple[str, ...] = ()
    anchor: tuple[str, ...] = ()  # any-of: words naming what the probe asks about ("port", a file name)
    regex: str | None = None
    planted_at: int = 0
    rubric: str | None = None
    at: str = "end"
    draft: bool = False
    accept: tuple[str, ...] = ()  # correct answers as a capable model words them: the matchers must pass each
    reject: tuple[str, ...] = ()  # plausible wrong answers: the matchers must fail each
    note: str | None = None  # where the fact is established (for real cases: the transcript line)


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    pool: str
    directory: Path
    session_file: str
    context_window: int
    max_output_tokens: int
    model_name: str | None
    probes: tuple[Probe, ...]
    settings: dict[str, Any] = field(default_factory=dict)  # optional [policy] overrides
    summary_instruction: str | None = None  # optional [summary] instruction: the summarizer's instruction text

    @cached_property
    def session(self) -> Session:
        return read_session(self.directory / self.session_file)

    def with_session(self, session: Session) -> Case:
        """This case over `session` instead of its file's (a runtime's drive adds the compactions it made)."""
        copy = replace(self)
        copy.__dict__["session"] = session  # what cached_property would have stored
        return copy

    @cached_property
    def true_tokens(self) -> MessageTokens:
        """The session's true (o200k) count per message, counted once for the run and read by the replay (its
        step check and live context), the ceiling and the graded prompts' sizes alike."""
        return MessageTokens(counter("o200k"), self.session.messages)

    @cached_property
    def normal_forms(self) -> dict[str, str]:
        """Texts' normal forms for matching (raw -> normal form), kept for the run: every context graded and every
        summary checked reads the session's messages again (harness.matching.Haystack.joined)."""
        return {}

    @property
    def points(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.at for p in self.probes)) or ("end",)
