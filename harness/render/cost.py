"""The cost study for a reader: the terminal tables, the markdown file and its plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from harness.atomic import write_atomic
from harness.render.console import stdout
from harness.render.format import dollars, percent
from harness.render.plots import cost_plot, markdown_image
from harness.render.shapes import shape_title

COLUMNS = ("request shape", "model", "uncached", "cache read", "cache write", "output", "$ call",
           "first request: written", "$ first request", "$ whole", "$ vs uncompacted", "$ whole / session")


def break_even_sentence(model: str, alt: str, a: dict[str, Any]) -> str:
    verdict = "cheaper" if a["cheaper_whole"] else "dearer"
    flip = a["flip_hit_rate"]
    flip_text = ("the same model stays cheaper at any cache hit rate" if flip is not None and flip <= 0 else
                 "the alternative stays cheaper at any cache hit rate" if flip is None or flip > 1 else
                 f"the same model's call wins above a {100 * flip:.0f}% cache hit rate")
    return (f"priced at {a['price_ratio']:.3f}x of {model}, against a break-even ratio of "
            f"{_ratio(a['break_even_ratio_whole'])} on the whole price ({_ratio(a['break_even_ratio'])} on the "
            f"call alone): {verdict} by {dollars(abs(a['saving_whole_usd']), 4)} in total; {flip_text}")


def provider_sentence(model: str, shape: str, a: dict[str, Any]) -> str:
    verdict = "cheaper" if a["cheaper_whole"] else "dearer"
    return (f"{shape} against {model} with its cache, on the whole price: {verdict} by "
            f"{dollars(abs(a['saving_whole_usd']), 4)} in total; it breaks even if its call is billed at "
            f"{_ratio(a['break_even_ratio_whole'])} the model's listed rates ({_ratio(a['break_even_ratio'])} on "
            f"the call alone; compaction assumed billed at those rates)")


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}x"


def row_cells(shape: str, t: dict[str, Any]) -> list[str]:
    first = t.get("first_request") or {}
    written = first.get("cache_write_tokens", 0) if first.get("cache_write_tokens") else first.get(
        "uncached_tokens", 0)
    share = first.get("write_share") if first.get("cache_write_tokens") else (
        written / first["input_tokens"] if first.get("input_tokens") else None)
    return [shape_title(shape), t["model"], str(t["uncached_tokens"]), str(t["cached_input_tokens"]),
            str(t["cache_write_tokens"]), str(t["output_tokens"]), dollars(t["per_compaction_usd"] or 0),
            f"{written} ({percent(share)})" if share is not None else "-",
            dollars(first.get("per_compaction_usd") or 0), dollars(t.get("whole_per_compaction_usd") or 0),
            _signed(t.get("extra_per_compaction_usd")), dollars(t.get("whole_per_session_usd") or 0)]


def _signed(value: float | None) -> str:
    if value is None:
        return "-"
    return ("+" if value >= 0 else "-") + dollars(abs(value))


def intro(result: dict[str, Any]) -> str:
    return (f"{len(result['cases'])} cases, {result['sessions_with_compactions']} with compactions; "
            f"every figure is {result['note']}; cache TTL {result['cache_ttl']}; "
            f"{'; '.join(result['timing']) or 'no compaction'}. Per compaction: the call, the first request "
            f"after it (the new prefix, written to cache or sent uncached), the whole (both), and the whole "
            f"against the uncompacted request at the same point. Token columns sum over the compactions; $ columns are per "
            f"compaction unless marked per session.")


def summary_line(summary: dict[str, Any]) -> str:
    return (f"{summary['compactions']} compactions over {summary['sessions']} sessions; cache hit rate of "
            f"the same-model call: {percent(summary['cache_hit_rate'])}; compactions that met a cache expired "
            f"by an idle gap: {summary['cold_cache_compactions']}.")


def markdown(result: dict[str, Any], plot: str | None = None) -> str:
    lines = ["# The cost of compaction", "", intro(result), ""]
    for summary in result["models"]:
        lines += [f"## {summary['model']}", "", summary_line(summary), "",
                  "| " + " | ".join(COLUMNS) + " | source |", "| " + " | ".join("---" for _ in COLUMNS) + " | --- |"]
        for shape, t in summary["shapes"].items():
            lines.append("| " + " | ".join(row_cells(shape, t)) + f" | {t['source']} |")
        lines.append("")
        for alt, a in summary["alternatives"].items():
            lines.append(f"- {alt}: {break_even_sentence(summary['model'], alt, a)}")
        for shape, a in summary.get("provider_compaction", {}).items():
            lines.append(f"- {provider_sentence(summary['model'], shape, a)}")
        lines.append("")
    if plot:
        lines += [f"![cost per compaction by request shape]({plot})", ""]
    return "\n".join(lines)


def print_study(result: dict[str, Any]) -> None:
    out = stdout()
    out.print(intro(result))
    for summary in result["models"]:
        table = Table(title=f"{summary['model']}: {summary_line(summary)}")
        for column in COLUMNS:
            table.add_column(column, justify="left" if column in ("request shape", "model") else "right")
        for shape, t in summary["shapes"].items():
            table.add_row(*row_cells(shape, t))
        out.print(table)
        for alt, a in summary["alternatives"].items():
            out.print(f"  {alt}: {break_even_sentence(summary['model'], alt, a)}")
        for shape, a in summary.get("provider_compaction", {}).items():
            out.print(f"  {provider_sentence(summary['model'], shape, a)}")


def show_study(result: dict[str, Any], *, plot: str | None = None, markdown_path: str | None = None,
               as_json: bool = False) -> None:
    """The cost command's output: the plot and the markdown file when asked (the markdown links the plot
    relative to itself), then JSON or the tables."""
    drawn = cost_plot(result, plot) if plot else None
    if markdown_path:
        link = markdown_image("", drawn, Path(markdown_path).parent)[4:-1] if drawn else None
        write_atomic(markdown_path, markdown(result, link))
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_study(result)
