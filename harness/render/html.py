"""report.html: the run in one self-contained page beside report.md (no network: inline CSS, script and SVG
plots). The headline with its groups, the rates, the risks, the lost probes, the plots, then per case its
timeline, compactions, summaries and probes; every table sorts by a click on its header."""

from __future__ import annotations

from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from harness.atomic import write_atomic
from harness.probes import CONDITIONS
from harness.render.configuration import configuration_line
from harness.render.definitions import DEFINITIONS
from harness.render.failed import failed_request_lines
from harness.render.format import fixed, wilson_rate
from harness.render.headline import (groups_line, headline_line, lead_headline, never_compacted_summary,
                                     nothing_compacted_line)
from harness.render.html_case import case_section
from harness.render.lost import lost_probes
from harness.render.runtime import drives, runtime_section, stops
from harness.render.markup import Cell, num, paragraph, section, table
from harness.render.plots import RunPlot, run_retention
from harness.render.runtime_losses import runtime_losses_section
from harness.render.risks import RISK_MEANINGS, risk_line, run_risks
from harness.results.aggregate import GRADES


def _template(name: str) -> str:
    return resources.files("harness.render").joinpath("templates", name).read_text(encoding="utf-8", errors="backslashreplace")


def write_html(run: dict[str, Any], folder: Path, plot: RunPlot | None = None) -> Path:
    path = folder / "report.html"
    write_atomic(path, report_html(run, folder, plot))
    return path


def report_html(run: dict[str, Any], folder: Path | None = None, plot: RunPlot | None = None) -> str:
    """The page; its retention plot drawn here unless the caller drew it (for report.md too)."""
    config = run["configuration"]
    described = f"{configuration_line(config)}; harness {run.get('harness_version')} at {run.get('git_commit')}"
    grade = run["aggregates"]["grade"]
    # the headline and the plot first: both on the first screen
    plot = plot if plot is not None else run_retention(run, None, svg=True)
    parts = [headline_section(run), plots_section(plot), rates_section(run), risks_section(run),
             lost_section(run, folder), runtime_section(run), runtime_losses_section(run), cases_index(run),
             *(case_section(k, r, grade, folder) for k, r in run["cases"].items()), definitions_section()]
    nav = " ".join(f'<a href="#{escape(i)}">{escape(t)}</a>' for i, t in
                   (("headline", "headline"), ("plots", "plots"), ("rates", "rates"), ("risks", "risks"),
                    ("lost-probes", "lost probes"), *((("runtime", "runtime"),) if drives(run) else ()), ("cases", f"cases ({len(run['cases'])})"),
                    ("definitions", "definitions")))
    return Template(_template("report.html")).substitute(
        title=escape(f"Run {run['run_id']}"), configuration=escape(described), nav=nav, body="\n".join(parts),
        css=_template("report.css"), js=_template("report.js"))


def headline_section(run: dict[str, Any]) -> str:
    agg = run["aggregates"]
    lead = lead_headline(agg)
    halted = stops(run)
    warning = nothing_compacted_line(agg, halted)
    lines = [paragraph(warning, "fail") if warning else "", *(paragraph(line, "fail") for line in halted.values()),
             paragraph(headline_line(agg) or "no headline (a run written before it existed)", "headline")]
    if lead is not None:
        lines.append(paragraph(groups_line(lead), "beside"))
    lines.append(paragraph(never_compacted_summary(agg) or "", "muted"))
    lines.append(paragraph(f"{agg['cases_ok']}/{agg['cases']} cases, {agg['probes']} probes, "
                           f"{agg['valid_probes']} valid (the full history passes them); grade {agg['grade']}"))
    lines += [paragraph(f"error in {case}: {error}", "fail") for case, error in agg["errors"].items()]
    lines += [paragraph(f"failed request: {line}", "fail") for line in failed_request_lines(agg)]
    return section("headline", "Headline", *lines)


def _rate_cell(rate: dict[str, Any] | None) -> Cell:
    return Cell(wilson_rate(rate), "num", (rate or {}).get("rate"))


def _rates_table(groups: dict[str, dict], first: str) -> str:
    rows = [[Cell(name), *(_rate_cell(group[c]) for c in CONDITIONS),
             num(group.get("normalised_retention"), fixed(group.get("normalised_retention"), 2))]
            for name, group in groups.items()]
    return table((first, *CONDITIONS, "normalised"), rows)


def rates_section(run: dict[str, Any]) -> str:
    agg = run["aggregates"]
    grade = agg["grade"]
    overall = {g: agg["overall"][g] for g in GRADES if agg["overall"][g]["full"]["total"]}
    return section("rates", "Pass rates (all valid probes, Wilson 95%)", _rates_table(overall, "grade"),
                   f"<h3>By kind ({escape(grade)})</h3>", _rates_table(agg["by_kind"], "kind"),
                   f"<h3>By pool ({escape(grade)})</h3>", _rates_table(agg["by_pool"], "pool"))


def risks_section(run: dict[str, Any]) -> str:
    risks = run_risks(run)
    rows = [[Cell(kind), num(sum(by_case.values())), num(len(by_case)), Cell(RISK_MEANINGS.get(kind, "-"))]
            for kind, by_case in risks.items()]
    return section("risks", "Risks the policy leaves", paragraph(risk_line(run)),
                   table(("risk", "sends", "cases", "meaning"), rows) if rows else "")


def lost_section(run: dict[str, Any], folder: Path | None) -> str:
    lost = lost_probes(run, folder)
    rows = [[Cell(p.key), Cell(p.kind), Cell(p.question), Cell("; ".join(p.expected) or "-"),
             Cell(p.answer, "answer"), Cell(p.why()), Cell(p.excerpt, "excerpt")] for p in lost]
    attributes = [f' class="lost" data-probe="{escape(p.key)}"' for p in lost]
    title = f"Lost probes ({len(lost)}: the full history passes them, the compacted context fails)"
    return section("lost-probes", title,
                   table(("probe", "kind", "question", "expected", "answer (compacted)", "why", "summary excerpt"),
                         rows, id="lost-table", row_attributes=attributes) if lost else paragraph("None."))


def plots_section(plot: RunPlot) -> str:
    if plot.skipped:
        return section("plots", "Plots", paragraph(f"(plots skipped: {plot.skipped})", "muted"))
    if plot.svg is None:
        return ""
    return section("plots", "Retention", f'<div class="plot">{plot.svg}</div>')


def cases_index(run: dict[str, Any]) -> str:
    """A link to each case's section (the page's navigation names only the sections, to stay one line)."""
    links = " ".join(f'<a href="#case-{escape(k)}">{escape(k)}</a>' for k in run["cases"])
    return section("cases", "Cases", f'<p class="index">{links}</p>')


def definitions_section() -> str:
    items = "".join(f"<dt>{escape(name)}</dt><dd>{escape(meaning)}</dd>" for name, meaning in DEFINITIONS)
    return section("definitions", "Definitions", f'<dl class="definitions">{items}</dl>')
