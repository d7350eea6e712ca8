"""One answer graded against one probe (`cases grade`): pass or fail, and the item that decided it."""

from __future__ import annotations

import json
from typing import Any

from harness.cases.schema import Probe
from harness.matching import Haystack, Match, contains, states
from harness.render.console import stdout


def grade_details(case_id: str, probe: Probe, answer: str, result: Match) -> dict[str, Any]:
    """Per `all` item the alternative found (or none), per `none` item whether the answer states it."""
    text = Haystack(answer)
    items = [{"item": list(item), "found": next((a for a in item if contains(text, a)), None)} for item in probe.all]
    forbidden = [{"item": n, "stated": states(text, n)} for n in probe.none]
    return {"case": case_id, "probe": probe.id, "answer": answer, "passed": result.passed,
            "decided_by": result.decided_by, "all": items, "none": forbidden,
            **({"regex": probe.regex, "regex_matches": result.regex_ok} if probe.regex is not None else {})}


def show_grade(case_id: str, probe: Probe, answer: str, result: Match, *, as_json: bool = False) -> None:
    details = grade_details(case_id, probe, answer, result)
    if as_json:
        print(json.dumps(details, indent=1, ensure_ascii=False))
        return
    out = stdout()
    out.print(f"{case_id}/{probe.id}: {'PASS' if result.passed else 'FAIL'}: {result.decided_by}", markup=False)
    for item in details["all"]:
        found = f"found {item['found']!r}" if item["found"] else "missing"
        out.print(f"  all  {' | '.join(item['item'])}: {found}", markup=False)
    for item in details["none"]:
        out.print(f"  none {item['item']}: {'stated as current' if item['stated'] else 'not stated'}", markup=False)
    if probe.regex is not None:
        out.print(f"  regex /{probe.regex}/: {'matches' if result.regex_ok else 'no match'}", markup=False)
