"""The same-model verdict for a reader: the figures it rests on (each labelled live / recorded / modelled)
beside its sentence, each run's report.md, the plots, verdict.json, verdict.md, the terminal lines, and the
progress while the two runs go."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rich.text import Text

from harness.atomic import write_atomic
from harness.render.console import stdout
from harness.render.cost import markdown as cost_markdown
from harness.render.plots import cost_plot, retention_plot
from harness.render.run import RunProgress, write_markdown
from harness.studies.verdict import Figure, SummarizerValidation

if TYPE_CHECKING:
    from harness.studies.compare import FinishedRun


def shown(result: dict[str, Any]) -> dict[str, Figure]:
    """The figures printed beside the verdict, as the study wrote them (its sentence quotes only these)."""
    return {key: Figure.from_json(f) for key, f in result["figures"].items()}


def write_plots(out: Path, same: dict[str, Any], alt: dict[str, Any], study: dict[str, Any],
                alt_spec: str) -> dict[str, str]:
    paths = {"retention": retention_plot([("summarizer same", same), (f"summarizer {alt_spec}", alt)],
                                         out / "retention.png")}
    if study["models"] and study["models"][0]["compactions"]:
        paths["cost"] = cost_plot(study, out / "cost_by_shape.png")
    return {k: str(v) for k, v in paths.items()}


def markdown(result: dict[str, Any], study: dict[str, Any]) -> str:
    found = shown(result)
    lines = [f"# Same-model summarizer: {result['model']} against {result['alt_model']}", "",
             f"**{result['verdict']}**", "",
             f"Cases: {', '.join(result['cases'])}.", "",
             f"| figure | data | same | {result['alt_model']} |", "| --- | --- | --- | --- |",
             *(f"| {f.label} | {f.source} | {f.same} | {'' if f.alt is None else f.alt} |" for f in found.values()),
             ""]
    for name, m in result["measured_cost"].items():
        if "error" in m:
            lines.append(f"- measured cost, {name}: {m['error']}")
    lines += ["", "Runs: " + ", ".join(f"[{k}]({Path(v).name}/report.md)" for k, v in result["runs"].items()), ""]
    for name, path in result["plots"].items():
        lines += [f"![{name}]({Path(path).name})", ""]
    lines += [cost_markdown(study).replace("# The cost", "## The cost", 1)]
    return "\n".join(lines)


def write_verdict(validation: SummarizerValidation, plots: bool = True) -> dict[str, Any]:
    """Each run's report.md, the plots (unless `plots` is false), verdict.json and verdict.md into the study's
    folder; returns the result with its verdict sentence and the plots it drew."""
    out, result = validation.out, validation.result
    for name, run in (("same", validation.same), ("alt", validation.alt)):
        write_markdown(run, out / name / "report.md")
    if plots:
        result = {**result, "plots": write_plots(out, validation.same, validation.alt, validation.cost_study,
                                                 result["alt_model"])}
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "verdict.json", json.dumps({**result, "cost_study": validation.cost_study["models"]}, indent=2))
    write_atomic(out / "verdict.md", markdown(result, validation.cost_study))
    return result


def show_verdict(validation: SummarizerValidation, *, as_json: bool = False) -> None:
    """The validate-summarizer command's output: the files, then JSON or the figures and the verdict."""
    result = write_verdict(validation)
    if as_json:
        print(json.dumps(result, indent=2))
        return
    out = stdout()
    for figure in shown(result).values():
        out.print(figure.line(result["alt_model"]), markup=False)
    out.print(Text(result["verdict"], style="bold"))  # Text: brackets in a reason are not markup
    out.print(f"written: {validation.out}/verdict.md, verdict.json, "
              f"{', '.join(result['plots'].values()) or 'no plots'}")


@dataclass(frozen=True)
class VerdictProgress:
    """Watches the two runs (harness.studies.compare.RunObserver): run's progress bar on stderr while each
    goes, then one line naming the finished run's folder (the verdict's own lines come after both)."""

    as_json: bool = False

    def running(self, label: str | None, total: int) -> AbstractContextManager[Callable[[dict[str, Any]], None]]:
        return RunProgress(as_json=self.as_json).running(label, total)

    def finished(self, finished: FinishedRun) -> None:
        if not self.as_json:
            stdout().print(f"{finished.run.get('label')}: {finished.run['aggregates']['cases_ok']} cases written "
                           f"to {finished.folder.path}", markup=False)
