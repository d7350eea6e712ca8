"""One case's timeline for report.html, written as SVG directly (no matplotlib round trip per case): true
tokens at every send, the window and window - reserve lines, each compaction as a drop from its size before
to its size after. The y-axis covers every point (sends, drops and the window), and the largest is labelled.
Text stays text; each drop's details are its tooltip and a row of the compactions table below it."""

from __future__ import annotations

from html import escape
from typing import Any

WIDTH, HEIGHT = 900, 250
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 22, 36  # plot margins: tick labels left and below, the max label above
LINE, WINDOW, RESERVE, DROP = "#2a7ab0", "#d1495b", "#b7791f", "#333"


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over `span`."""
    raw = max(span, 1) / ticks
    power = 10 ** (len(str(int(raw))) - 1)
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def tokens(value: float) -> str:
    """`212K`, `1.2M`, `900`: a tick or label in tokens."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    return f"{value / 1000:g}K" if value >= 1000 else f"{value:g}"


def timeline_svg(timeline: dict[str, Any], events: list[dict[str, Any]]) -> str:
    sends = timeline["sends"]
    window, reserve = timeline["context_window"], timeline["reserve_tokens"]
    xs = [s[0] for s in sends] + [e["send_index"] for e in events]
    x_low, x_high = min(xs), max(max(xs), min(xs) + 1)
    peak = max([s[2] for s in sends] + [e["tokens_before_true"] for e in events])
    step = nice_step(max(peak, window))
    y_high = step * (int(max(peak, window) * 1.04 // step) + 1)  # every point below the top tick, with headroom

    def x(value: float) -> float:
        return round(LEFT + (value - x_low) / (x_high - x_low) * (WIDTH - LEFT - RIGHT), 1)

    def y(value: float) -> float:
        return round(HEIGHT - BOTTOM - value / y_high * (HEIGHT - TOP - BOTTOM), 1)

    parts = [_axes(x_low, x_high, y_high, step, x, y),
             _hline(y(window), WINDOW, "6 4", f"window {window:,}", -3),
             _hline(y(window - reserve), RESERVE, "2 3", f"window - reserve {window - reserve:,}", 11),
             f'<polyline fill="none" stroke="{LINE}" stroke-width="1.3" points="'
             + " ".join(f"{x(s[0])},{y(s[2])}" for s in sends) + '"><title>true tokens per send</title></polyline>']
    parts += [_drop(e, x, y) for e in events]
    parts.append(_peak(sends, events, x, y))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
            f'font-family="system-ui, sans-serif" font-size="11" role="img" aria-label="timeline of true tokens per '
            f'send">' + "".join(parts) + "</svg>")


def _axes(x_low: int, x_high: int, y_high: float, step: float, x, y) -> str:
    out = [f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
           f'fill="#fff" stroke="#ccc"/>']
    value = 0.0
    while value <= y_high + 1e-9:
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value)}" y2="{y(value)}" stroke="#eee"/>'
                   f'<text x="{LEFT - 5}" y="{y(value) + 4}" text-anchor="end">{tokens(value)}</text>')
        value += step
    x_step = nice_step(x_high - x_low, 8)
    tick = x_step * -(-x_low // x_step)
    while tick <= x_high:
        out.append(f'<text x="{x(tick)}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle">{tick:g}</text>')
        tick += x_step
    out.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 4}" text-anchor="middle" fill="#555">message '
               f'index of the send</text><text x="12" y="{TOP + (HEIGHT - TOP - BOTTOM) / 2}" text-anchor="middle" '
               f'fill="#555" transform="rotate(-90 12 {TOP + (HEIGHT - TOP - BOTTOM) / 2})">tokens</text>')
    return "".join(out)


def _hline(at: float, colour: str, dash: str, label: str, offset: int) -> str:
    """A horizontal line labelled at its left end, above it (offset < 0) or below it: the window's label above,
    the trigger's below, so the two never overlap however close the lines are."""
    return (f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{at}" y2="{at}" stroke="{colour}" stroke-dasharray="{dash}"/>'
            f'<text x="{LEFT + 6}" y="{at + offset}" fill="{colour}">{escape(label)}</text>')


def _drop(event: dict[str, Any], x, y) -> str:
    """A compaction: a line from its size before to after, `#N` at its top, the details as its tooltip."""
    at, top = x(event["send_index"]), y(event["tokens_before_true"])
    details = (f"compaction #{event['number']} at send {event['send_index']}: {event['tokens_before_true']:,} -> "
               f"{event['tokens_after_true']:,} true tokens, head..tail {event['head_start']}..{event['tail_start']}, "
               f"summary {event['summary_tokens']:,} tokens")
    return (f'<g><title>{escape(details)}</title><line x1="{at}" x2="{at}" y1="{top}" '
            f'y2="{y(event["tokens_after_true"])}" stroke="{DROP}" stroke-width="1.5"/>'
            f'<text x="{at}" y="{top - 4}" text-anchor="middle" font-size="10">#{event["number"]}</text></g>')


def _peak(sends: list, events: list[dict[str, Any]], x, y) -> str:
    """The largest point (a send, or a context just before its compaction) marked, and labelled in the top
    margin, where no other label goes."""
    value, index, where = max([(s[2], s[0], f"send {s[0]}") for s in sends] + [
        (e["tokens_before_true"], e["send_index"], f"send {e['send_index']}, before compaction #{e['number']}")
        for e in events], key=lambda point: point[0])
    return (f'<circle cx="{x(index)}" cy="{y(value)}" r="3.5" fill="{WINDOW}"/><text x="{WIDTH - RIGHT}" y="{TOP - 7}" '
            f'text-anchor="end"><tspan fill="{WINDOW}">\u25cf</tspan> max {value:,} true tokens ({where})</text>')
