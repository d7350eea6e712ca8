"""The same-model verdict (POLICY.md, open question 3): is the session's own model the right summarizer?

Runs the quality evaluation twice on the same cases, once with the summarizer `same` and once with the
cheaper model `A` (the session model answers the probes in both, so only the summarizer differs), puts the
quality difference and its significance (exact McNemar, bootstrap interval) beside the cost difference of
the cost study, and says in one sentence which choice the data supports and at which cache hit rate the
cost side would flip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cases.schema import Case
from harness.errors import HarnessError
from harness.models import check_spec

ALPHA = 0.05


@dataclass(frozen=True)
class Plan:
    """How the two runs reach their models: where cassettes live and whether they may record."""

    record_mode: str
    cassettes: str


def default_plan(model: str, alt: str, out: Path, record_mode: str | None, cassettes: str | None) -> Plan:
    """Builtin needs nothing. Any API spec (emulated or real) records what it has not seen into the
    output folder's cassettes (`new`), so the command just works on the emulator, goes live once when keys
    are present, and replays on a second run; `--record-mode none --cassettes DIR` replays only."""
    needs_cassettes = any(check_spec(s).provider != "builtin" for s in (model, alt))
    mode = record_mode or ("new" if needs_cassettes else "none")
    return Plan(mode, cassettes or str(out / "cassettes"))


def run_pair(cases: list[Case], model: str, alt: str, out: Path, plan: Plan, prices: str | None,
             concurrency: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    from harness.results.folder import RunFolder
    from harness.run.config import RunConfig
    from harness.run.matrix import run_cases

    runs = []
    for name, summarizer in (("same", "same"), ("alt", alt)):
        config = RunConfig(model=model, summarizer=summarizer, record_mode=plan.record_mode,
                           cassettes=plan.cassettes, prices=prices)
        folder = RunFolder(out / name)
        run = run_cases(cases, config, folder, run_id=f"validate-{name}", label=f"summarizer {name}"
                        if name == "same" else f"summarizer {alt}", concurrency=concurrency)
        runs.append(run)
    return runs[0], runs[1]


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
            "void": pair.get("void"), "rates": rates}


def cost_side(cases: list[Case], model: str, alt: str, prices: str | None) -> dict[str, Any]:
    """The modelled four shapes for the session model with `alt` as the cheaper one."""
    from harness.studies.costs import study

    result = study(cases, [model], [alt], prices)
    summary = result["models"][0]
    shapes = summary["shapes"]
    on, alt_shape = shapes.get("cache-on"), shapes.get(f"alt:{alt}")
    alternative = summary["alternatives"].get(alt, {})
    return {"study": result, "compactions": summary["compactions"],
            "same_usd_per_compaction": on["per_compaction_usd"] if on else None,
            "alt_usd_per_compaction": alt_shape["per_compaction_usd"] if alt_shape else None,
            "same_usd": on["usd"] if on else 0.0, "alt_usd": alt_shape["usd"] if alt_shape else 0.0,
            "cache_hit_rate": summary["cache_hit_rate"], "flip_hit_rate": alternative.get("flip_hit_rate"),
            "break_even_ratio": alternative.get("break_even_ratio"), "price_ratio": alternative.get("price_ratio"),
            "source": result["source"]}


def verdict_sentence(model: str, alt: str, q: dict[str, Any], c: dict[str, Any]) -> str:
    """One sentence: which summarizer the data supports, and where the cost side would flip."""
    if q.get("void"):
        quality_text = f"no quality evidence either way ({q['void']})"
    elif q["significant"]:
        quality_text = (f"{alt} {'loses' if q['difference'] < 0 else 'gains'} {abs(100 * q['difference']):.1f} points "
                        f"of {q['grade']} pass rate over summary-testing probes (p={q['p_value']:.3g})")
    else:
        quality_text = (f"no significant quality difference ({100 * q['difference']:+.1f} points, p={q['p_value']:.3g}, "
                        f"{q['shared_probes']} summary-testing probes)")
    same_usd, alt_usd = c["same_usd"], c["alt_usd"]
    if not c["compactions"]:
        return (f"No case compacted, so cost cannot decide; on quality there is {quality_text}: "
                f"{'keep the same model' if not q['significant'] or q['difference'] < 0 else f'prefer {alt}'}.")
    if same_usd == 0 and alt_usd == 0:
        cost_text, cheaper = "both cost nothing (free models)", "same"
    else:
        cheaper = "same" if same_usd <= alt_usd else "alt"
        cost_text = (f"the same model costs ${c['same_usd_per_compaction']:.4f} per compaction at a "
                     f"{100 * (c['cache_hit_rate'] or 0):.0f}% cache hit rate against ${c['alt_usd_per_compaction']:.4f} "
                     f"for {alt} ({c['source']})")
    if q["significant"]:
        choice = "same" if q["difference"] < 0 else "alt"
    else:
        choice = cheaper
    flip = c["flip_hit_rate"]
    if flip is None or same_usd == alt_usd == 0:
        flip_text = "no cache hit rate changes the cost order"
    elif flip <= 0:
        flip_text = "the same model stays cheaper at any cache hit rate"
    elif flip > 1:
        flip_text = f"{alt} stays cheaper at any cache hit rate"
    else:
        flip_text = f"the cost side flips at a {100 * flip:.0f}% cache hit rate (the same model is cheaper above it)"
    name = f"the same-model summarizer ({model})" if choice == "same" else f"the cheaper summarizer {alt}"
    if q.get("void"):  # a void comparison supports nothing on quality: only the cost side can speak
        return f"Quality cannot decide: {quality_text}. On cost alone, {cost_text}; {flip_text}."
    return f"The data supports {name}: {quality_text}, and {cost_text}; {flip_text}."


@dataclass(frozen=True)
class SummarizerValidation:
    """The study's outcome: `result` is verdict.json's summary (its `plots` empty until they are drawn);
    the two runs and the cost study are what the report files are drawn from."""

    result: dict[str, Any]
    same: dict[str, Any]
    alt: dict[str, Any]
    cost_study: dict[str, Any]
    out: Path


def validate_summarizer(cases: list[Case], model: str, alt: str, out: str | Path, *, record_mode: str | None = None,
                        cassettes: str | None = None, prices: str | None = None,
                        concurrency: int = 1) -> SummarizerValidation:
    """Both runs (written to `out`/same and `out`/alt), the cost study, the verdict."""
    if not cases:
        raise HarnessError("validate-summarizer: no cases to run")
    check_spec(model)
    check_spec(alt)
    out = Path(out)
    plan = default_plan(model, alt, out, record_mode, cassettes)
    cost = cost_side(cases, model, alt, prices)  # an unknown price fails here, before any model call
    same, alternative = run_pair(cases, model, alt, out, plan, prices, concurrency)
    q = quality(same, alternative)
    result = {"model": model, "alt_model": alt, "cases": [c.id for c in cases], "record_mode": plan.record_mode,
              "cassettes": plan.cassettes if plan.record_mode != "none" or record_mode else None,
              "quality": q, "cost": {k: v for k, v in cost.items() if k != "study"},
              "measured_cost": measured_costs(same, alternative, prices),
              "verdict": verdict_sentence(model, alt, q, cost), "runs": {"same": str(out / "same"),
                                                                      "alt": str(out / "alt")},
              "plots": {}}
    return SummarizerValidation(result, same, alternative, cost["study"], out)


def measured_costs(same: dict[str, Any], alt: dict[str, Any], prices: str | None) -> dict[str, Any]:
    """What each run's summarizer calls cost as measured (live, recorded, or the emulator's figures)."""
    from harness.studies.costs import measured

    out = {}
    for name, run in (("same", same), ("alt", alt)):
        try:
            out[name] = measured(run, prices)
        except HarnessError as exc:  # a custom server has no price: say so beside the modelled figures
            out[name] = {"error": str(exc)}
    return out
