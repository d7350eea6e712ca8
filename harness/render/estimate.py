"""Money by role for a reader: the estimate before a run (`run --estimate`, and the first lines of a live
run) and what the run spent after it (terminal and report.md), each figure with its source."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.render.format import dollars, percent

COLUMNS = ("role", "condition", "model", "requests", "input tokens", "cache read", "cache write", "output",
           "$ cache on", "$ cache off")


def _usd(value: float | None) -> str:
    return "n/a" if value is None else dollars(value, 2)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def estimate_rows(estimate: dict[str, Any]) -> list[list[str]]:
    return [[line["role"], line["condition"], line["spec"], str(line["requests"]), f"{line['input_tokens']:,}",
             f"{line['cache_read_tokens']:,}", f"{line['cache_write_tokens']:,}", f"{line['output_tokens']:,}",
             _usd(line["usd_cache_on"]), _usd(line["usd_cache_off"])] for line in estimate["lines"]]


def estimate_sentence(estimate: dict[str, Any]) -> str:
    not_sent = (f"; {estimate['not_sent']} answer requests not sent (their context exceeds the answerer's window)"
                if estimate["not_sent"] else "")
    return (f"{estimate['configuration']}: {estimate['requests']} requests, {_usd(estimate['usd_cache_on'])} with "
            f"the prompt cache on, {_usd(estimate['usd_cache_off'])} off (this run: cache "
            f"{'on' if estimate['cache'] else 'off'}); about {_minutes(estimate['wall_time_s'])} at concurrency "
            f"{estimate['concurrency']}{not_sent}; modelled (outputs at their budgets, an upper bound)")


def print_estimates(estimates: list[dict[str, Any]], console: Console) -> None:
    for estimate in estimates:
        table = Table(title=Text(f"estimate (modelled): {estimate['configuration']}"))
        for column in COLUMNS:
            table.add_column(column, justify="left" if column in ("role", "condition", "model") else "right")
        for row in estimate_rows(estimate):
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
        console.print(estimate_sentence(estimate), markup=False)


def spend_line(cost_by_role: dict[str, Any]) -> str | None:
    """The run's whole cost by role, in one line; None for a run written before roles were recorded."""
    if not cost_by_role:
        return None
    parts = [f"{role} {_usd(row['usd'])} ({row['calls']} calls, {row['input_tokens']:,} input tokens"
             f"{_cache_share(role, row)}; {row['source'] or 'no usage'})" for role, row in cost_by_role.items()]
    known = [row["usd"] for row in cost_by_role.values()]
    total = "n/a" if None in known else dollars(sum(known), 2)
    return f"cost by role: {total} in all; " + "; ".join(parts)


def _cache_share(role: str, row: dict[str, Any]) -> str:
    share = row.get("cache_read_share")
    if share is None or role == "summarizer" and not row["cached_input_tokens"]:
        return ""
    return f", {percent(share)} read from cache"


def markdown_spend(cost_by_role: dict[str, Any]) -> list[str]:
    if not cost_by_role:
        return []
    lines = ["### Cost by role", "", "| role | model | calls | input | cache read | cache write | output | $ | source |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for role, row in cost_by_role.items():
        lines.append(f"| {role} | {row['spec']} | {row['calls']} | {row['input_tokens']:,} | "
                     f"{row['cached_input_tokens']:,} ({percent(row['cache_read_share'] or 0)}) | "
                     f"{row['cache_write_tokens']:,} | {row['output_tokens']:,} | {_usd(row['usd'])} | "
                     f"{row['source'] or '-'} |")
    return lines + ["", "Sources: live (billed usage), recorded (a cassette), modelled (the emulator's cache "
                        "simulation), builtin (the offline model, free).", ""]


def ceiling_line(ceilings: dict[str, int] | None) -> str | None:
    """Which ceiling the probes had, and the requests not sent because they exceed the answerer's window."""
    if not ceilings:
        return None
    text = (f"ceiling: the full history for {ceilings.get('full', 0)} probes, the oracle for {ceilings.get('oracle', 0)} "
            f"(the full history exceeds the answerer's window)")
    if ceilings.get("not_sent"):
        text += f"; {ceilings['not_sent']} requests not sent: their context exceeds the answerer's window (graded failed)"
    return text
