"""Per compaction point: the session's own summaries beside ours (issue 9), one table per point, one row
per run; part of report.md and comparison.md."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from harness.render.format import dash
from harness.results.aggregate import ok_records, passed


def point_label(run: dict[str, Any]) -> str:
    config = run["configuration"]
    if config["policy"] == "recorded":
        who = "recorded (the agent's own)"
    else:
        who = f"{config['policy']} / {config['summarizer_spec']}"
        if config.get("at_recorded_points"):
            who += f" at recorded points ({config['at_recorded_points']} tail)"
    return f"{run['label']}: {who}" if run.get("label") else who


def compaction_point_rows(record: dict[str, Any], grade: str) -> dict[int, dict[str, Any]]:
    """Per compaction of one case record: where it happened, the summary's size, how the probes asked just
    after it fared (by kind, and which were lost), and the summary-level checks."""
    summaries = {s["compaction"]: s for s in record.get("summaries", [])}
    rows = {}
    for event in record.get("events", []):
        number = event["number"]
        probes = [p for p in record.get("probes", []) if p.get("at") == f"compaction:{number}" and p.get("valid")]
        kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        lost = []
        for probe in probes:
            ok = bool(passed(probe, "compacted", grade))
            kinds[probe["kind"]][0] += ok
            kinds[probe["kind"]][1] += 1
            if not ok:
                lost.append(probe["id"])
        check = summaries.get(number, {})
        rows[number] = {
            "at": event["send_index"], "head": f"{event['head_start']}..{event['tail_start']}",
            "source": event["source"], "summary_tokens": event["summary_tokens"],
            "budget": event.get("summary_budget_tokens") or None,
            "by_kind": {k: tuple(v) for k, v in sorted(kinds.items())}, "lost": lost,
            "recall": check.get("artifact_recall"), "precision": check.get("artifact_precision"),
            "hallucinated": check.get("hallucinated_paths", []), "stale": check.get("stale_facts", []),
        }
    return rows


def markdown_compaction_points(runs: list[dict[str, Any]], level: str = "##") -> list[str]:
    """One table per (case, compaction number), one row per run: empty when no probe is asked at a compaction."""
    asked = any(str(p.get("at", "")).startswith("compaction:")
                for run in runs for r in ok_records(run["cases"].values()) for p in r.get("probes", []))
    if not asked:
        return []
    grade = "answered" if all(run["aggregates"].get("grade") == "answered" for run in runs) else "retained"
    tables: dict[tuple[str, int], list[tuple[str, dict]]] = defaultdict(list)
    for run in runs:
        for key, record in sorted(run["cases"].items()):
            if record.get("status") != "ok":
                continue
            for number, row in compaction_point_rows(record, grade).items():
                tables[(key, number)].append((point_label(run), row))
    lines = [f"{level} Per compaction point ({grade}, probes asked just after each compaction)", ""]
    for (case, number), rows in sorted(tables.items()):
        lines += [f"{level}# {case}, compaction {number}", "",
                  "| run | before message | folded | summary tokens (budget) | by kind | lost probes | "
                  "artifact recall / precision | hallucinated paths | stale facts |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for label, row in rows:
            kinds = ", ".join(f"{k} {p}/{t}" for k, (p, t) in row["by_kind"].items()) or "-"
            budget = f" ({row['budget']})" if row["budget"] else ""
            lines.append(
                f"| {label} | {row['at']} | {row['head']} ({row['source']}) | {row['summary_tokens']}{budget} | "
                f"{kinds} | {', '.join(row['lost']) or '-'} | {dash(row['recall'])} / {dash(row['precision'])} | "
                f"{', '.join(row['hallucinated']) or '-'} | {', '.join(row['stale']) or '-'} |")
        lines.append("")
    return lines

