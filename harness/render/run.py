"""A run for a reader: progress while it runs, the terminal summary, report.md, and the run command's
closing output (the comparison of several configurations, or the JSON document)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.atomic import write_atomic
from harness.probes import CONDITIONS
from harness.render.progress import Heartbeat
from harness.render.provider import provider_note
from harness.render.console import stderr, stdout
from harness.render.compare import print_comparison, write_comparison
from harness.render.configuration import configuration_line
from harness.render.definitions import markdown_definitions
from harness.render.failed import failed_request_count, failed_request_lines
from harness.render.html import write_html
from harness.render.lost import lost_probes, markdown_lost
from harness.render.runtime_losses import markdown_runtime_losses
from harness.render.plots import RunPlot, age_key, run_retention
from harness.render.risks import markdown_risks
from harness.render.runtime import markdown_runtime, stops
from harness.render.estimate import ceiling_line, markdown_spend
from harness.render.format import fixed, wilson_rate
from harness.render.headline import (agreement_line, ceiling, fmt_cost, groups_line, headline_line, kind_rows,
                                     lead_headline, never_compacted_lines, nothing_compacted_line)
from harness.render.terminal import print_lost, render_summary
from harness.render.points import markdown_compaction_points
from harness.results.aggregate import GRADES
from harness.results.headline import unreached

if TYPE_CHECKING:
    from harness.studies.compare import ConfigurationRuns, FinishedRun


def markdown_latency(run: dict[str, Any]) -> list[str]:
    """The latency table: harness time is always measured here; model time is labelled with its source."""
    rows = run["aggregates"].get("latency", {}).get("by_model") or []
    if not rows:
        return []
    cache = "on" if run["configuration"].get("cache", True) else "off"
    lines = ["### Compaction latency (trigger to compacted context)", "",
             "| summarizer | cache | compactions | harness p50 / p95 s (measured) | model p50 / p95 s | model time |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['summarizer']} | {cache} | {r['compactions']} | {r['harness_p50_s']} / {r['harness_p95_s']} | "
              f"{r['model_p50_s']} / {r['model_p95_s']} | {r['latency_source']} |" for r in rows]
    return lines + [""]


def markdown_plots(plot: RunPlot) -> list[str]:
    """Retention against fact age and compactions survived, as a PNG beside report.md (when plottable)."""
    if plot.skipped:
        return [f"(plots skipped: {plot.skipped})", ""]
    if plot.png is None:
        return []
    return ["### Retention", "", f"![retention against fact age and compactions survived]({plot.png.name})", ""]


def markdown_headline(agg: dict[str, Any], stopped: dict[str, str] | None = None) -> list[str]:
    """report.md's lead: the headline, the other groups, per kind with n, the cases that never compact, the
    agreement with its disagreements, judged means; first, any runtime's stop (`stopped`: case -> its line)."""
    stopped = stopped or {}
    warning = nothing_compacted_line(agg, stopped)
    warnings = [part for line in ([warning] if warning else []) + list(stopped.values()) for part in (f"**{line}**", "")]
    lead = lead_headline(agg)
    if lead is None:
        return warnings
    lines = warnings + [f"**{headline_line(agg)}**", "", groups_line(lead) + ".", ""]
    if lead["by_kind"]:
        lines += [f"### By kind (summary-testing probes, {lead['grade']})", "",
                  "| kind | n | compacted [Wilson] [clustered] |", "| --- | --- | --- |",
                  *(f"| {kind} | {n} | {rate} |" for kind, n, rate in kind_rows(lead)), ""]
    never = never_compacted_lines(agg)
    if never:
        lines += ["### Cases that never compact (not averaged into retention)", "", *(f"- {n}" for n in never), ""]
    return lines + markdown_agreement(agg) + markdown_judged(agg)


def markdown_agreement(agg: dict[str, Any]) -> list[str]:
    line = agreement_line(agg)
    if line is None:
        return []
    lines = ["### Agreement of retained with answered", "", line + ".", ""]
    disagreements = agg["agreement"]["disagreements"]
    if disagreements:
        lines += ["| probe | kind | answered | retained |", "| --- | --- | --- | --- |",
                  *(f"| {d['probe']} | {d['kind']} | {_pass(d['answered'])} | {_pass(d['retained'])} |"
                    for d in disagreements), ""]
    return lines


def _pass(value: bool) -> str:
    return "pass" if value else "fail"


def markdown_judged(agg: dict[str, Any]) -> list[str]:
    found = agg.get("judged")
    if not found:
        return []
    lines = ["### Judged (mean score 0-5)", "", "| probes | " + " | ".join(CONDITIONS) + " |",
             "| --- |" + " --- |" * len(CONDITIONS)]
    for title, key in (("summary-testing", "tests_summary"), ("all valid", "valid")):
        lines.append(f"| {title} | " + " | ".join(fixed(found[key].get(c), 2) for c in CONDITIONS) + " |")
    return lines + ["", f"{found['errors']} judge errors (recorded as errors, never scored).", ""]


def markdown_invalid(agg: dict[str, Any]) -> list[str]:
    """Invalid probes with the reason (from the lead headline), or as listed by a run without one."""
    lead = lead_headline(agg)
    reasons = lead["invalid"] if lead is not None else {p: "fails on the full history" for p in agg["invalid_probes"]}
    if not reasons:
        return []
    return ["### Invalid probes", "", *(f"- {p}: {reason}" for p, reason in reasons.items()), ""]


def markdown_unreached(run: dict[str, Any]) -> list[str]:
    """Probe points the replay never reached (never graded), per case with the points."""
    points = {key: sorted({p["at"] for p in record["probes"] if unreached(p)}, key=str)
              for key, record in run["cases"].items() if record.get("status") == "ok"}
    counts = {key: sum(1 for p in run["cases"][key]["probes"] if unreached(p)) for key in points}
    lines = [f"- {key} ({run['cases'][key].get('pool', '-')}): {counts[key]} probes at {', '.join(at)}"
             for key, at in points.items() if at]
    if not lines:
        return []
    return ["### Unreached probe points (never graded: the replay under this policy never got there)", "", *lines, ""]


def markdown_rates(title: str, groups: dict[str, dict], first: str) -> list[str]:
    lines = [f"### {title}", "", f"| {first} | compacted | full | floor | normalised |", "| --- | --- | --- | --- | --- |"]
    for name, group in groups.items():
        norm = group.get("normalised_retention")
        lines.append(f"| {name} | " + " | ".join(wilson_rate(group[c]) for c in CONDITIONS)
                     + f" | {fixed(norm, 2)} |")
    return lines + [""]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def write_markdown(run: dict[str, Any], path: Path, plot: RunPlot | None = None) -> None:
    """report.md at `path`, with the retention plot drawn for it unless the caller drew it (for report.html too)."""
    plot = plot if plot is not None else run_retention(run, path.parent / "retention.png", svg=False)
    agg, config = run["aggregates"], run["configuration"]
    grade = agg["grade"]
    lines = [f"# Run {run['run_id']}", "",
             f"{_sentence(configuration_line(config, lambda name: f'`{name}`'))}; harness "
             f"{run['harness_version']} at {run.get('git_commit')}.", "",
             *([note, ""] if (note := provider_note(run)) else []),
             *markdown_headline(agg, stops(run)),
             f"{agg['cases_ok']}/{agg['cases']} cases, {agg['probes']} probes; {ceiling(agg)}; "
             f"{agg['floor_survives']} valid probes survive without any summary (they do not test it). "
             f"The tables below are over all valid probes.", ""]
    lines += markdown_rates("Pass rate (all valid probes)", {g: agg["overall"][g] for g in GRADES}, "grade")
    lines += markdown_rates(f"By kind (all valid probes, {grade})", agg["by_kind"], "kind")
    lines += markdown_rates(f"By pool (all valid probes, {grade})", agg["by_pool"], "pool")
    by_age = {bucket: agg["by_age"][bucket] for bucket in sorted(agg["by_age"], key=age_key)}
    lines += markdown_rates(f"By fact age in messages (all valid probes, {grade})", by_age, "age")
    lines += markdown_rates(f"By compactions survived (all valid probes, {grade})", agg["by_compactions_survived"],
                            "compactions")
    lines += ["### Compaction and summaries", "", "| case | compactions |", "| --- | --- |"]
    lines += [f"| {case} | {n} |" for case, n in agg["compactions"].items()]
    lines += ["", "```", *(f"{k}: {v}" for k, v in agg["summary"].items()), "```", "",
              f"Summarizer {fmt_cost(agg['cost'])}.", ""]
    lines += markdown_spend(agg.get("cost_by_role") or {})
    lines += [f"{line}.", ""] if (line := ceiling_line(agg.get("ceilings"))) else []
    lines += markdown_latency(run) + markdown_risks(run) + markdown_plots(plot)
    lines += markdown_lost(lost_probes(run, path.parent), grade) + markdown_runtime(run)
    lines += markdown_runtime_losses(run)
    lines += markdown_invalid(agg) + markdown_unreached(run)
    if agg["errors"]:
        lines += ["### Errors", "", *(f"- {c}: {e}" for c, e in agg["errors"].items()), ""]
    if failed_request_lines(agg):
        lines += ["### Failed requests", "", f"{failed_request_count(agg)}.", "",
                  *(f"- {line}" for line in failed_request_lines(agg)), ""]
    lines += markdown_compaction_points([run], "###") + markdown_definitions()
    write_atomic(path, "\n".join(lines))


# ---------------------------------------------------------------------------------------------
# the run command's console


REFRESHES_PER_SECOND = 2  # a redraw costs CPU the run needs; half a second is fresh enough for a case count


def case_progress(console: Console, quiet: bool) -> Progress:
    """The cases' progress bar, drawn only on a terminal (redirected, it would redraw for no reader)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=True, disable=quiet or not console.is_terminal,
                    refresh_per_second=REFRESHES_PER_SECOND)


@dataclass(frozen=True)
class RunProgress:
    """Watches the runs (harness.studies.compare.RunObserver): a progress bar on stderr while a run goes,
    then its report.md and, unless the output is JSON, its summary."""

    as_json: bool = False

    @contextmanager
    def running(self, label: str | None, total: int) -> Iterator[Callable[[dict[str, Any]], None]]:
        progress = case_progress(stderr(), self.as_json)
        with progress:
            task = progress.add_task("cases", total=total)
            beat = Heartbeat(label or "cases", total, quiet=self.as_json)  # the bar's stand-in off a terminal

            def advance(record: dict[str, Any]) -> None:
                progress.update(task, advance=1, description=record["case"])
                beat.tick(record["case"])

            yield advance

    def finished(self, finished: FinishedRun) -> None:
        folder, run = finished.folder, finished.run
        plot = run_retention(run, folder.path / "retention.png", svg=True)  # one drawing for both reports
        write_markdown(run, folder.path / "report.md", plot)
        write_html(run, folder.path, plot)
        if not self.as_json:
            out = stdout()
            render_summary(run, out)
            print_lost(lost_probes(run, folder.path), run["aggregates"]["grade"], out, f"{folder.path}/report.md")
            out.print(f"results: {folder.path}/run.json, report: {folder.path}/report.md and report.html "
                      f"(`compaction-harness view {folder.path}`)\n")


def show_runs(result: ConfigurationRuns, as_json: bool) -> None:
    """After the runs: the comparison (comparison.json and .md, and its tables) when there are several; with
    `as_json` one document on stdout (a run's summary, or every run's and the comparison)."""
    if result.comparison is not None:
        write_comparison(result.comparison, [f.run for f in result.runs], result.folder)
        if not as_json:
            print_comparison(result.comparison, stdout())
    if as_json:
        documents = [{"run": str(f.folder.path), "configuration": f.run["configuration"],
                      "aggregates": f.run["aggregates"]} for f in result.runs]
        several = result.comparison is not None
        print(json.dumps({"runs": documents, "comparison": result.comparison} if several else documents[0], indent=2))


def show_merged(run: dict[str, Any], sources: list[str], out: str, as_json: bool = False) -> None:
    """The merged run's report.md, as `run` writes it, then a line (or the run's summary as JSON)."""
    write_markdown(run, Path(out) / "report.md")
    if as_json:
        print(json.dumps({"run": out, "merged_from": run.get("merged_from"), "configuration": run["configuration"],
                          "aggregates": run["aggregates"]}, indent=2))
        return
    stdout().print(f"merged {len(sources)} runs into {out}: {len(run['cases'])} cases; report: {out}/report.md")
