"""The risks a run's policy leaves, summed over its cases: the same checks `simulate` lists (the compactor's
Replay.risk_counts, kept per case in run.json), so a run no longer hides what only a simulation showed."""

from __future__ import annotations

from typing import Any

# What each risk means, in the words of harness.compaction.events, for a reader of the report.
RISK_MEANINGS = {
    "estimator_miss": "the true token count exceeded the window while the estimate did not trigger",
    "response_may_be_cut": "request input plus the model's max output exceeds the window",
    "summary_request_too_big": "the summarizer's own request (plus its output budget) would not fit the window",
    "step_exceeds_window": "a single step is larger than the whole window",
    "no_shrink": "after compacting, the context is still at or over the trigger",
    "nothing_to_fold": "the trigger fired but the tail is the whole live context",
    "lookup_without_block": "lookup mode fired with no earlier summary block to reuse",
    "summary_rejected": "the policy refused a summary that would have made the context larger",
}


def run_risks(run: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per risk kind that occurred: sends at risk per case (finished cases, in run.json's order)."""
    out: dict[str, dict[str, int]] = {}
    for key, record in run["cases"].items():
        for kind, count in (record.get("risk_counts") or {}).items():
            if count:
                out.setdefault(kind, {})[key] = count
    return out


def risk_line(run: dict[str, Any]) -> str:
    """One line for the terminal: each risk kind with its sends and cases."""
    risks = run_risks(run)
    if not risks:
        return "risks the policy leaves (as `simulate` checks them): none"
    parts = [f"{kind.replace('_', ' ')} {sum(by_case.values())} sends in {len(by_case)} "
             f"case{'' if len(by_case) == 1 else 's'}" for kind, by_case in risks.items()]
    return "risks the policy leaves (as `simulate` checks them): " + ", ".join(parts)


def markdown_risks(run: dict[str, Any]) -> list[str]:
    risks = run_risks(run)
    lines = ["### Risks the policy leaves", "",
             "The checks `compaction-harness simulate` makes, counted over every send of every case.", ""]
    if not risks:
        return lines + ["None.", ""]
    lines += ["| risk | sends | cases | meaning | worst cases |", "| --- | --- | --- | --- | --- |"]
    for kind, by_case in risks.items():
        worst = sorted(by_case.items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"| {kind} | {sum(by_case.values())} | {len(by_case)} | {RISK_MEANINGS.get(kind, '-')} | "
                     + ", ".join(f"{case} {n}" for case, n in worst) + " |")
    return lines + [""]
