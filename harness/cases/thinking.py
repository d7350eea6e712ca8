"""Probes whose facts only thinking holds (issue 21): importers keep thinking text in `meta.thinking`, which no
context the harness builds ever shows, so a probe planted on a fact stated only there cannot be answered from
the history and tests nothing about a summary. `cases validate` reports such probes."""

from __future__ import annotations

from harness.cases.schema import Case, Probe
from harness.cases.toml import CASE_FILE
from harness.matching import Haystack, contains
from harness.session import Session, message_text


def thinking_only_problems(case: Case) -> list[str]:
    """One line per probe item that no visible text up to `planted_at` holds but some thinking there does."""
    session = case.session
    if not any((m.meta or {}).get("thinking") for m in session.messages):
        return []
    where = case.directory / CASE_FILE
    return [f"{where}: probe {probe.id}: {problem}" for probe in case.probes for problem in _probe(session, probe)]


def _visible(session: Session, end: int) -> Haystack:
    """What any context up to message `end` can show: the system prompt, messages and compaction summaries."""
    parts = [session.system or ""] + [message_text(m) for m in session.messages[:end]]
    parts += [c.content for c in session.compactions if c.position <= end]
    return Haystack("\n".join(parts))


def _probe(session: Session, probe: Probe) -> list[str]:
    end = min(probe.planted_at, len(session.messages) - 1) + 1
    visible = _visible(session, end)
    problems = []
    for item in probe.all:
        if any(contains(visible, alternative) for alternative in item):
            continue
        for index, message in enumerate(session.messages[:end]):
            thought = Haystack((message.meta or {}).get("thinking") or "")
            if any(contains(thought, alternative) for alternative in item):
                problems.append(f"{' / '.join(item)!r} appears only in thinking (meta.thinking of message {index}), "
                                f"which no context shows")
                break
    return problems
