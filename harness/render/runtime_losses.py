"""A real runtime's losses split by cause (`run --runtime NAME --runtime-control`): the probes it lost to its
own tool-output cuts (its control, compaction off, lost them too) and those lost to its compaction (the
control kept them), per case and in all. For report.md and report.html; absent without a control."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.render.markup import num, paragraph, section, table

GRADE_ORDER = ("answered", "retained")  # the run's grade when the control graded it, else the first of these
HEADERS = ("case", "lost to its own cuts", "lost to its compaction", "lost in all", "outputs cut")


@dataclass(frozen=True)
class Losses:
    case: str
    cuts: tuple[str, ...]
    compaction: tuple[str, ...]
    lost: tuple[str, ...]
    outputs_cut: int
    failure: str | None = None  # the control drive failed: no split


def runtime_losses(run: dict[str, Any]) -> tuple[str, list[Losses]]:
    """(the grade the split is on, one row per case whose runtime had a control)."""
    controls = {k: r["runtime"]["control"] for k, r in run["cases"].items()
                if isinstance(r.get("runtime"), dict) and "control" in r["runtime"]}
    grade = run["aggregates"]["grade"]
    if not any(grade in c for c in controls.values()):
        grade = next((g for g in GRADE_ORDER if any(g in c for c in controls.values())), grade)
    rows = []
    for key, control in controls.items():
        split = control.get(grade) or {}
        rows.append(Losses(key, tuple(split.get("lost_to_cuts", ())), tuple(split.get("lost_to_compaction", ())),
                           tuple(split.get("lost", ())), control.get("outputs_cut", 0), control.get("failure")))
    return grade, rows


def _intro(grade: str) -> str:
    return (f"Graded `{grade}` on what the runtime sent. Its control drove each case again with its compaction off "
            f"(a window it never fills): a probe lost there too is lost to its own tool-output cuts, one kept "
            f"there is lost to its compaction.")


def markdown_runtime_losses(run: dict[str, Any]) -> list[str]:
    grade, rows = runtime_losses(run)
    if not rows:
        return []
    lines = ["### What the runtime lost: to its own cuts and to its compaction", "", _intro(grade).replace("`", ""),
             "", "| " + " | ".join(HEADERS) + " |", "| " + " | ".join("---" for _ in HEADERS) + " |"]
    lines += [f"| {r.case} | {len(r.cuts)} | {len(r.compaction)} | {len(r.lost)} | {r.outputs_cut} |"
              for r in rows if r.failure is None]
    done = [r for r in rows if r.failure is None]
    lines += [f"| all | {sum(len(r.cuts) for r in done)} | {sum(len(r.compaction) for r in done)} | "
              f"{sum(len(r.lost) for r in done)} | {sum(r.outputs_cut for r in done)} |", ""]
    lines += [f"- {r.case}: cuts {', '.join(r.cuts) or '-'}; compaction {', '.join(r.compaction) or '-'}"
              for r in done if r.lost]
    lines += [f"- {r.case}: no control ({r.failure})" for r in rows if r.failure is not None]
    return lines + [""]


def runtime_losses_section(run: dict[str, Any]) -> str:
    grade, rows = runtime_losses(run)
    if not rows:
        return ""
    body = [[r.case, _ids(r.cuts), _ids(r.compaction), num(len(r.lost)), num(r.outputs_cut)]
            if r.failure is None else [r.case, f"no control: {r.failure}", "", "", ""] for r in rows]
    return section("runtime-losses", "What the runtime lost: to its own cuts and to its compaction",
                   paragraph(_intro(grade).replace("`", "")), table(HEADERS, body))


def _ids(probes: tuple[str, ...]) -> Any:
    return num(len(probes), f"{len(probes)}: {', '.join(probes)}" if probes else "0")
