"""The cost study for a reader: the terminal tables, the markdown file and its plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from harness.render.console import stdout
from harness.render.format import dollars, percent
from harness.render.plots import cost_plot, markdown_image
from harness.render.shapes import shape_title

def break_even_sentence(model: str, alt: str, a: dict[str, Any]) -> str:
    verdict = "cheaper" if a["cheaper"] else "dearer"
    flip = a["flip_hit_rate"]
    flip_text = ("the same model stays cheaper at any cache hit rate" if flip is not None and flip <= 0 else
                 "the alternative stays cheaper at any cache hit rate" if flip is None or flip > 1 else
                 f"the same model wins above a {100 * flip:.0f}% cache hit rate")
    return (f"priced at {a['price_ratio']:.3f}x of {model}, against a break-even ratio of "
            f"{a['break_even_ratio']:.3f}x: {verdict} by {dollars(abs(a['saving_usd']), 4)} in total; {flip_text}")


def markdown(result: dict[str, Any], plot: str | None = None) -> str:
    lines = ["# The cost of the extra summarizer call", "",
             f"{len(result['cases'])} cases, {result['sessions_with_compactions']} with compactions; "
             f"every figure is {result['note']}.", ""]
    for summary in result["models"]:
        lines += [f"## {summary['model']}", "",
                  f"{summary['compactions']} compactions over {summary['sessions']} sessions; cache hit rate "
                  f"of the same-model summarizer: {percent(summary['cache_hit_rate'])}.", "",
                  "| request shape | model | uncached | cache read | cache write | output | $ per compaction "
                  "| $ per session | source |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for shape, t in summary["shapes"].items():
            lines.append(f"| {shape_title(shape)} | {t['model']} | {t['uncached_tokens']} | "
                         f"{t['cached_input_tokens']} | {t['cache_write_tokens']} | {t['output_tokens']} | "
                         f"{dollars(t['per_compaction_usd'])} | {dollars(t['per_session_usd'])} | {t['source']} |")
        lines.append("")
        for alt, a in summary["alternatives"].items():
            lines.append(f"- {alt}: {break_even_sentence(summary['model'], alt, a)}")
        lines.append("")
    if plot:
        lines += [f"![cost per compaction by request shape]({plot})", ""]
    return "\n".join(lines)


def print_study(result: dict[str, Any]) -> None:
    out = stdout()
    out.print(f"{len(result['cases'])} cases, {result['sessions_with_compactions']} with compactions; "
              f"{result['note']}")
    for summary in result["models"]:
        table = Table(title=f"{summary['model']}: {summary['compactions']} compactions, cache hit "
                            f"{percent(summary['cache_hit_rate'] or 0)}")
        for column in ("request shape", "model", "uncached", "cache read", "cache write", "output",
                       "$ / compaction", "$ / session", "source"):
            table.add_column(column, justify="left" if column in ("request shape", "model", "source") else "right")
        for shape, t in summary["shapes"].items():
            table.add_row(shape_title(shape), t["model"], str(t["uncached_tokens"]), str(t["cached_input_tokens"]),
                          str(t["cache_write_tokens"]), str(t["output_tokens"]),
                          dollars(t["per_compaction_usd"] or 0), dollars(t["per_session_usd"] or 0), t["source"])
        out.print(table)
        for alt, a in summary["alternatives"].items():
            out.print(f"  {alt}: {break_even_sentence(summary['model'], alt, a)}")


def show_study(result: dict[str, Any], *, plot: str | None = None, markdown_path: str | None = None,
               as_json: bool = False) -> None:
    """The cost command's output: the plot and the markdown file when asked (the markdown links the plot
    relative to itself), then JSON or the tables."""
    drawn = cost_plot(result, plot) if plot else None
    if markdown_path:
        link = markdown_image("", drawn, Path(markdown_path).parent)[4:-1] if drawn else None
        Path(markdown_path).write_text(markdown(result, link), encoding="utf-8")
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_study(result)
