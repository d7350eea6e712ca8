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
from rich.table import Table
from rich.text import Text

from harness.probes import CONDITIONS
from harness.render.provider import provider_note
from harness.render.console import stderr, stdout
from harness.render.compare import print_comparison, write_comparison
from harness.render.definitions import markdown_definitions
from harness.render.failed import failed_request_count, failed_request_lines
from harness.render.html import write_html
from harness.render.lost import LostProbe, lost_probes, lost_text, markdown_lost
from harness.render.plots import age_key, retention_plot
from harness.render.risks import markdown_risks, risk_line
from harness.render.estimate import ceiling_line, markdown_spend, spend_line
from harness.render.format import dollars, fixed, percent, wilson_rate
from harness.render.headline import (agreement_line, groups_line, headline_line, judged_line, kind_rows,
                                     lead_headline, never_compacted_lines, nothing_compacted_line)
from harness.render.points import markdown_compaction_points
from harness.results.aggregate import GRADES

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


def markdown_plots(run: dict[str, Any], folder: Path) -> list[str]:
    """Retention against fact age and compactions survived, as a PNG beside report.md (when plottable)."""
    if not run["aggregates"].get("valid_probes"):
        return []
    try:
        retention_plot([(run.get("label") or run["run_id"], run)], folder / "retention.png")
    except Exception as exc:  # a missing matplotlib must not cost the report
        return [f"(plots skipped: {type(exc).__name__}: {exc})", ""]
    return ["### Retention", "", "![retention against fact age and compactions survived](retention.png)", ""]


# ---------------------------------------------------------------------------------------------
# rendering


def fmt_cost(cost: dict[str, Any]) -> str:
    if cost.get("usd") is None:
        return "cost n/a"
    # A run replays no agent requests, so its summarizer calls meet a cold prompt cache.
    cold = ("; cold cache: the agent's own requests are not replayed, `compaction-harness cost` models the warm one"
            if cost["usd"] else "")
    return (f"cost {dollars(cost['usd'], 4)} ({dollars(cost['per_compaction'] or 0, 4)} per compaction, "
            f"{dollars(cost['per_session'], 4)} per session that compacted; {cost['source']}{cold})")


def rate_table(title: str, groups: dict[str, dict], first: str) -> Table:
    table = Table(title=title)
    table.add_column(first)
    for column in (*CONDITIONS, "normalised"):
        table.add_column(column, justify="right")
    for name, group in groups.items():
        norm = group.get("normalised_retention")
        table.add_row(name, *(wilson_rate(group[c]) for c in CONDITIONS), fixed(norm, 2))
    return table


def ceiling(agg: dict[str, Any]) -> str:
    """How many probes the full history answers: the instrument's own ceiling (valid probes)."""
    share = f" ({percent(agg['valid_probes'] / agg['probes'])})" if agg["probes"] else ""
    unreached = agg.get("unreached_probes") or 0
    lost = (agg.get("failed_requests") or {}).get("ungraded", 0)  # neither valid nor invalid
    invalid = agg["probes"] - agg["valid_probes"] - unreached - lost
    parts = ([f"{unreached} are at points the replay never reached (not graded)"] if unreached else []) + (
        [f"{lost} lost to failed requests (not graded)"] if lost else []) + (
        ["the rest are invalid"] if invalid else [])
    rest = ", ".join(parts) or "none invalid"
    return f"the full history passes {agg['valid_probes']}/{agg['probes']}{share}, {rest}"


def render_summary(run: dict[str, Any], console: Console) -> None:
    agg, config = run["aggregates"], run["configuration"]
    grade = agg["grade"]
    console.print(f"[bold]run {run['run_id']}[/]: policy {config['policy']}, model {config['model']}, summarizer "
                  f"{config['summarizer_spec']}, answerer {config['answerer']}, cache {'on' if config['cache'] else 'off'}")
    note = provider_note(run)
    if note:
        console.print(note)
    print_headline(agg, console)
    console.print(f"{agg['cases_ok']}/{agg['cases']} cases, {agg['probes']} probes; {ceiling(agg)}; "
                  f"{agg['floor_survives']} valid probes survive without a summary; grade: {grade}; "
                  f"the tables below are over all valid probes")
    overall = {g: agg["overall"][g] for g in GRADES if agg["overall"][g]["full"]["total"]}
    console.print(rate_table("pass rate, all valid probes (Wilson 95%)", overall, "grade"))
    console.print(rate_table(f"by kind, all valid probes ({grade})", agg["by_kind"], "kind"))
    console.print(rate_table(f"by pool, all valid probes ({grade})", agg["by_pool"], "pool"))
    s, lat, usage = agg["summary"], agg["latency"], agg["usage"]
    console.print(f"compactions: {sum(agg['compactions'].values())} "
                  f"({', '.join(f'{k} {v}' for k, v in agg['compactions'].items() if v)}); summaries: mean "
                  f"{fixed(s['mean_tokens'], 0)} tokens, compression {fixed(s['mean_compression_ratio'], 1)}x, "
                  f"artifact recall {fixed(s['mean_artifact_recall'], 2)} precision "
                  f"{fixed(s['mean_artifact_precision'], 2)}, "
                  f"{s['hallucinated_paths']} hallucinated paths, {s['stale_facts']} stale facts"
                  + (f", {s['over_budget']} over budget (graded cut to it)" if s.get("over_budget") else ""))
    console.print(f"summarizer usage: {usage.get('input_tokens', 0)} input ({usage.get('cached_input_tokens', 0)} "
                  f"cached, {usage.get('cache_write_tokens', 0)} written), {usage.get('output_tokens', 0)} output "
                  f"over {usage.get('calls', 0)} calls; {fmt_cost(agg['cost'])}")
    for line in (spend_line(agg.get("cost_by_role") or {}), ceiling_line(agg.get("ceilings"))):
        if line:
            console.print(line, markup=False)
    console.print(f"compaction latency: harness p50 {lat['harness_p50_s']} s p95 {lat['harness_p95_s']} s "
                  f"(measured); model p50 {lat['model_p50_s']} s p95 {lat['model_p95_s']} s "
                  f"({lat['model_time_source']})")
    console.print(risk_line(run), markup=False)
    for case, error in agg["errors"].items():
        console.print(f"[red]error[/] in {case}: {error}", markup=True)
    if (count := failed_request_count(agg)) is not None:
        console.print(Text(count, style="red"))
    for line in failed_request_lines(agg):
        console.print(Text("failed request", style="red") + Text(f": {line}"))


def print_lost(lost: list[LostProbe], grade: str, console: Console) -> None:
    """Every lost probe, a few lines each: what was asked, what was expected, what came back, and why."""
    if not lost:
        return
    console.print(Text(f"lost probes ({len(lost)}: the full history passes them, the compacted context fails, "
                       f"{grade}):", style="bold"))
    for probe in lost:
        console.print(Text(f"- {probe.key} ({probe.kind}, at {probe.at})", style="red"))
        console.print(Text("    " + lost_text(probe).replace("\n", "\n    ")))


def print_headline(agg: dict[str, Any], console: Console) -> None:
    """The terminal's lead: the headline over summary-testing probes, the other groups, per kind with n, the
    cases that never compact, the agreement and judged means (one line each)."""
    warning = nothing_compacted_line(agg)
    if warning:
        console.print(Text(warning, style="bold red"))
    lead = lead_headline(agg)
    if lead is None:
        return
    console.print(Text(headline_line(agg) or "", style="bold"))  # Text: the intervals' brackets are not markup
    console.print(groups_line(lead), markup=False)
    if lead["by_kind"]:
        table = Table(title=f"by kind, summary-testing probes ({lead['grade']}, compacted)")
        for column, justify in (("kind", "left"), ("n", "right"), ("compacted [Wilson] [clustered]", "right")):
            table.add_column(Text(column), justify=justify)
        for row in kind_rows(lead):
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
    for line in never_compacted_lines(agg):
        console.print(f"never compacts (not averaged in): {line}", markup=False)
    for line in (agreement_line(agg), judged_line(agg)):
        if line:
            console.print(line, markup=False)


def markdown_headline(agg: dict[str, Any]) -> list[str]:
    """report.md's lead: the headline, the other groups, per kind with n, the cases that never compact, the
    agreement with its disagreements, judged means."""
    warning = nothing_compacted_line(agg)
    lead = lead_headline(agg)
    if lead is None:
        return [f"**{warning}**", ""] if warning else []
    lines = ([f"**{warning}**", ""] if warning else []) + [f"**{headline_line(agg)}**", "", groups_line(lead) + ".", ""]
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


def markdown_rates(title: str, groups: dict[str, dict], first: str) -> list[str]:
    lines = [f"### {title}", "", f"| {first} | compacted | full | floor | normalised |", "| --- | --- | --- | --- | --- |"]
    for name, group in groups.items():
        norm = group.get("normalised_retention")
        lines.append(f"| {name} | " + " | ".join(wilson_rate(group[c]) for c in CONDITIONS)
                     + f" | {fixed(norm, 2)} |")
    return lines + [""]


def write_markdown(run: dict[str, Any], path: Path) -> None:
    agg, config = run["aggregates"], run["configuration"]
    grade = agg["grade"]
    lines = [f"# Run {run['run_id']}", "",
             f"Policy `{config['policy']}`, model `{config['model']}`, summarizer `{config['summarizer_spec']}`, "
             f"answerer `{config['answerer']}`, cache {'on' if config['cache'] else 'off'}; harness "
             f"{run['harness_version']} at {run.get('git_commit')}.", "",
             *([note, ""] if (note := provider_note(run)) else []),
             *markdown_headline(agg),
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
    lines += markdown_latency(run) + markdown_risks(run) + markdown_plots(run, path.parent)
    lines += markdown_lost(lost_probes(run, path.parent), grade)
    lines += markdown_invalid(agg)
    if agg["errors"]:
        lines += ["### Errors", "", *(f"- {c}: {e}" for c, e in agg["errors"].items()), ""]
    if failed_request_lines(agg):
        lines += ["### Failed requests", "", f"{failed_request_count(agg)}.", "",
                  *(f"- {line}" for line in failed_request_lines(agg)), ""]
    lines += markdown_compaction_points([run], "###") + markdown_definitions()
    path.write_text("\n".join(lines), encoding="utf-8", errors="backslashreplace")


# ---------------------------------------------------------------------------------------------
# the run command's console


@dataclass(frozen=True)
class RunProgress:
    """Watches the runs (harness.studies.compare.RunObserver): a progress bar on stderr while a run goes,
    then its report.md and, unless the output is JSON, its summary."""

    as_json: bool = False

    @contextmanager
    def running(self, label: str | None, total: int) -> Iterator[Callable[[dict[str, Any]], None]]:
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=stderr(), transient=True, disable=self.as_json)
        with progress:
            task = progress.add_task("cases", total=total)
            yield lambda record: progress.update(task, advance=1, description=record["case"])

    def finished(self, finished: FinishedRun) -> None:
        folder, run = finished.folder, finished.run
        write_markdown(run, folder.path / "report.md")
        write_html(run, folder.path)
        if not self.as_json:
            out = stdout()
            render_summary(run, out)
            print_lost(lost_probes(run, folder.path), run["aggregates"]["grade"], out)
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
