"""What changed between two releases of one runtime, from their runs' per-case `runtime` (run.json): the version,
its summarization prompt (diffed line by line), where it compacted (the first case message after each
compaction, mid-turn or not), what it kept (items ahead of the summary, where its verbatim tail starts), and the
probes lost and gained (the gate's regressions and improvements, or compare's flips). `gate` reads the baseline's
profile (make_baseline keeps one for a runtime's run), `compare` the two runs'."""

from __future__ import annotations

import difflib
from typing import Any

DIFF_LINES = 80  # of a prompt's unified diff kept (a prompt rewritten whole says how many more lines)


def profile(run: dict[str, Any]) -> dict[str, Any] | None:
    """Per case, the runtime's version, compactions and prompt; None for a run that drove no runtime."""
    if not run.get("configuration", {}).get("runtime"):
        return None
    cases = {}
    for case in run.get("cases", {}).values():
        driven = case.get("runtime")
        if case.get("status") != "ok" or not driven:
            continue
        cases[case["case"]] = {
            "version": driven.get("version"),
            "compacts_before": [c["position"] for c in driven.get("compactions", [])],
            "mid_turn": [bool(c.get("mid_turn")) for c in driven.get("compactions", [])],
            "kept": [{"ahead": c.get("kept_ahead"), "tail_from": c.get("covers")} for c in driven.get("compactions", [])],
            "prompt": driven.get("compaction_prompt"),
        }
    return {"runtime": run["configuration"]["runtime"], "cases": cases}


def changes(before: dict[str, Any] | None, after: dict[str, Any] | None, lost: list[str] = (),
            gained: list[str] = ()) -> dict[str, Any] | None:
    """The release change between two profiles (None unless both drove a runtime)."""
    if not before or not after:
        return None
    per_case = {}
    for case in sorted(set(before["cases"]) & set(after["cases"])):
        a, b = before["cases"][case], after["cases"][case]
        per_case[case] = {
            "compacts_before": {"before": a["compacts_before"], "after": b["compacts_before"]},
            "kept": {"before": a["kept"], "after": b["kept"]},
            "prompt_diff": prompt_diff(a.get("prompt"), b.get("prompt")),
        }
    return {"runtime": {"before": before["runtime"], "after": after["runtime"]},
            "lost": list(lost), "gained": list(gained), "cases": per_case}


def prompt_diff(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """A unified diff of the summarization prompt's system text and instruction; [] when unchanged."""
    if not before or not after:
        return [] if before == after else [f"prompt {'not captured before' if not before else 'not captured now'}"]
    lines: list[str] = []
    for part in ("system", "instruction"):
        old, new = (before.get(part) or "").splitlines(), (after.get(part) or "").splitlines()
        lines += list(difflib.unified_diff(old, new, f"before/{part}", f"after/{part}", n=1, lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [f"... {len(lines) - DIFF_LINES} more diff lines"]
    return lines
