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

    @cached_property
    def session(self) -> Session:
        return read_session(self.directory / self.session_file)

    def with_session(self, session: Session) -> Case:
        """This case over `session` instead of its file's (a runtime's drive adds the compactions it made)."""
        copy = replace(self)
        copy.__dict__["session"] = session  # what cached_property would have stored
        return copy

    @property
    def points(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.at for p in self.probes)) or ("end",)
