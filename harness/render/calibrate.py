"""`calibrate` for a reader: per transcript its fit and errors, per request recorded beside predicted."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from harness.render.console import stdout
from harness.render.format import percent


def _points(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f} points"


def _relative(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def errors_line(e: dict[str, Any]) -> str:
    return (f"{e['requests']} requests: median absolute error of the cache-read share "
            f"{_points(e['median_read_share_error'])} (mean {_points(e['mean_read_share_error'])}); first request "
            f"after each of {e['first_after_compactions']} compactions: cache write within "
            f"{_relative(e['median_first_after_write_error'])} in the median, read share "
            f"{_points(e['median_first_after_read_share_error'])}")


def request_table(run: dict[str, Any]) -> Table:
    table = Table(title=run["path"])
    for column in ("message", "ts", "recorded read", "predicted read", "error", "recorded write",
                   "predicted write", "after compaction"):
        table.add_column(column, justify="left" if column in ("ts",) else "right")
    for row in run["rows"]:
        r, p = row["recorded"], row["predicted"]
        table.add_row(str(row["message"]), row["ts"] or "-", percent(r["read_share"]), percent(p["read_share"]),
                      _points(row["read_share_error"]), str(r["cache_write"]), str(p["cache_write"]),
                      "yes" if row["after_compaction"] else "")
    return table


def transcript_line(run: dict[str, Any]) -> str:
    return (f"{run['path']} ({run['model']}, {run['compactions']} compactions): unseen runtime prefix "
            f"{run['hidden_prefix_tokens']} tokens, {run['scale']:.3f} recorded tokens per o200k token, TTL "
            f"{run['ttl']} ({run['ttl_source']}); {run['timing']}")


def show_calibration(result: dict[str, Any], *, as_json: bool = False, per_request: bool = True) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
        return
    out = stdout()
    out.print(f"{result['note']}; the runtime's compaction call: {result['compaction_call']}; thinking "
              f"{'kept' if result['thinking_in_context'] else 'left out'} in context")
    for run in result["transcripts"]:
        out.print(transcript_line(run))
        if per_request:
            out.print(request_table(run))
        out.print("  " + errors_line({**run, "first_after_compactions": len(run["first_after_compaction"])}))
    out.print("total, " + errors_line(result["total"]))
