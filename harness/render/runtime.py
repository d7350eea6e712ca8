"""A real runtime's compactions in report.md and report.html: per compaction where it fired, the context before
and after it, the summary's size, and its price on the cost study's terms (harness.runtimes.price), cache on
and off; one row per case sums them. Empty for a run no runtime drove."""

from __future__ import annotations

from typing import Any

from harness.render.markup import Cell, num, paragraph, section, table

HEADERS = ("case", "compaction", "before message", "mid-turn", "context before", "context after",
           "call input (cached / new)", "summary tokens", "call $ on / off", "first request $ on / off",
           "whole $ on / off")


def _records(run: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(key, record["runtime"]) for key, record in sorted(run.get("cases", {}).items())
            if isinstance(record, dict) and record.get("runtime")]


def _usd(pair: dict[str, float] | None) -> str:
    return "-" if not pair else f"{pair['on']:.4f} / {pair['off']:.4f}"


def _row(case: str, entry: dict[str, Any]) -> list[str]:
    price = entry.get("price") or {}
    first = price.get("first_request") or {}
    call = (f"{price['input_tokens']} ({price['cached_tokens']} / {price['new_tokens']})" if price else "-")
    return [case, str(entry["number"]), str(entry["position"]), "yes" if entry.get("mid_turn") else "no",
            str(price.get("before_tokens", "-")), str(entry.get("after_tokens", "-")), call,
            str(price.get("output_tokens", "-")), _usd(price.get("call_usd")), _usd(first.get("usd")),
            _usd(price.get("whole_usd"))]


def _total(case: str, runtime: dict[str, Any]) -> list[str]:
    price = runtime["price"]
    call = f"{price['input_tokens']} ({price['cached_tokens']} / {price['new_tokens']})"
    return [case, f"all {price['compactions']}", "-", "-", "-", "-", call, str(price["output_tokens"]),
            _usd(price["call_usd"]), _usd(price["first_request_usd"]), _usd(price["whole_usd"])]


def rows(run: dict[str, Any]) -> list[list[str]]:
    out = []
    for case, runtime in _records(run):
        out += [_row(case, entry) for entry in runtime.get("compactions", [])]
        if runtime.get("price") and runtime["price"]["compactions"] > 1:
            out.append(_total(case, runtime))
    return out


def note(run: dict[str, Any]) -> str:
    records = _records(run)
    if not records:
        return ""
    first = records[0][1]
    price = first.get("price")
    priced = (f"Priced as {price['model']} ({price['cache_rule']}); tokens o200k; the first request after a "
              f"compaction is billed as input only." if price else "Not priced.")
    return (f"{first['runtime']} {first['version']}: where each of its own compactions fired (the first case message "
            f"it had not sent), its context before (the last turn request) and after (the first request after "
            f"it), in tokens. {priced}")


def markdown_runtime(run: dict[str, Any]) -> list[str]:
    table_rows = rows(run)
    if not _records(run):
        return []
    lines = ["### Runtime compactions", "", note(run), ""]
    if not table_rows:
        return lines + ["No compaction.", ""]
    lines += ["| " + " | ".join(HEADERS) + " |", "| " + " | ".join("---" for _ in HEADERS) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows]
    return lines + [""]


def runtime_section(run: dict[str, Any]) -> str:
    if not _records(run):
        return ""
    table_rows = [[num(int(c)) if c.isdigit() else Cell(c) for c in row] for row in rows(run)]
    return section("runtime", "Runtime compactions", paragraph(note(run)),
                   table(HEADERS, table_rows) if table_rows else paragraph("No compaction."))
