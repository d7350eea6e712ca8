"""Lost probes: valid probes (the full history passes them) that the compacted context fails, under the run's
grade. Shown with their question, expected facts, the compacted answer and an excerpt of the summary the
answerer saw, so a reader sees why a probe failed without opening run.json. Shared by the terminal, report.md,
report.html and the gate's JUnit."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXCERPT_CHARS = 240


@dataclass(frozen=True)
class LostProbe:
    case: str
    probe: str
    kind: str
    at: str
    question: str
    expected: tuple[str, ...]
    answer: str
    missing: tuple[str, ...]
    forbidden: tuple[str, ...]
    summary: str | None  # the whole summary at the probe point (None: no case file, or no summary there)

    @property
    def key(self) -> str:
        return f"{self.case}/{self.probe}"

    @property
    def excerpt(self) -> str:
        return excerpt(self.summary, f"{self.question} {' '.join(self.expected)}")

    def why(self) -> str:
        """What the matchers found wrong: missing expected facts, forbidden ones present."""
        parts = ([f"missing {', '.join(self.missing)}"] if self.missing else []) + \
                ([f"has forbidden {', '.join(self.forbidden)}"] if self.forbidden else [])
        return "; ".join(parts) or "graded a fail"


WORD = re.compile(r"[a-z0-9_]{3,}")


def excerpt(summary: str | None, about: str = "", limit: int = EXCERPT_CHARS) -> str:
    """The summary lines nearest the probe (most words shared with its question and expected facts), from
    the best on, on one line; the summary's start when nothing is shared; a dash when there is no summary."""
    if not summary:
        return "-"
    lines = [line.strip() for line in summary.splitlines() if line.strip()]
    if lines and lines[0].startswith("[") and lines[0].endswith("]"):
        lines = lines[1:]  # "[Summary of the earlier conversation, ...]"
    wanted = set(WORD.findall(about.lower()))
    scores = [len(wanted & set(WORD.findall(line.lower()))) for line in lines]
    start = scores.index(max(scores)) if scores and max(scores) > 0 else 0
    text = " ".join(lines[start:])
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def is_lost(probe: dict[str, Any], grade: str) -> bool:
    conditions = probe.get("conditions") or {}
    return bool(probe.get("valid")) and conditions.get("compacted", {}).get(grade) is False


def case_summaries(folder: Path | None, key: str) -> dict[str, str | None]:
    """The summary at each probe point of one case, from its case file (run.json keeps no contexts)."""
    path = folder / "cases" / f"{key}.json" if folder is not None else None
    if path is None or not path.exists():
        return {}
    contexts = json.loads(path.read_text(encoding="utf-8")).get("contexts") or {}
    return {point: context.get("summary") for point, context in contexts.items()}


def lost_probes(run: dict[str, Any], folder: Path | None = None) -> list[LostProbe]:
    """Every lost probe of the run, in case order; summaries come from the run folder's case files."""
    grade = run["aggregates"]["grade"]
    out = []
    for key, record in run["cases"].items():
        lost = [p for p in record.get("probes", []) if is_lost(p, grade)]
        summaries = case_summaries(folder, key) if lost else {}
        for probe in lost:
            compacted = probe["conditions"]["compacted"]
            out.append(LostProbe(key, probe["id"], probe["kind"], probe["at"], probe.get("question") or "-",
                                 tuple(probe.get("expected") or ()), compacted.get("answer") or "-",
                                 tuple(compacted.get("missing") or ()), tuple(compacted.get("forbidden") or ()),
                                 summaries.get(probe["at"])))
    return out


# The kinds an agent cannot carry on correctly without come first: what it is doing and under which rules, then
# what it decided and does next, then the facts it could look up again.
KIND_ORDER = ("goal", "constraint", "decision", "continuation", "error", "update", "progress", "artifact", "recall")


def most_important(lost: list[LostProbe], limit: int) -> list[LostProbe]:
    """At most `limit` lost probes, the ones a reader should see first: the cases in turn (so one long case does
    not fill the list, the case losing most first), within a case by kind (KIND_ORDER), then in case order."""
    by_case: dict[str, list[LostProbe]] = {}
    for probe in lost:
        by_case.setdefault(probe.case, []).append(probe)
    queues = [sorted(probes, key=_kind_rank) for probes in sorted(by_case.values(), key=lambda ps: -len(ps))]
    picked: list[LostProbe] = []
    while len(picked) < limit and any(queues):
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    return picked


def _kind_rank(probe: LostProbe) -> int:
    return KIND_ORDER.index(probe.kind) if probe.kind in KIND_ORDER else len(KIND_ORDER)


def lost_by_key(run: dict[str, Any], run_path: str | Path | None = None) -> dict[str, LostProbe]:
    """The lost probes keyed `case/probe` (as the gate names them); `run_path` is the folder or its run.json."""
    folder = None if run_path is None else (Path(run_path) if Path(run_path).is_dir() else Path(run_path).parent)
    return {p.key: p for p in lost_probes(run, folder)}


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def lost_text(lost: LostProbe) -> str:
    """A lost probe as plain text lines (the terminal and JUnit failure bodies)."""
    return "\n".join([f"question: {lost.question}", f"expected: {'; '.join(lost.expected) or '-'}",
                      f"answer (compacted): {_one_line(lost.answer)}", f"why: {lost.why()}",
                      f"summary at {lost.at}: {lost.excerpt}"])


def markdown_lost(lost: list[LostProbe], grade: str) -> list[str]:
    if not lost:
        return []
    lines = [f"### Lost probes ({len(lost)}: the full history passes them, the compacted context fails, {grade})", "",
             "| probe | kind | question | expected | answer (compacted) | why | summary excerpt |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {_cell(p.key)} | {p.kind} | {_cell(p.question)} | {_cell('; '.join(p.expected) or '-')} | "
              f"{_cell(_one_line(p.answer))} | {_cell(p.why())} | {_cell(p.excerpt)} |" for p in lost]
    return lines + [""]


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")
