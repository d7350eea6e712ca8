"""A summarizer's margin over its strongest control: over the probes both were graded on, the control with the
most passes (overall, and per kind the strongest there), the summarizer's passes minus the control's with the
exact McNemar p on the discordant probes and the case-clustered 95% interval of the difference; and every kind
where some control cannot be told from the summarizer (p at or above SEPARATES)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping

from harness.metrics import mcnemar_exact
from harness.studies.gate import paired_headline

SEPARATES = 0.01  # the instrument separates a summarizer from a control when McNemar p is below this


def margin(ours: Mapping[str, bool], controls: Mapping[str, Mapping[str, bool]], kinds: Mapping[str, str]) -> dict[str, Any]:
    """`ours`: probe key (`case/...`, clustered by the part before the last `/`) -> pass; `controls`: name ->
    the same; `kinds`: probe key -> kind. Keys missing from a control are left out of its comparison."""
    if not controls:
        return {}
    by_kind: dict[str, list[str]] = defaultdict(list)
    for key in ours:
        by_kind[kinds[key]].append(key)
    unseparated = {}
    for kind, keys in sorted(by_kind.items()):
        close = [name for name in controls if _p_value(ours, controls[name], keys) >= SEPARATES]
        if close:
            unseparated[kind] = close
    return {"overall": _over_strongest(ours, controls, list(ours)),
            "by_kind": {kind: _over_strongest(ours, controls, keys) for kind, keys in sorted(by_kind.items())},
            "unseparated_kinds": unseparated, "separates_below": SEPARATES}


def _over_strongest(ours: Mapping[str, bool], controls: Mapping[str, Mapping[str, bool]],
                    keys: list[str]) -> dict[str, Any]:
    strongest = max(controls, key=lambda name: (sum(bool(controls[name].get(k)) for k in keys), name))
    found = _versus(ours, controls[strongest], keys)
    return {"control": strongest, "probes": found["pairs"], "summarizer": found["b"]["passed"],
            "control_passes": found["a"]["passed"], "margin": found["b"]["passed"] - found["a"]["passed"],
            "only_summarizer": found["only_b"], "only_control": found["only_a"], "p_value": found["p_value"],
            "difference": found["difference"], "cluster95": found["cluster95"],
            "separated": found["p_value"] < SEPARATES}


def _exact(found: dict[str, Any]) -> dict[str, Any]:
    """paired_headline rounds p to 6 places; a margin states it exactly (3 significant digits)."""
    return {**found, "p_value": _stated(found["only_a"], found["only_b"])}


def _stated(only_a: int, only_b: int) -> float:
    return float(f"{mcnemar_exact(only_a, only_b):.3g}")


def _p_value(ours: Mapping[str, bool], theirs: Mapping[str, bool], keys: list[str]) -> float:
    """`_versus`'s p alone: the discordant pairs without the two bootstraps a whole comparison resamples."""
    pairs = [(bool(theirs[k]), bool(ours[k])) for k in keys if k in theirs]
    return _stated(sum(1 for a, b in pairs if a and not b), sum(1 for a, b in pairs if b and not a))


def _versus(ours: Mapping[str, bool], theirs: Mapping[str, bool], keys: list[str]) -> dict[str, Any]:
    """paired_headline with the control as `a` and the summarizer as `b` (b - a: the summarizer's margin)."""
    return _exact(paired_headline([(k, bool(theirs[k]), bool(ours[k])) for k in keys if k in theirs]))
