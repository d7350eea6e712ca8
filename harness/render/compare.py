"""Configurations side by side: the terminal tables, comparison.md and comparison.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

from harness.render.console import stdout
from harness.render.format import number, rate_percent, sourced_dollars, wilson_rate
from harness.render.points import markdown_compaction_points
from harness.results.folder import write_json

Cell = Callable[[dict[str, Any]], str]


def table_rows(result: dict[str, Any]) -> list[tuple[str, Cell]]:
    """(row title, cell function) for the side-by-side table, shared by the terminal and markdown."""
    kinds = sorted({k for r in result["runs"] for k in r["by_kind"]})
    pools = sorted({k for r in result["runs"] for k in r["by_pool"]})
    rows: list[tuple[str, Cell]] = [
        ("pass rate", lambda r: wilson_rate(r["pass_rate"])),
        ("full / floor", lambda r: f"{rate_percent(r['full'])} / {rate_percent(r['floor'])}"),
        ("normalised retention", lambda r: number(r["normalised_retention"]))]
    rows += [(f"kind {k}", lambda r, k=k: wilson_rate(r["by_kind"].get(k))) for k in kinds]
    rows += [(f"pool {p}", lambda r, p=p: wilson_rate(r["by_pool"].get(p))) for p in pools]
    rows += [("compactions", lambda r: str(r["compactions"])),
             ("summary tokens (mean)", lambda r: number(r["summary_tokens"])),
             ("cost per compaction", lambda r: sourced_dollars(r["cost"].get("per_compaction"), r["cost"].get("source"))),
             ("cost per session", lambda r: sourced_dollars(r["cost"].get("per_session"), r["cost"].get("source"))),
             ("model latency p50 / p95 s", lambda r: f"{number(r['latency'].get('model_p50_s'))} / "
                                                   f"{number(r['latency'].get('model_p95_s'))} "
                                                   f"({r['latency'].get('model_time_source') or '-'})")]
    return rows


def pair_interval(pair: dict[str, Any]) -> str:
    return f"{pair['difference']:+.3f} [{pair['ci95'][0]:+.3f}, {pair['ci95'][1]:+.3f}]"


def markdown(result: dict[str, Any]) -> str:
    runs = result["runs"]
    lines = [f"## Comparison ({result['grade']})", "", "| | " + " | ".join(r["label"] for r in runs) + " |",
             "| --- |" + " --- |" * len(runs)]
    for title, cell in table_rows(result):
        lines.append(f"| {title} | " + " | ".join(cell(r) for r in runs) + " |")
    lines += ["", "### Pairwise (shared valid probes)", "", "| a | b | probes | only a | only b | b - a [95%] | McNemar p |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in result["pairs"]:
        lines.append(f"| {p['a']} | {p['b']} | {p['shared_probes']} | {p['only_a']} | {p['only_b']} | "
                     f"{pair_interval(p)} | {p['p_value']:.4f} |")
    return "\n".join(lines) + "\n"


def comparison_markdown(result: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    """comparison.md: the tables, then the recorded summaries beside ours per compaction point."""
    return markdown(result) + "\n".join(["", *markdown_compaction_points(runs, "###")])


def write_comparison(result: dict[str, Any], runs: list[dict[str, Any]], folder: Path) -> None:
    """comparison.json and comparison.md of a multi-configuration run."""
    write_json(folder / "comparison.json", result)
    (folder / "comparison.md").write_text(comparison_markdown(result, runs), encoding="utf-8")


def print_comparison(result: dict[str, Any], console: Console) -> None:
    table = Table(title=f"comparison ({result['grade']}, compacted)")
    table.add_column("")
    for run in result["runs"]:
        table.add_column(run["label"], justify="right")
    for title, cell in table_rows(result):
        table.add_row(title, *(cell(r) for r in result["runs"]))
    console.print(table)
    pairs = Table(title="pairwise on shared valid probes")
    for column in ("a", "b", "probes", "only a", "only b", "b - a [95%]", "McNemar p"):
        pairs.add_column(column)
    for p in result["pairs"]:
        pairs.add_row(p["a"], p["b"], str(p["shared_probes"]), str(p["only_a"]), str(p["only_b"]),
                      pair_interval(p), f"{p['p_value']:.4f}")
    console.print(pairs)


def show_compare(result: dict[str, Any], runs: list[dict[str, Any]], *, markdown_path: str | None = None,
                 as_json: bool = False) -> None:
    """The compare command's output: the markdown file when asked, then JSON or the tables and the
    per-compaction-point tables."""
    if markdown_path:
        Path(markdown_path).write_text(comparison_markdown(result, runs), encoding="utf-8")
    if as_json:
        print(json.dumps(result, indent=2))
        return
    out = stdout()
    print_comparison(result, out)
    for line in markdown_compaction_points(runs, "###"):
        out.print(line, markup=False)
