"""The same-model verdict for a reader: the figures it rests on (each labelled live / recorded / modelled),
the one sentence drawn from exactly those figures, each run's report.md, the plots, verdict.json, verdict.md,
the terminal lines, and the progress while the two runs go."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rich.text import Text

from harness.render.console import stdout
from harness.render.cost import markdown as cost_markdown
from harness.render.format import dollars, percent
from harness.render.plots import cost_plot, retention_plot
from harness.render.run import RunProgress, write_markdown
from harness.studies.verdict import SummarizerValidation

if TYPE_CHECKING:
    from harness.studies.compare import FinishedRun


@dataclass(frozen=True)
class Figure:
    """One line beside the verdict: what it measures, its value for the same model and the alternative (or
    one value for both), and where it comes from (live / recorded / modelled)."""

    label: str
    same: str
    alt: str | None
    source: str

    def line(self, alt_name: str) -> str:
        values = f"same {self.same}, {alt_name} {self.alt}" if self.alt is not None else self.same
        return f"{self.label} ({self.source}): {values}"


def p_text(p: float) -> str:
    """The comparison rounds p to six places: a zero there is below 0.000001, not zero."""
    return f"p={p:.3g}" if p > 0 else "p<0.000001"


def points(share: float) -> str:
    return f"{100 * share:+.1f} points"


def rate_text(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("rate") is None:
        return "-"
    return f"{percent(rate['rate'])} ({rate['passed']}/{rate['total']})"


def cost_text(usd: float | None, hit: float | None) -> str:
    return f"{dollars(usd)} at {percent(hit or 0)} cache hit"


def figures(result: dict[str, Any]) -> dict[str, Figure]:
    """Every figure the sentence may quote, keyed by what it is: quality over summary-testing probes, the
    paired difference, the modelled cost study (warm cache), where its order flips, and the runs' own calls."""
    q, c = result["quality"], result["cost"]
    same_rate, alt_rate = (q["rates"].get(label) for label in ("summarizer same", f"summarizer {result['alt_model']}"))
    found = {
        "quality": Figure(f"{q['grade']} pass rate, compacted, over summary-testing probes", rate_text(same_rate),
                          rate_text(alt_rate), f"{q['source']} runs"),
        "difference": Figure("difference (alt - same) on the probes testing the summary in both runs",
                             f"{points(q['difference'])} [{100 * q['ci95'][0]:+.1f}, {100 * q['ci95'][1]:+.1f}], exact "
                             f"McNemar {p_text(q['p_value'])} on {q['shared_probes']} probes ({q['only_same']} pass "
                             f"only with same, {q['only_alt']} only with the alternative)"
                             + (", void: the same underlying model" if q.get("void") else ""), None,
                             f"{q['source']} runs"),
    }
    if c["compactions"]:
        found["cost_study"] = Figure("cost per compaction, cost study, warm cache from the agent's own requests",
                                     cost_text(c["same_usd_per_compaction"], c["cache_hit_rate"]),
                                     dollars(c["alt_usd_per_compaction"]) if not c.get("control") else "-",
                                     c["source"])
    if c.get("flip_hit_rate") is not None and 0 < c["flip_hit_rate"] <= 1:
        found["flip"] = Figure("cost study: the cache hit rate where the cost order flips",
                               percent(c["flip_hit_rate"]), None, c["source"])
    measured = result["measured_cost"]
    if all(m.get("totals") for m in measured.values()):
        found["measured"] = Figure(
            "cost per compaction, these runs' summarizer calls, cold cache (agent requests not replayed)",
            *(cost_text(measured[n]["totals"]["per_compaction_usd"], measured[n]["totals"]["cache_hit_rate"])
              for n in ("same", "alt")),
            "/".join(sorted({s for m in measured.values() for s in m["sources"]})) or "-")
    return found


def quality_clause(result: dict[str, Any], found: dict[str, Figure]) -> str:
    q, alt = result["quality"], result["alt_model"]
    rates, difference = found["quality"], found["difference"]
    basis = f"{q['grade']} pass rate over summary-testing probes, {rates.source}"
    if q.get("void"):
        return f"no quality evidence either way ({q['void']})"
    if q["significant"]:
        return (f"{alt} {'loses' if q['difference'] < 0 else 'gains'} {abs(100 * q['difference']):.1f} points "
                f"({rates.same} against {rates.alt}, {basis}; McNemar {p_text(q['p_value'])})")
    return (f"no significant quality difference ({points(q['difference'])}, {p_text(q['p_value'])} on "
            f"{q['shared_probes']} probes; {rates.same} against {rates.alt}, {basis})")


def cost_clause(result: dict[str, Any], found: dict[str, Figure]) -> str:
    """The cost half, naming its data: the modelled cost study; the runs' own cold-cache calls are named
    beside it when they order the two the other way."""
    c, decision, alt = result["cost"], result["decision"], result["alt_model"]
    if c.get("control"):
        return (f"cost cannot decide ({alt} is the session model's own summarizer call with its summary "
                f"replaced, so it costs the same)")
    study = found.get("cost_study")
    if study is None:
        return "cost cannot decide (no case compacted)"
    if decision["cheaper"] is None:
        return f"both cost nothing in the cost study ({study.source}: free models)"
    text = (f"in the cost study ({study.source}, warm cache) the same model costs {study.same} against "
            f"{study.alt} for {alt} per compaction")
    flip = {"none": "no cache hit rate changes the cost order",
            "same-always": "the same model stays cheaper at any cache hit rate",
            "alt-always": f"{alt} stays cheaper at any cache hit rate"}.get(decision["flip"])
    text += f"; {flip}" if flip else f"; the order flips at {found['flip'].same} cache hit (the same model is " \
                                     f"cheaper above it)"
    measured = found.get("measured")
    runs = result["measured_cost"]
    if measured and runs["same"]["totals"]["usd"] != runs["alt"]["totals"]["usd"]:
        measured_cheaper = "same" if runs["same"]["totals"]["usd"] < runs["alt"]["totals"]["usd"] else "alt"
        if measured_cheaper != decision["cheaper"]:
            text += (f"; these runs' own calls ({measured.source}, cold cache) order them the other way, "
                     f"{measured.same} against {measured.alt}")
    return text


def verdict_sentence(result: dict[str, Any], found: dict[str, Figure] | None = None) -> str:
    """The verdict, quoting only figures in `found` (the lines printed beside it), each half naming its data."""
    found = found if found is not None else figures(result)
    decision, model, alt = result["decision"], result["model"], result["alt_model"]
    quality, cost = quality_clause(result, found), cost_clause(result, found)
    if result["quality"].get("void"):  # a void comparison supports nothing on quality: only cost can speak
        return f"Quality cannot decide: {quality}. On cost alone, {cost}."
    name = f"the same-model summarizer ({model})" if decision["choice"] == "same" else f"the cheaper summarizer {alt}"
    if decision["by"] == "nothing":
        return f"Nothing separates them, so keep {name}: {quality}; {cost}."
    return f"The data supports {name} on {decision['by']}: {quality}; {cost}."


def write_plots(out: Path, same: dict[str, Any], alt: dict[str, Any], study: dict[str, Any],
                alt_spec: str) -> dict[str, str]:
    paths = {"retention": retention_plot([("summarizer same", same), (f"summarizer {alt_spec}", alt)],
                                         out / "retention.png")}
    if study["models"] and study["models"][0]["compactions"]:
        paths["cost"] = cost_plot(study, out / "cost_by_shape.png")
    return {k: str(v) for k, v in paths.items()}


def markdown(result: dict[str, Any], study: dict[str, Any]) -> str:
    found = figures(result)
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
    result = {**result, "verdict": verdict_sentence(result)}
    if plots:
        result = {**result, "plots": write_plots(out, validation.same, validation.alt, validation.cost_study,
                                                 result["alt_model"])}
    out.mkdir(parents=True, exist_ok=True)
    (out / "verdict.json").write_text(json.dumps({**result, "cost_study": validation.cost_study["models"]}, indent=2),
                                      encoding="utf-8")
    (out / "verdict.md").write_text(markdown(result, validation.cost_study), encoding="utf-8")
    return result


def show_verdict(validation: SummarizerValidation, *, as_json: bool = False) -> None:
    """The validate-summarizer command's output: the files, then JSON or the figures and the verdict."""
    result = write_verdict(validation)
    if as_json:
        print(json.dumps(result, indent=2))
        return
    out = stdout()
    for figure in figures(result).values():
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
