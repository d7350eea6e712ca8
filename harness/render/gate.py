"""A gate verdict for a reader: the terminal table, JUnit XML (one test case per probe) and a markdown
summary for a CI job page."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any, Mapping

from rich.console import Console
from rich.table import Table

from harness.atomic import write_atomic
from harness.render.console import stdout
from rich.text import Text

from harness.render.format import fixed, percent, wilson_rate
from harness.render.lost import LostProbe, lost_text
from harness.render.releases import markdown as release_lines
from harness.studies.gate import Verdict


def headline_text(verdict: Verdict) -> str:
    """The verdict's lead figure: the compacted rate over the probes that test the summary in both runs."""
    h = verdict.headline
    if not h.get("pairs"):
        return f"headline ({verdict.grade}): no probe tests the summary in both runs"
    source = ("both runs" if verdict.testing_in == "both" else
              "this run (the baseline predates summary-testing groups)")
    clustered = h["cluster95"]
    return (f"headline ({verdict.grade}, compacted, {h['pairs']} probes that test the summary in {source}, "
            f"{h['cases']} case{'' if h['cases'] == 1 else 's'}): {wilson_rate(h['a'])} -> {wilson_rate(h['b'])}, "
            f"now - baseline {h['difference']:+.3f} [{h['ci95'][0]:+.3f}, {h['ci95'][1]:+.3f}] per probe, "
            f"[{clustered[0]:+.3f}, {clustered[1]:+.3f}] by case, McNemar p={h['p_value']:.4f}")


def judged_text(verdict: Verdict) -> str | None:
    """Judged means (compacted, summary-testing probes) of the baseline and of now, when a judge ran."""
    if not verdict.judged:
        return None

    def mean(side: dict | None) -> str:
        return fixed(((side or {}).get("tests_summary") or {}).get("compacted"), 2)

    return (f"judged mean 0-5 (compacted, summary-testing probes): {mean(verdict.judged['baseline'])} -> "
            f"{mean(verdict.judged['now'])}")


def over_budget_text(verdict: Verdict) -> str | None:
    if not verdict.over_budget:
        return None
    return f"over budget: {verdict.over_budget} summaries were longer than their budget (graded cut to it)"


def junit_xml(verdict: Verdict, run_id: str, lost: Mapping[str, LostProbe] | None = None) -> str:
    """One test case per probe; a failing probe's body says what was asked, expected and answered (`lost`)."""
    lost = lost or {}
    suite = ET.Element("testsuite", name=f"compaction-harness {run_id}", tests=str(len(verdict.rows)),
                       failures=str(len(verdict.regressions) + (1 if verdict.failures else 0)),
                       errors=str(len(verdict.failed_requests)))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="headline", value=headline_text(verdict))
    for side, rate in (("baseline", verdict.headline.get("a")), ("now", verdict.headline.get("b"))):
        if rate and rate.get("rate") is not None:
            ET.SubElement(properties, "property", name=f"headline_{side}_rate", value=str(rate["rate"]))
    if judged_text(verdict):
        ET.SubElement(properties, "property", name="judged", value=judged_text(verdict) or "")
    regressed = set(verdict.regressions)
    for key, row in verdict.rows.items():
        case_id, _, probe_id = key.rpartition("/")
        case = ET.SubElement(suite, "testcase", classname=case_id, name=probe_id)
        details = lost_text(lost[key]) if key in lost else None
        if key in verdict.failed_requests:  # not measured: an error, neither a pass nor a fail
            ET.SubElement(case, "error", message=verdict.failed_requests[key])
        elif key in regressed:
            failure = ET.SubElement(case, "failure", message=f"{row['kind']} probe passed in the baseline and fails now")
            failure.text = details
        elif not row["valid"]:
            ET.SubElement(case, "skipped", message="invalid: fails on the full history")
        elif row["now"] is False:
            ET.SubElement(case, "system-out").text = "fails now and failed in the baseline" + (
                f"\n{details}" if details else "")
    for number, failure in enumerate(verdict.failures, start=1):
        case = ET.SubElement(suite, "testcase", classname="aggregates", name=f"threshold-{number}")
        ET.SubElement(case, "failure", message=failure)
    for key, text in verdict.failed_requests.items():
        if key not in verdict.rows:  # a case whose failed request cost no probe
            ET.SubElement(ET.SubElement(suite, "testcase", classname=key, name="case"), "error", message=text)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def markdown(verdict: Verdict, run_id: str, baseline_path: str) -> str:
    status = "FAIL" if verdict.exit_code else "PASS"
    s = verdict.stats
    lines = [f"## compaction-harness gate: {status}", "",
             f"**{headline_text(verdict)}**", "",
             f"Run `{run_id}` against `{baseline_path}` ({'deterministic' if verdict.deterministic else 'live'}, "
             f"grade `{verdict.grade}`): over all {s['pairs']} paired valid probes (where lost probes are checked), "
             f"pass rate {percent(s['baseline_rate'])} -> {percent(s['now_rate'])}, McNemar p={s['p_value']:.4f}.", ""]
    if judged_text(verdict):
        lines += [f"{judged_text(verdict)}.", ""]
    if over_budget_text(verdict):
        lines += [f"{over_budget_text(verdict)}.", ""]
    lines += [*(f"- {line}" for line in config_change_lines(verdict)), *([""] if verdict.config_changes else [])]
    lines += release_lines(verdict.release) if verdict.release else []
    for title, keys in (("Regressions", verdict.regressions), ("Improvements", verdict.improvements)):
        lines += [f"### {title} ({len(keys)})", ""]
        lines += [f"- `{k}` ({verdict.rows[k]['kind']})" for k in keys] or ["none"]
        lines.append("")
    if verdict.failures:
        lines += ["### Thresholds", "", *(f"- {f}" for f in verdict.failures), ""]
    if verdict.failed_requests:
        lines += [f"### Failed requests ({len(verdict.failed_requests)}, not measured)", "",
                  *(f"- `{k}`: {t}" for k, t in verdict.failed_requests.items()), ""]
    return "\n".join(lines)


def print_verdict(verdict: Verdict, console: Console) -> None:
    s = verdict.stats
    table = Table(title=f"gate ({'deterministic' if verdict.deterministic else 'live'}, grade {verdict.grade})")
    for column in ("probe", "kind", "baseline", "now", "change"):
        table.add_column(column)
    for key in verdict.regressions:
        row = verdict.rows[key]
        table.add_row(key, row["kind"], "pass", "fail", "[red]regression[/]")
    for key in verdict.improvements:
        row = verdict.rows[key]
        table.add_row(key, row["kind"], "fail", "pass", "[green]improvement[/]")
    if verdict.regressions or verdict.improvements:
        console.print(table)
    console.print(Text(headline_text(verdict), style="bold"))  # Text: the intervals' brackets are not markup
    console.print(f"all {s['pairs']} paired valid probes: {percent(s['baseline_rate'])} -> {percent(s['now_rate'])}, "
                  f"{len(verdict.regressions)} lost, {len(verdict.improvements)} gained, McNemar p={s['p_value']:.4f}")
    for line in (judged_text(verdict), over_budget_text(verdict)):
        if line:
            console.print(line, markup=False)
    for line in config_change_lines(verdict):
        console.print(line, markup=False)
    for line in release_lines(verdict.release) if verdict.release else ():
        console.print(line, markup=False, highlight=False)
    for failure in verdict.failures:
        console.print(Text("threshold", style="red") + Text(f": {failure}"))
    for key, text in verdict.failed_requests.items():
        console.print(Text("failed request", style="red") + Text(f": {key}: {text}"))
    console.print("[red]FAIL[/]" if verdict.exit_code else "[green]PASS[/]")


def show_gate(verdict: Verdict, run_id: str, baseline_path: str, *, junit: str | None = None,
              markdown_path: str | None = None, lost: Mapping[str, LostProbe] | None = None,
              as_json: bool = False) -> None:
    """The files asked for (JUnit XML, markdown), then the terminal verdict (or one JSON document)."""
    if junit:
        write_atomic(junit, junit_xml(verdict, run_id, lost))
    if markdown_path:
        write_atomic(markdown_path, markdown(verdict, run_id, baseline_path))
    if as_json:
        print(json.dumps({"run": run_id, "baseline": baseline_path, **verdict.to_json()}, indent=2))
    else:
        print_verdict(verdict, stdout())


def show_baseline(baseline: dict[str, Any], path: str, as_json: bool = False) -> None:
    grade = baseline["grade"]
    # never graded: the point comes after a compaction this policy never makes (failed requests are refused)
    unreached = sum(1 for probe in baseline["probes"].values() if probe.get(grade) is None)
    if as_json:
        print(json.dumps({"baseline": path, "run": baseline["run_id"], "probes": len(baseline["probes"]),
                          "unreached": unreached, "grade": grade, "cases": baseline["cases"]}, indent=2))
        return
    never = f", {unreached} at points this policy never reaches (not gated)" if unreached else ""
    stdout().print(f"baseline written: {path} ({len(baseline['probes'])} probes{never}, grade {grade})",
                   soft_wrap=True)  # one line, whatever the terminal's width


def config_change_lines(verdict: Verdict) -> list[str]:
    """The configuration differences the gate was allowed across (--allow-config-change)."""
    return [f"configuration changed since the baseline (--allow-config-change): {change}"
            for change in verdict.config_changes]
