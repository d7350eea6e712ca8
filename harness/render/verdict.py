"""The same-model verdict for a reader: each run's report.md, the plots, verdict.json, verdict.md and the
terminal lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.render.console import stdout
from harness.render.cost import markdown as cost_markdown
from harness.render.format import dollars, percent
from harness.render.plots import cost_plot, retention_plot
from harness.render.run import write_markdown
from harness.studies.verdict import SummarizerValidation


def write_plots(out: Path, same: dict[str, Any], alt: dict[str, Any], study: dict[str, Any],
                alt_spec: str) -> dict[str, str]:
    paths = {"retention": retention_plot([("summarizer same", same), (f"summarizer {alt_spec}", alt)],
                                         out / "retention.png")}
    if study["models"] and study["models"][0]["compactions"]:
        paths["cost"] = cost_plot(study, out / "cost_by_shape.png")
    return {k: str(v) for k, v in paths.items()}


def markdown(result: dict[str, Any], study: dict[str, Any]) -> str:
    q, c = result["quality"], result["cost"]
    lines = [f"# Same-model summarizer: {result['model']} against {result['alt_model']}", "",
             f"**{result['verdict']}**", "",
             f"Cases: {', '.join(result['cases'])}.", "",
             "| | same | " + result["alt_model"] + " |", "| --- | --- | --- |",
             f"| {q['grade']} compacted, summary-testing probes | {percent(q['same_rate'])} | {percent(q['alt_rate'])} |",
             f"| cost per compaction ({c['source']}) | {dollars(c['same_usd_per_compaction'])} | "
             f"{dollars(c['alt_usd_per_compaction'])} |", "",
             f"Difference (alt - same) {100 * q['difference']:+.1f} points, 95% bootstrap interval "
             f"[{100 * q['ci95'][0]:+.1f}, {100 * q['ci95'][1]:+.1f}], exact McNemar p={q['p_value']:.4g} on "
             f"{q['shared_probes']} shared probes ({q['only_same']} pass only with same, {q['only_alt']} only with "
             f"the alternative).", ""]
    for name, m in result["measured_cost"].items():
        if "error" in m:
            lines.append(f"- measured cost, {name}: {m['error']}")
        elif m.get("totals"):
            lines.append(f"- measured cost, {name} ({'/'.join(m['sources'])}): "
                         f"{dollars(m['totals']['per_compaction_usd'])} per compaction over {m['compactions']} "
                         f"compactions, cache hit rate {percent(m['totals']['cache_hit_rate'])}")
    lines += ["", "Runs: " + ", ".join(f"[{k}]({Path(v).name}/report.md)" for k, v in result["runs"].items()), ""]
    for name, path in result["plots"].items():
        lines += [f"![{name}]({Path(path).name})", ""]
    lines += [cost_markdown(study).replace("# The cost", "## The cost", 1)]
    return "\n".join(lines)


def write_verdict(validation: SummarizerValidation, plots: bool = True) -> dict[str, Any]:
    """Each run's report.md, the plots (unless `plots` is false), verdict.json and verdict.md into the study's
    folder; returns the result with the plots it drew."""
    out, result = validation.out, validation.result
    for name, run in (("same", validation.same), ("alt", validation.alt)):
        write_markdown(run, out / name / "report.md")
    if plots:
        result = {**result, "plots": write_plots(out, validation.same, validation.alt, validation.cost_study,
                                                 result["alt_model"])}
    out.mkdir(parents=True, exist_ok=True)
    (out / "verdict.json").write_text(json.dumps({**result, "cost_study": validation.cost_study["models"]}, indent=2),
                                      encoding="utf-8")
    (out / "verdict.md").write_text(markdown(result, validation.cost_study), encoding="utf-8")
    return result


def show_verdict(validation: SummarizerValidation, *, as_json: bool = False) -> None:
    """The validate-summarizer command's output: the files, then JSON or the verdict lines."""
    result = write_verdict(validation)
    if as_json:
        print(json.dumps(result, indent=2))
        return
    q, out = result["quality"], stdout()
    out.print(f"{q['grade']} compacted over summary-testing probes: same {percent(q['same_rate'] or 0)}, {result['alt_model']} "
              f"{percent(q['alt_rate'] or 0)}; difference {100 * q['difference']:+.1f} points "
              f"[{100 * q['ci95'][0]:+.1f}, {100 * q['ci95'][1]:+.1f}], McNemar p={q['p_value']:.4g}")
    out.print(f"[bold]{result['verdict']}[/]")
    out.print(f"written: {validation.out}/verdict.md, verdict.json, "
              f"{', '.join(result['plots'].values()) or 'no plots'}")
