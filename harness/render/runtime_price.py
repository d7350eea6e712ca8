"""What each of a runtime's compactions cost on the cost study's terms (harness.runtimes.price, run.json's
`price` per compaction and per case): its summarization call split into what a prompt cache reads and what is
new, its summary, the first request after it; dollars with the cache on and off."""

from __future__ import annotations

from typing import Any

from harness.render.markup import Cell, num, paragraph, table

HEADERS = ("#", "context before", "call input (cached / new)", "shared with the previous turn (prefix / without tools)",
           "summary tokens", "call $ on / off", "first request after: tokens (cached), $ on / off",
           "whole $ on / off")


def _usd(pair: dict[str, float] | None) -> str:
    return "-" if not pair else f"{pair['on']:.4f} / {pair['off']:.4f}"


def _row(compaction: dict[str, Any]) -> list[str]:
    p = compaction["price"]
    first = p.get("first_request")
    after = f"{first['input_tokens']} ({first['cached_tokens']}), {_usd(first['usd'])}" if first else "-"
    return [str(compaction["number"]), str(p["before_tokens"]), f"{p['input_tokens']} ({p['cached_tokens']} / "
            f"{p['new_tokens']})", f"{p['shared_prefix_tokens']} / {p.get('shared_history_tokens', '-')}",
            str(p["output_tokens"]), _usd(p["call_usd"]), after, _usd(p["whole_usd"])]


def price_line(drive: dict[str, Any]) -> str:
    total = drive["price"]
    return (f"Priced as {total['model']} ({total['price_row']} rates; {total['cache_rule']}; o200k tokens): "
            f"{total['compactions']} compaction(s), calls {total['input_tokens']} input tokens of which "
            f"{total['cached_tokens']} cached, {total['output_tokens']} summary tokens; whole price "
            f"${total['whole_usd']['on']:.4f} cache on, ${total['whole_usd']['off']:.4f} off")


def markdown_price(drive: dict[str, Any]) -> list[str]:
    priced = [c for c in drive.get("compactions", []) if c.get("price")]
    if not drive.get("price") or not priced:
        return []
    return [f"{price_line(drive)}.", "", "| " + " | ".join(HEADERS) + " |", "|" + " --- |" * len(HEADERS),
            *("| " + " | ".join(_row(c)) + " |" for c in priced), ""]


def price_html(drive: dict[str, Any]) -> str:
    priced = [c for c in drive.get("compactions", []) if c.get("price")]
    if not drive.get("price") or not priced:
        return ""
    rows = [[num(int(v)) if v.isdigit() else Cell(v) for v in _row(c)] for c in priced]
    return paragraph(f"{price_line(drive)}.") + table(HEADERS, rows)
