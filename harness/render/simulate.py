"""A simulation for a reader: the compaction events and risks of one replay, or the reserve sweep."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.render.console import stderr, stdout
from harness.render.plots import sweep_plot
from harness.studies.simulate import RISK_KINDS, Simulation


def print_simulation(result: Simulation, console: Console) -> None:
    replay, config = result.replay, result.config
    console.print(f"[bold]{result.target}[/]: {result.messages} messages, {replay.sends} sends, policy "
                  f"{result.policy} ({config.mode}), window {config.context_window}, reserve {config.reserve_tokens}, "
                  f"estimator {result.estimator}; replayed in {result.elapsed_s:.3f} s")
    table = Table(title="compaction events")
    for column in ("#", "send", "head..tail", "turns", "steps", "one step", "before est/true",
                   "after est/true", "summary true (budget)", "source"):
        table.add_column(column, justify="right" if column not in ("source", "one step") else "left")
    for e in replay.events:
        table.add_row(str(e.number), str(e.send_index), f"{e.head_start}..{e.tail_start}", str(e.turns_kept),
                      str(e.steps_kept), "yes" if e.truncated_to_step else "", f"{e.tokens_before_est}/{e.tokens_before_true}",
                      f"{e.tokens_after_est}/{e.tokens_after_true}", summary_cell(e), e.source)
    console.print(table if replay.events else f"no compaction: the session never reaches the trigger under window "
                                              f"{config.context_window} (nothing here tests a summary)")
    if any(e.summarizer == "placeholder" for e in replay.events):
        console.print("summary: true (o200k) tokens of the placeholder, which fills its budget under chars/4; "
                      "the budget is in parentheses", markup=False)
    counts = replay.risk_counts()
    risks = Table(title="risks the policy leaves")
    risks.add_column("risk")
    risks.add_column("sends", justify="right")
    risks.add_column("first", justify="left")
    for kind, count in counts.items():
        first = next((r for r in replay.risks if r.kind == kind), None)
        risks.add_row(kind, str(count), f"@{first.send_index}: {first.detail}" if first else "")
    console.print(risks)


def summary_cell(event: Any) -> str:
    """The summary's true tokens beside its budget, so 8184 under a 4096 budget reads as what it is."""
    budget = getattr(event, "summary_budget_tokens", 0)
    return f"{event.summary_tokens} ({budget})" if budget else str(event.summary_tokens)


def print_sweep(name: str, rows: list[dict[str, Any]], skipped: list[dict[str, Any]], console: Console) -> None:
    table = Table(title=f"reserve sweep: {name}")
    for column in ("policy", "window", "reserve", "compactions", *RISK_KINDS):
        table.add_column(column.replace("_", " "), justify="right")  # spaces: a narrow terminal wraps, never cuts
    for row in rows:
        table.add_row(row["policy"], str(row["context_window"]), str(row["reserve_tokens"]),
                      str(row["compactions"]), *(str(row[k]) for k in RISK_KINDS))
    console.print(table)
    for row in skipped:
        console.print(f"skipped: window {row['context_window']} reserve {row['reserve_tokens']} ({row['reason']})",
                      markup=False)


def show_simulations(results: list[Simulation], *, as_json: bool = False) -> None:
    """One replay per policy: one JSON document (a list for several), or the tables of each."""
    if as_json:
        documents = [r.to_json() for r in results]
        print(json.dumps(documents[0] if len(documents) == 1 else documents, indent=2))
        return
    out = stdout()
    for result in results:
        print_simulation(result, out)


def show_sweep(name: str, rows: list[dict[str, Any]], skipped: list[dict[str, Any]] | None = None, *,
               plot: str | None = None, as_json: bool = False) -> None:
    """The sweep's plot when asked (its path on stderr), then JSON or the table; the skipped combinations
    (reserve >= window) are listed, never dropped."""
    skipped = skipped or []
    if plot:
        stderr().print(f"plot: {sweep_plot(rows, plot, f'reserve sweep: {name}')}")
    if as_json:
        print(json.dumps({"target": name, "sweep": rows, "skipped": skipped}, indent=2))
    else:
        print_sweep(name, rows, skipped, stdout())
