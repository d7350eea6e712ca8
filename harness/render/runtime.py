"""A real runtime's drive in the reports (run.json's per-case `runtime`, harness.runtimes.record): how far it got,
each compaction it made (when, its prompt, what it kept, the summary's size, the checks only a running runtime
shows), and how it stopped if it did. The summaries themselves and the graded probes are the run's own sections."""

from __future__ import annotations

from html import escape
from typing import Any

from harness.render.markup import Cell, num, paragraph, section, table
from harness.render.runtime_faults import faults_html, markdown_faults
from harness.render.runtime_price import markdown_price, price_html
from harness.render.runtime_replay import markdown_replay, replay_html

HEADERS = ("#", "before message", "mid-turn", "steps before", "request tokens", "history", "kept ahead",
           "tail from", "summary chars", "tokens after", "checks")
CHECKS = ("well_formed", "under_trigger", "resumed", "user_kept")


def drives(run: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(case, record["runtime"]) for case, record in run["cases"].items() if record.get("runtime")]


def _checks(compaction: dict[str, Any]) -> str:
    """The checks that ran, `ok` when all held, else the ones that failed."""
    ran = {name: compaction.get(name) for name in CHECKS if compaction.get(name) is not None}
    if compaction.get("canary_in_summary") is not None:  # --canary: the summary must not carry it
        ran["canary_kept_out"] = not compaction["canary_in_summary"]
    canary = {True: "; canary in its request", False: "; canary not in its request"}.get(
        compaction.get("canary_in_request"), "")
    if not ran:
        return "no request after it" + canary
    failed = [name for name, held in ran.items() if not held]
    return ("ok" if not failed else "FAILED: " + ", ".join(failed)) + canary


def _row(c: dict[str, Any]) -> list[str]:
    request = c.get("request") or {}
    return [str(c["number"]), str(c["position"]), "yes" if c["mid_turn"] else "no", str(c["steps_before"]),
            str(request.get("tokens", "-")), str(request.get("history", "-")), str(c["kept_ahead"]), str(c["covers"]),
            str(c["summary_chars"]), str(c.get("after_tokens", "-")), _checks(c)]


def status(drive: dict[str, Any]) -> str:
    got = (f"{drive['runtime']} {drive['version']}: {drive['steps_used']} of {drive['steps']} steps in "
           f"{drive['seconds']} s, {len(drive['compactions'])} compaction(s) "
           f"({drive['compactions_per_turn']} per turn), requests {drive['requests']}")
    cpu = drive.get("cpu_seconds")
    if cpu:
        got += f"; CPU s: harness {cpu['harness']}, runtime {cpu['runtime']}"
    window = drive.get("window")
    if window and window.get("recorded_position") is not None:
        got += (f"; window {window['window']:,} (--window recorded: its context before message "
                f"{window['recorded_position']}, where the session compacted, was {window['context_at_point']:,} "
                f"tokens; rule {window['rule']})")
    if drive.get("stopped"):
        got += f"; STOPPED before case message {drive['stopped_position']}: {drive['stopped'].rstrip('.')}"
    if drive.get("probes_lost_to_cuts"):
        got += f"; probes lost to its own output cuts: {', '.join(drive['probes_lost_to_cuts'])}"
    return got


REASON_CHARS = 300  # a stop's reason on the terminal (the whole of it is in report.md and run.json)


def stops(run: dict[str, Any]) -> dict[str, str]:
    """Per case whose runtime stopped before its last step: one line with the runtime, where it stopped, its
    reason and where to look next. Such a case may never compact, and then the stop, not the window, is why."""
    out = {}
    for case, drive in drives(run):
        reason = drive.get("failure") or drive.get("stopped")
        if not reason:
            continue
        fault = (drive.get("faults") or {}).get("summary_fault")
        reason = " ".join(reason.split())
        short = reason if len(reason) <= REASON_CHARS else reason[:REASON_CHARS - 1] + "…"
        where = f"runtime-logs/{case}/requests.jsonl in the run folder"
        follow = (f"report.md's runtime section grades how it met the fault (retries, surfaced, no hang), and {where} "
                  f"holds its last requests" if fault else
                  f"{where} holds its last requests and report.md's runtime section its compactions; the probes past "
                  f"the stop are graded failed")
        out[case] = (f"runtime {drive['runtime']} {drive['version']} stopped on {case} after {drive['steps_used']} of "
                     f"{drive['steps']} steps" + (f", under --summary-fault {fault}" if fault else "") +
                     f": {short}. Next: {follow}")
    return out


def markdown_runtime(run: dict[str, Any]) -> list[str]:
    found = drives(run)
    if not found:
        return []
    lines = ["### Runtime compactions", ""]
    for case, drive in found:
        lines += [f"**{case}**: {status(drive)}.", "", *markdown_replay(case, drive)]
        if drive["compactions"]:
            lines += ["| " + " | ".join(HEADERS) + " |", "|" + " --- |" * len(HEADERS)]
            lines += ["| " + " | ".join(_row(c)) + " |" for c in drive["compactions"]]
            lines += ["", *_prompts_markdown(drive["compactions"][0]), ""]
            lines += markdown_price(drive)
    return lines + markdown_faults(run)


def _prompts_markdown(first: dict[str, Any]) -> list[str]:
    request = first.get("request") or {}
    heads = [(name, request.get(key)) for name, key in (("system", "system"), ("last user message", "last_user"))]
    return [f"Its summarization prompt ({name}): `{' '.join(text.split())[:300]}`" for name, text in heads if text]


def runtime_section(run: dict[str, Any]) -> str:
    found = drives(run)
    if not found:
        return ""
    parts = []
    for case, drive in found:
        parts.append(paragraph(f"{case}: {status(drive)}.", "fail" if drive.get("stopped") else ""))
        parts.append(replay_html(case, drive))
        if drive["compactions"]:
            rows = [[num(v) if i and v.isdigit() else Cell(v) for i, v in enumerate(_row(c))]
                    for c in drive["compactions"]]
            parts.append(table(HEADERS, rows))
            request = drive["compactions"][0].get("request") or {}
            prompt = "\n\n".join(t for t in (request.get("system"), request.get("last_user")) if t)
            if prompt:
                parts.append(f"<details><summary>its summarization prompt (heads)</summary><pre>{escape(prompt)}"
                             f"</pre></details>")
            parts.append(price_html(drive))
    return section("runtime", "Runtime compactions", *parts, faults_html(run))


__all__ = ["markdown_runtime", "runtime_section", "stops"]
