"""Configurations side by side: the terminal tables, comparison.md and comparison.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.atomic import write_atomic
from harness.render.margins import margins_markdown, overall_line
from harness.render.console import stdout
from harness.render.definitions import QUESTIONS, markdown_questions
from harness.render.format import fixed, headline_rate, number, rate_percent, sourced_dollars, wilson_rate
from harness.render.headline import group_counts, testing_phrase
from harness.render.points import markdown_compaction_points
from harness.render.releases import markdown as release_lines
from harness.results.folder import write_json

Cell = Callable[[dict[str, Any]], str]


def table_rows(result: dict[str, Any]) -> list[tuple[str, Cell]]:
    """(row title, cell function) for the side-by-side table, shared by the terminal and markdown."""
    kinds = sorted({k for r in result["runs"] for k in r["by_kind"]})
    pools = sorted({k for r in result["runs"] for k in r["by_pool"]})
    rows = headline_rows(result)
    rows += [
        ("pass rate, all valid probes", lambda r: wilson_rate(r["pass_rate"])),
        ("full / floor, all valid probes", lambda r: f"{rate_percent(r['full'])} / {rate_percent(r['floor'])}"),
        ("normalised retention, all valid probes", lambda r: number(r["normalised_retention"]))]
    rows += [(f"kind {k}, all valid", lambda r, k=k: wilson_rate(r["by_kind"].get(k))) for k in kinds]
    rows += [(f"pool {p}, all valid", lambda r, p=p: wilson_rate(r["by_pool"].get(p))) for p in pools]
    rows += [("compactions", lambda r: str(r["compactions"])),
             ("summary tokens (mean)", lambda r: number(r["summary_tokens"])),
             ("cost per compaction", lambda r: sourced_dollars(r["cost"].get("per_compaction"), r["cost"].get("source"))),
             ("cost per session", lambda r: sourced_dollars(r["cost"].get("per_session"), r["cost"].get("source"))),
             ("model latency p50 / p95 s", lambda r: f"{number(r['latency'].get('model_p50_s'))} / "
                                                   f"{number(r['latency'].get('model_p95_s'))} "
                                                   f"({r['latency'].get('model_time_source') or '-'})")]
    if any(r.get("judged") for r in result["runs"]):
        rows.append(("judged mean 0-5, summary-testing (compacted)", lambda r: fixed(
            ((r.get("judged") or {}).get("tests_summary") or {}).get("compacted"), 2)))
    return rows


def headline_rows(result: dict[str, Any]) -> list[tuple[str, Cell]]:
    """The lead rows: each run's compacted rate over its summary-testing probes, the groups beside it, and
    per kind over summary-testing probes with n."""
    runs = [r for r in result["runs"] if r.get("headline")]
    if not runs:
        return []
    kinds = sorted({k for r in runs for k in r["headline"]["by_kind"]})

    def lead(r: dict[str, Any]) -> str:
        rate = (r.get("headline") or {}).get("tests_summary")
        return f"{headline_rate(rate)} {testing_phrase(rate)}" if rate else "-"

    def groups(r: dict[str, Any]) -> str:
        return group_counts(r["headline"]) if (r.get("headline") or {}).get("groups") else "-"

    def kind(r: dict[str, Any], k: str) -> str:
        rate = ((r.get("headline") or {}).get("by_kind") or {}).get(k)
        return headline_rate(rate) if rate else "-"

    rows: list[tuple[str, Cell]] = [("headline: compacted, summary-testing probes", lead),
                                    ("not in the headline", groups)]
    return rows + [(f"kind {k}, summary-testing", lambda r, k=k: kind(r, k)) for k in kinds]


def pair_interval(pair: dict[str, Any]) -> str:
    return f"{pair['difference']:+.3f} [{pair['ci95'][0]:+.3f}, {pair['ci95'][1]:+.3f}]"


def pair_clustered(pair: dict[str, Any]) -> str:
    """The case-clustered interval of the same difference (probes within a case are not independent)."""
    low_high = pair.get("cluster95")
    return "-" if not low_high else f"[{low_high[0]:+.3f}, {low_high[1]:+.3f}]"


PAIR_COLUMNS = ("a", "b", "probes", "cases", "only a", "only b", "b - a [95% per probe]", "b - a [95% by case]",
                "McNemar p")


def pair_cells(p: dict[str, Any]) -> list[str]:
    p_value = "void (same model)" if p.get("void") else f"{p['p_value']:.4f}"
    return [p["a"], p["b"], str(p["shared_probes"]), str(p.get("cases", "-")), str(p["only_a"]), str(p["only_b"]),
            pair_interval(p), pair_clustered(p), p_value]


def void_notes(result: dict[str, Any]) -> list[str]:
    """One line per pair whose quality comparison is void: only cost and shapes can differ there."""
    return [f"{p['a']} vs {p['b']}: {p['void']}; only cost, latency and summary shapes can differ."
            for p in result["pairs"] if p.get("void")]


def flip_lines(result: dict[str, Any]) -> list[str]:
    """Per pair, the probes that flipped: passing in one run and failing in the other (summary-testing in both)."""
    lines = []
    for p in result["pairs"]:
        for side, other, key in (("a", "b", "passes_only_in_a"), ("b", "a", "passes_only_in_b")):
            if p.get(key):
                lines.append(f"{p[side]} passes, {p[other]} fails ({len(p[key])}): {', '.join(p[key])}")
    return lines


def markdown_flips(result: dict[str, Any]) -> list[str]:
    lines = flip_lines(result)
    return ["", "### Probes that flipped", "", *(f"- {line}" for line in lines)] if lines else []


def markdown(result: dict[str, Any]) -> str:
    runs = result["runs"]
    lines = [f"## Comparison ({result['grade']})", "", "| | " + " | ".join(r["label"] for r in runs) + " |",
             "| --- |" + " --- |" * len(runs)]
    for title, cell in table_rows(result):
        lines.append(f"| {title} | " + " | ".join(cell(r) for r in runs) + " |")
    lines += ["", "### Pairwise (probes that test the summary in both runs)", "", "| " + " | ".join(PAIR_COLUMNS) + " |",
              "|" + " --- |" * len(PAIR_COLUMNS)]
    lines += ["| " + " | ".join(pair_cells(p)) + " |" for p in result["pairs"]]
    notes = void_notes(result)
    lines += [""] + [f"- **Void:** {n}" for n in notes] if notes else []
    changed = [line for change in result.get("releases", ()) for line in ["", *release_lines(change)]]
    return "\n".join(lines + markdown_flips(result) + markdown_questions() + controls_markdown(result) + changed) + "\n"


def _credit_cell(c: dict[str, Any]) -> str:
    share = "-" if c["share"] is None else f"{100 * c['share']:.0f}%"
    verdict = "separated" if c["separated"] else "**cannot separate**"
    return f"{c['control']}/{c['summarizer']} ({share}), p={c['p_value']:.2g}, {verdict}"


def controls_markdown(result: dict[str, Any]) -> list[str]:
    """Each control's credit over the probes that test the summary under test, and where the instrument
    cannot tell the summarizer from it (McNemar p at or above the threshold): library, kind, case."""
    study = result.get("controls")
    if not study:
        return []
    lines = ["", f"### Reference controls beside {study['under_test']}", "",
             "Each control's compacted passes over the probes that test the summary under test, against the "
             f"summarizer's (control/summarizer, share); exact McNemar p; separated when p < {study['separates_below']}.",
             ""]
    for grade, by_control in study["grades"].items():
        names = list(by_control)
        lines += [f"#### {grade}", "", "| | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
        first = by_control[names[0]]
        lines.append("| whole library (" + str(first["overall"]["probes"]) + " probes) | "
                     + " | ".join(_credit_cell(by_control[n]["overall"]) for n in names) + " |")
        for group in ("by_kind", "by_case"):
            for key in first[group]:
                lines.append(f"| {group[3:]} {key} ({first[group][key]['probes']}) | "
                             + " | ".join(_credit_cell(by_control[n][group][key]) for n in names) + " |")
        whole = [n for n in names if not by_control[n]["overall"]["separated"]]
        lines += ["", ("The instrument cannot separate the summarizer from " + ", ".join(whole) + " on the whole "
                       "library." if whole else "On the whole library the summarizer is separated from every control.")]
        for name in names:
            apart = [f"{g[3:]} {k}" for g in ("by_kind", "by_case") for k, c in by_control[name][g].items()
                     if not c["separated"]]
            if apart:
                lines.append(f"- not separated from {name} in: {', '.join(apart)}")
        lines.append("")
        lines += margins_markdown(study["under_test"], study.get("margins", {}).get(grade, {}))
    return lines


def comparison_markdown(result: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    """comparison.md: the tables, then the recorded summaries beside ours per compaction point."""
    return markdown(result) + "\n".join(["", *markdown_compaction_points(runs, "###")])


def write_comparison(result: dict[str, Any], runs: list[dict[str, Any]], folder: Path) -> None:
    """comparison.json and comparison.md of a multi-configuration run."""
    write_json(folder / "comparison.json", result)
    write_atomic(folder / "comparison.md", comparison_markdown(result, runs))
    under_test = [r for r in runs if not r["configuration"].get("control")]
    report = folder / (under_test[0].get("label") or "") / "report.md" if len(under_test) == 1 else None
    if result.get("controls") and report is not None and report.exists():  # the controls belong to its report too
        write_atomic(report, report.read_bytes() + ("\n".join(controls_markdown(result)) + "\n").encode(
            "utf-8", "backslashreplace"))


def print_comparison(result: dict[str, Any], console: Console) -> None:
    table = Table(title=f"comparison ({result['grade']}, compacted)")
    table.add_column("")
    for run in result["runs"]:
        table.add_column(run["label"], justify="right")
    for title, cell in table_rows(result):  # Text: the intervals' brackets are not markup
        table.add_row(Text(title), *(Text(cell(r)) for r in result["runs"]))
    console.print(table)
    pairs = Table(title="pairwise on probes that test the summary in both runs")
    for column in PAIR_COLUMNS:
        pairs.add_column(Text(column))
    for p in result["pairs"]:
        pairs.add_row(*(Text(cell) for cell in pair_cells(p)))
    console.print(pairs)
    for note in void_notes(result):
        console.print(Text(f"void: {note}"))
    for line in flip_lines(result):
        console.print(Text(f"flipped: {line}"))
    console.print(Text("which figure answers which question: " + "; ".join(f"{q} {a}" for q, a in QUESTIONS)))
    study = result.get("controls")
    for grade, by_control in (study or {}).get("grades", {}).items():
        cells = "; ".join(f"{name} {_credit_cell(c['overall'])}" for name, c in by_control.items())
        console.print(Text(f"controls ({grade}, {study['under_test']}): {cells.replace('**', '')}"))
        if study.get("margins", {}).get(grade):
            console.print(Text(f"margin ({grade}): {overall_line(study['under_test'], study['margins'][grade])}"))


def show_compare(result: dict[str, Any], runs: list[dict[str, Any]], *, markdown_path: str | None = None,
                 as_json: bool = False) -> None:
    """The compare command's output: the markdown file when asked, then JSON or the tables and the
    per-compaction-point tables."""
    if markdown_path:
        write_atomic(markdown_path, comparison_markdown(result, runs))
    if as_json:
        print(json.dumps(result, indent=2))
        return
    out = stdout()
    print_comparison(result, out)
    for line in markdown_compaction_points(runs, "###"):
        out.print(line, markup=False)
