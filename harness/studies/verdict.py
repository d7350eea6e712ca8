"""The same-model verdict (POLICY.md, open question 3): is the session's own model the right summarizer?

Runs the quality evaluation twice on the same cases, once with the summarizer `same` and once with the
cheaper model `A` (the session model answers the probes in both, so only the summarizer differs), puts the
quality difference and its significance (exact McNemar, bootstrap interval) beside the cost difference of
the cost study and the runs' own measured calls, and decides which choice the data supports (`decide`); the
sentence that says so quotes only the figures printed beside it (`figures`, each labelled live / recorded /
modelled), and each half names the data it rests on.

The alternative may be a reference control (`control:NAME`, harness.compaction.controls): the session model's
own summarizer with its summary replaced, a known difference that checks the command itself.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cases.schema import Case
from harness.errors import HarnessError
from harness.models import check_spec

if TYPE_CHECKING:
    from harness.studies.compare import RunObserver

ALPHA = 0.05
CONTROL_PREFIX = "control:"
RUNS = ("same", "alt")


def control_of(alt: str) -> str | None:
    """The reference control an `--alt-model control:NAME` names, or None for a model spec."""
    return alt.removeprefix(CONTROL_PREFIX) if alt.startswith(CONTROL_PREFIX) else None


def check_alternative(alt: str) -> None:
    from harness.compaction.controls import CONTROLS

    control = control_of(alt)
    if control is None:
        check_spec(alt)
    elif control not in CONTROLS:
        raise HarnessError(f"--alt-model {alt}: choose a model spec or control:NAME with NAME one of "
                           f"{', '.join(CONTROLS)}")


@dataclass(frozen=True)
class Plan:
    """How the two runs reach their models: where cassettes live and whether they may record; and the summary
    instruction both summarizers are given (None: the case's or the shipped one)."""

    record_mode: str
    cassettes: str
    instruction: str | None = None
    instruction_file: str | None = None


def default_plan(model: str, alt: str, out: Path, record_mode: str | None, cassettes: str | None) -> Plan:
    """Builtin needs nothing. Any API spec (emulated or real) records what it has not seen into the
    output folder's cassettes (`new`), so the command just works on the emulator, goes live once when keys
    are present, and replays on a second run; `--record-mode none --cassettes DIR` replays only."""
    specs = (model,) if control_of(alt) else (model, alt)
    needs_cassettes = any(check_spec(s).provider != "builtin" for s in specs)
    mode = record_mode or ("new" if needs_cassettes else "none")
    return Plan(mode, cassettes or str(out / "cassettes"))


def run_configs(model: str, alt: str, plan: Plan, prices: str | None) -> dict[str, Any]:
    """The two configurations: the session model summarizing, and the alternative (a cheaper summarizer, or
    the session model's summarizer under a reference control)."""
    from harness.run.config import RunConfig

    control = control_of(alt)
    common = {"model": model, "record_mode": plan.record_mode, "cassettes": plan.cassettes, "prices": prices,
              "instruction": plan.instruction, "instruction_file": plan.instruction_file}
    return {"same": RunConfig(summarizer="same", **common),
            "alt": RunConfig(summarizer="same", control=control, **common) if control
            else RunConfig(summarizer=alt, **common)}


def check_folder(out: Path, resume: bool) -> None:
    """A second study into the same folder continues it (--resume) or goes elsewhere (--out), never mixes."""
    held = [name for name in RUNS if (out / name / "run.json").exists()]
    if held and not resume:
        raise HarnessError(f"{out} already holds a validate-summarizer study ({' and '.join(held)} runs): pass "
                           f"--resume to continue it or --out for a new folder")


def run_pair(cases: list[Case], model: str, alt: str, out: Path, plan: Plan, prices: str | None,
             concurrency: int = 1, *, resume: bool = False,
             observer: RunObserver | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both runs, each written case by case into `out`/same and `out`/alt (so --resume continues them), with
    `observer` shown each run's progress and told when it is finished."""
    from harness.results.folder import RunFolder
    from harness.run.matrix import run_cases
    from harness.studies.compare import FinishedRun

    runs = []
    for name, config in run_configs(model, alt, plan, prices).items():
        folder, label = RunFolder(out / name), f"summarizer {'same' if name == 'same' else alt}"
        watching = observer.running(label, len(cases)) if observer else nullcontext(None)
        with watching as on_case:
            run = run_cases(cases, config, folder, run_id=f"validate-{name}", label=label, resume=resume,
                            concurrency=concurrency, on_case=on_case)
        if observer:
            observer.finished(FinishedRun(folder, run))
        runs.append(run)
    return runs[0], runs[1]


def quality_source(*runs: dict[str, Any]) -> str:
    """What the quality half rests on: `recorded` when every summary was replayed from a cassette, `live`
    when the summaries were written in this run (builtin, a real API, or `live (emulator)`), both when mixed."""
    sources = {"recorded" if s.get("latency_source") == "recorded" else "live"
               for run in runs for record in run["cases"].values() if record.get("status") == "ok"
               for s in record.get("summaries", [])}
    emulated = any(run["configuration"]["summarizer_spec"].endswith("@emulator") for run in runs)
    return "/".join(f"{s} (emulator)" if s == "live" and emulated else s for s in sorted(sources or {"live"}))


def quality(same: dict[str, Any], alt: dict[str, Any]) -> dict[str, Any]:
    from harness.studies.compare import comparison

    result = comparison([same, alt])
    pair = result["pairs"][0]
    # the rates quoted are the ones the pair's test is over: the probes that test the summary
    rates = {run["label"]: run["headline"]["tests_summary"] for run in result["runs"]}
    return {"grade": result["grade"], "same_rate": result["runs"][0]["headline"]["tests_summary"]["rate"],
            "alt_rate": result["runs"][1]["headline"]["tests_summary"]["rate"], "difference": pair["difference"],
            "ci95": pair["ci95"], "p_value": pair["p_value"], "shared_probes": pair["shared_probes"],
            "only_same": pair["only_a"], "only_alt": pair["only_b"],
            "significant": pair["p_value"] < ALPHA and pair["shared_probes"] > 0 and not pair.get("void"),
            "void": pair.get("void"), "rates": rates, "source": quality_source(same, alt)}


def cost_side(cases: list[Case], model: str, alt: str, prices: str | None) -> dict[str, Any]:
    """The modelled four shapes for the session model with `alt` as the cheaper one. A control has no cost of
    its own (the session model's summarizer sizes it), so its cost side is the session model's alone."""
    from harness.studies.costs import study

    control = control_of(alt)
    result = study(cases, [model], [] if control else [alt], prices)
    summary = result["models"][0]
    shapes = summary["shapes"]
    on, alt_shape = shapes.get("cache-on"), shapes.get(f"alt:{alt}")
    alternative = summary["alternatives"].get(alt, {})
    # the whole price of a compaction: the summarizer call and the first request after it (issue 16)
    return {"study": result, "compactions": summary["compactions"], "control": control,
            "same_usd_per_compaction": on["whole_per_compaction_usd"] if on else None,
            "alt_usd_per_compaction": alt_shape["whole_per_compaction_usd"] if alt_shape else None,
            "same_usd": on["whole_usd"] if on else 0.0, "alt_usd": alt_shape["whole_usd"] if alt_shape else 0.0,
            "cache_hit_rate": summary["cache_hit_rate"], "flip_hit_rate": alternative.get("flip_hit_rate"),
            "break_even_ratio": alternative.get("break_even_ratio_whole"),
            "price_ratio": alternative.get("price_ratio"),
            "source": result["source"]}


@dataclass(frozen=True)
class Decision:
    """Which summarizer the data supports and on what: `by` is `quality` (a significant difference),
    `cost` (the modelled cost study's order, quality not separating them or void), or `nothing` (no
    compaction and no quality difference, or a control that costs the same). `flip` names where the cost
    order would turn: none, same-always, alt-always or at (the rate in `flip_hit_rate`)."""

    choice: str  # same | alt
    by: str
    cheaper: str | None  # same | alt | None (equal or free)
    flip: str

    def to_json(self) -> dict[str, Any]:
        return {"choice": self.choice, "by": self.by, "cheaper": self.cheaper, "flip": self.flip}


def decide(q: dict[str, Any], c: dict[str, Any]) -> Decision:
    """The decision the verdict sentence states: quality first when it is significant and not void,
    otherwise the cheaper summarizer in the modelled cost study (the same model when nothing separates them)."""
    same_usd, alt_usd = c["same_usd"], c["alt_usd"]
    priced = bool(c["compactions"]) and not c.get("control") and not same_usd == alt_usd == 0
    cheaper = ("same" if same_usd <= alt_usd else "alt") if priced else None
    flip_rate = c.get("flip_hit_rate")
    flip = ("none" if flip_rate is None or not priced else "same-always" if flip_rate <= 0
            else "alt-always" if flip_rate > 1 else "at")
    if q["significant"] and not q.get("void"):
        return Decision("same" if q["difference"] < 0 else "alt", "quality", cheaper, flip)
    if cheaper is not None:
        return Decision(cheaper, "cost", cheaper, flip)
    return Decision("same", "nothing", cheaper, flip)


# ---------------------------------------------------------------------------------------------
# the figures beside the verdict, and the sentence drawn from them


@dataclass(frozen=True)
class Figure:
    """One line beside the verdict: what it measures, its value for the same model and the alternative (or
    one value for both), and where it comes from (live / recorded / modelled)."""

    label: str
    same: str
    alt: str | None
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "same": self.same, "alt": self.alt, "source": self.source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figure:
        return cls(data["label"], data["same"], data["alt"], data["source"])

    def line(self, alt_name: str) -> str:
        values = f"same {self.same}, {alt_name} {self.alt}" if self.alt is not None else self.same
        return f"{self.label} ({self.source}): {values}"


# The sentence quotes figures exactly as the lines beside it print them. Studies never import the renderer,
# so these two mirror harness.render.format's percent and dollars (tests/test_validate.py holds them equal).
def percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def dollars(value: float | None) -> str:
    return "-" if value is None else f"${value:.5f}"


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
    low, high = q.get("ci95") or (q["difference"], q["difference"])
    same_rate, alt_rate = (q.get("rates", {}).get(label) for label in ("summarizer same", f"summarizer {result['alt_model']}"))
    found = {
        "quality": Figure(f"{q['grade']} pass rate, compacted, over summary-testing probes", rate_text(same_rate),
                          rate_text(alt_rate), f"{q.get('source', '-')} runs"),
        "difference": Figure("difference (alt - same) on the probes testing the summary in both runs",
                             f"{points(q['difference'])} [{100 * low:+.1f}, {100 * high:+.1f}], exact McNemar "
                             f"{p_text(q['p_value'])} on {q['shared_probes']} probes ({q.get('only_same', 0)} pass "
                             f"only with same, {q.get('only_alt', 0)} only with the alternative)"
                             + (", void: the same underlying model" if q.get("void") else ""), None,
                             f"{q.get('source', '-')} runs"),
    }
    if c["compactions"]:
        found["cost_study"] = Figure("cost per compaction (the call and the first request after it), cost study, "
                                     "warm cache from the agent's own requests",
                                     cost_text(c["same_usd_per_compaction"], c["cache_hit_rate"]),
                                     dollars(c["alt_usd_per_compaction"]) if not c.get("control") else "-",
                                     c["source"])
    if c.get("flip_hit_rate") is not None and 0 < c["flip_hit_rate"] <= 1:
        found["flip"] = Figure("cost study: the cache hit rate where the cost order flips",
                               percent(c["flip_hit_rate"]), None, c["source"])
    measured = result.get("measured_cost") or {}
    if measured and all(m.get("totals") for m in measured.values()):
        found["measured"] = Figure(
            "cost per compaction, these runs' summarizer calls, cold cache (agent requests not replayed)",
            *(cost_text(measured[n]["totals"]["per_compaction_usd"], measured[n]["totals"]["cache_hit_rate"])
              for n in ("same", "alt")),
            "/".join(sorted({s for m in measured.values() for s in m["sources"]})) or "-")
    return found


def quality_clause(result: dict[str, Any], found: dict[str, Figure]) -> str:
    q, alt = result["quality"], result["alt_model"]
    rates = found["quality"]
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
    text = (f"the same model costs {study.same} against {study.alt} for {alt} per compaction in the cost study "
            f"({study.source}, warm cache)")
    flip = {"none": "no cache hit rate changes the cost order",
            "same-always": "the same model stays cheaper at any cache hit rate",
            "alt-always": f"{alt} stays cheaper at any cache hit rate"}.get(decision["flip"])
    text += f"; {flip}" if flip else f"; the order flips at {found['flip'].same} cache hit (the same model is " \
                                     f"cheaper above it)"
    measured = found.get("measured")
    runs = result.get("measured_cost") or {}
    if measured and runs["same"]["totals"]["usd"] != runs["alt"]["totals"]["usd"]:
        measured_cheaper = "same" if runs["same"]["totals"]["usd"] < runs["alt"]["totals"]["usd"] else "alt"
        if measured_cheaper != decision["cheaper"]:
            text += (f"; these runs' own calls ({measured.source}, cold cache) order them the other way, "
                     f"{measured.same} against {measured.alt}")
    return text


def verdict_sentence(model: str, alt: str, q: dict[str, Any], c: dict[str, Any],
                     measured: dict[str, Any] | None = None) -> str:
    """The verdict from the quality half `q`, the modelled cost study `c` and the runs' measured costs."""
    return sentence_of({"model": model, "alt_model": alt, "quality": q, "cost": c, "measured_cost": measured or {},
                        "decision": decide(q, c).to_json()})


def sentence_of(result: dict[str, Any], found: dict[str, Figure] | None = None) -> str:
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



@dataclass(frozen=True)
class SummarizerValidation:
    """The study's outcome: `result` is verdict.json's summary (its `plots` empty until they are drawn; its
    `verdict` sentence quotes only its `figures`); the two runs and the cost study are what the report files
    are drawn from."""

    result: dict[str, Any]
    same: dict[str, Any]
    alt: dict[str, Any]
    cost_study: dict[str, Any]
    out: Path


def validate_summarizer(cases: list[Case], model: str, alt: str, out: str | Path, *, record_mode: str | None = None,
                        cassettes: str | None = None, prices: str | None = None, concurrency: int = 1,
                        resume: bool = False, observer: RunObserver | None = None,
                        instruction: tuple[str, str] | None = None) -> SummarizerValidation:
    """Both runs (written to `out`/same and `out`/alt as each case finishes), the cost study, the decision."""
    if not cases:
        raise HarnessError("validate-summarizer: no cases to run")
    check_spec(model)
    check_alternative(alt)
    out = Path(out)
    check_folder(out, resume)
    plan = default_plan(model, alt, out, record_mode, cassettes)
    if instruction is not None:  # (text, file): one instruction for both runs
        plan = replace(plan, instruction=instruction[0], instruction_file=instruction[1])
    cost = cost_side(cases, model, alt, prices)  # an unknown price fails here, before any model call
    same, alternative = run_pair(cases, model, alt, out, plan, prices, concurrency, resume=resume,
                                 observer=observer)
    q = quality(same, alternative)
    result = {"model": model, "alt_model": alt, "control": control_of(alt), "cases": [c.id for c in cases],
              "record_mode": plan.record_mode,
              "cassettes": plan.cassettes if plan.record_mode != "none" or record_mode else None,
              "quality": q, "cost": {k: v for k, v in cost.items() if k != "study"},
              "measured_cost": measured_costs(same, alternative, prices),
              "decision": decide(q, cost).to_json(), "runs": {name: str(out / name) for name in RUNS},
              "plots": {}}
    found = figures(result)
    result = {**result, "figures": {k: f.to_json() for k, f in found.items()}, "verdict": sentence_of(result, found)}
    return SummarizerValidation(result, same, alternative, cost["study"], out)


def measured_costs(same: dict[str, Any], alt: dict[str, Any], prices: str | None) -> dict[str, Any]:
    """What each run's summarizer calls cost as measured (live, recorded, or the emulator's figures). The
    runs replay no agent requests, so these calls meet a cold cache; the cost study models the warm one."""
    from harness.studies.costs import measured

    out = {}
    for name, run in (("same", same), ("alt", alt)):
        try:
            out[name] = measured(run, prices)
        except HarnessError as exc:  # a custom server has no price: say so beside the modelled figures
            out[name] = {"error": str(exc)}
    return out
