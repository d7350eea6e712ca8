"""A runtime's release change (studies/releases.py) as markdown lines, for gate's and compare's reports."""

from __future__ import annotations

from typing import Any


def markdown(change: dict[str, Any]) -> list[str]:
    """The release change as markdown lines (gate's and compare's reports)."""
    head = change["runtime"]
    lines = [f"### Runtime release: {head['before']} -> {head['after']}", "",
             f"- probes lost: {', '.join(f'`{k}`' for k in change['lost']) or 'none'}",
             f"- probes gained: {', '.join(f'`{k}`' for k in change['gained']) or 'none'}", ""]
    for case, found in change["cases"].items():
        points, kept = found["compacts_before"], found["kept"]
        lines.append(f"**{case}**: compacts before {_list(points['before'])} -> {_list(points['after'])}; kept "
                     f"(ahead, tail from) {_kept(kept['before'])} -> {_kept(kept['after'])}")
        diff = found["prompt_diff"]
        lines += ["", "summarization prompt: unchanged" if not diff else "summarization prompt diff:", ""]
        if diff:
            lines += ["```diff", *diff, "```", ""]
    return lines


def _list(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values) if values else "none"


def _kept(values: list[dict[str, Any]]) -> str:
    return "; ".join(f"{v['ahead']}, {v['tail_from']}" for v in values) if values else "none"
