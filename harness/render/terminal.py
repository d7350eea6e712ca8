"""A finished run on the terminal, to be read in a minute: the headline and its groups first, then one line per
figure (the tables are in report.md), then the lost probes that matter most with the count and where the rest
are. The default run fits in under 60 lines; every line of a lost probe is cut to the console's width."""

from __future__ import annotations

from typing import Any, Mapping

from rich.console import Console
from rich.text import Text

from harness.probes import CONDITIONS
from harness.render.configuration import configuration_line
from harness.render.estimate import ceiling_line, spend_line
from harness.render.failed import failed_request_count, failed_request_lines
from harness.render.format import fixed, rate_percent, wilson_rate
from harness.render.headline import (agreement_line, ceiling, fmt_cost, groups_line, headline_line, judged_line,
                                     lead_headline, never_compacted_summary, nothing_compacted_line)
from harness.render.lost import LostProbe, most_important
from harness.render.provider import provider_note
from harness.render.risks import risk_line
from harness.render.runtime import stops
from harness.results.aggregate import GRADES

LOST_SHOWN = 10  # lost probes on the terminal; report.md and report.html list every one
LISTED = 5  # errored cases and failed requests on the terminal before "and N more"


def rates_phrase(groups: dict[str, dict], condition: str = "compacted") -> str:
    """`autonomous 75.8% (47/62), desktop 100.0% (34/34)`: one condition's rate per group, on one line."""
    return ", ".join(f"{name} {rate_percent(group[condition])} ({group[condition]['passed']}/"
                     f"{group[condition]['total']})" for name, group in groups.items() if group[condition]["total"])


def render_summary(run: dict[str, Any], console: Console) -> None:
    agg, config = run["aggregates"], run["configuration"]
    grade = agg["grade"]
    console.print(Text.assemble((f"run {run['run_id']}", "bold"), f": {configuration_line(config)}"))
    if note := provider_note(run):
        console.print(note)
    print_headline(agg, console, stops(run))
    lines = [f"{agg['cases_ok']}/{agg['cases']} cases, {agg['probes']} probes; {ceiling(agg)}"]
    lines += [f"all valid probes, {g}: " + ", ".join(f"{c} {wilson_rate(agg['overall'][g][c])}" for c in CONDITIONS)
              + f", normalised {fixed(agg['overall'][g].get('normalised_retention'), 2)}"
              for g in GRADES if agg["overall"][g]["full"]["total"]]
    if agg["by_pool"]:
        lines.append(f"by pool, all valid probes ({grade}, compacted): {rates_phrase(agg['by_pool'])}")
    spend = spend_line(agg.get("cost_by_role") or {})  # every role's cost, the summarizer's too, when a run has it
    lines += [compactions_line(agg), spend or f"summarizer {fmt_cost(agg['cost'])}"]
    lines += [line for line in (ceiling_line(agg.get("ceilings")),) if line]
    lat = agg["latency"]
    if lat.get("harness_p50_s") is not None:  # no compaction timed (none made, or a cassette miss): no line
        lines.append(f"compaction latency: harness p50 {lat['harness_p50_s']} s p95 {lat['harness_p95_s']} s "
                     f"(measured); model p50 {lat['model_p50_s']} s p95 {lat['model_p95_s']} s "
                     f"({lat['model_time_source']})")
    lines.append(risk_line(run))
    for line in lines:
        console.print(line, markup=False)
    _listed(console, [f"error in {case}: {error}" for case, error in agg["errors"].items()], "errored cases")
    if (count := failed_request_count(agg)) is not None:
        console.print(Text(count, style="red"))
    _listed(console, [f"failed request: {line}" for line in failed_request_lines(agg)], "failed requests")


def compactions_line(agg: dict[str, Any]) -> str:
    s, compacted = agg["summary"], [n for n in agg["compactions"].values() if n]
    return (f"compactions: {sum(compacted)} in {len(compacted)} case{'' if len(compacted) == 1 else 's'}; summaries: "
            f"mean {fixed(s['mean_tokens'], 0)} tokens, compression {fixed(s['mean_compression_ratio'], 1)}x, "
            f"artifact recall {fixed(s['mean_artifact_recall'], 2)} precision {fixed(s['mean_artifact_precision'], 2)}, "
            f"{s['hallucinated_paths']} hallucinated paths, {s['stale_facts']} stale facts"
            + (f", {s['over_budget']} over budget (graded cut to it)" if s.get("over_budget") else ""))


def _listed(console: Console, lines: list[str], what: str) -> None:
    for line in lines[:LISTED]:
        console.print(Text(line, style="red"))
    if len(lines) > LISTED:
        console.print(f"... and {len(lines) - LISTED} more {what} in report.md", markup=False)


def print_headline(agg: dict[str, Any], console: Console, stopped: Mapping[str, str] | None = None) -> None:
    """The terminal's lead: the headline over summary-testing probes, the other groups, per kind with n, the
    cases that never compact, the agreement and judged means (one line each); first, where a runtime stopped
    (`stopped`: case -> the line saying why and what next)."""
    stopped = stopped or {}
    if warning := nothing_compacted_line(agg, stopped):
        console.print(Text(warning, style="bold red"))
    for line in stopped.values():
        console.print(Text(line, style="red"))
    lead = lead_headline(agg)
    if lead is None:
        return
    console.print(Text(headline_line(agg) or "", style="bold"))  # Text: the intervals' brackets are not markup
    lines = [groups_line(lead)]
    if lead["by_kind"]:
        lines.append(f"by kind, summary-testing probes ({lead['grade']}, compacted): " + ", ".join(
            f"{kind} {rate_percent(rate)} ({rate['passed']}/{rate['total']})" for kind, rate in lead["by_kind"].items()))
    never = never_compacted_summary(agg, names=False)
    lines += [line for line in (never, agreement_line(agg), judged_line(agg)) if line]
    for line in lines:
        console.print(line, markup=False)


def print_lost(lost: list[LostProbe], grade: str, console: Console, report: str = "report.md") -> None:
    """The lost probes that matter most (most_important), two lines each cut to the console's width, after the
    count and where every one of them is listed."""
    if not lost:
        return
    shown = most_important(lost, LOST_SHOWN)
    where = f"the {len(shown)} that matter most, all in {report}" if len(shown) < len(lost) else f"also in {report}"
    console.print(Text(f"lost probes ({grade}; the full history passes them): {len(lost)}; {where}", style="bold"))
    for probe in shown:
        console.print(Text(f"- {probe.key} ({probe.kind}, at {probe.at}): {_flat(probe.question)}", style="red"),
                      no_wrap=True, overflow="ellipsis")
        console.print(Text(f"    expected {'; '.join(probe.expected) or '-'}; {probe.why()}; answered: "
                           f"{_flat(probe.answer)}"), no_wrap=True, overflow="ellipsis")


def _flat(text: str) -> str:
    return " ".join(text.split())
