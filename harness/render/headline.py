"""The headline of a run for a reader (EVALUATION.md, "Summary-testing probes lead"): the compacted rate over
the probes that test the summary, the other groups beside it, per-kind rows with their n, the cases that never
compact, the agreement of `retained` with `answered`, and judged means. Lines of text, shared by the terminal
summary, report.md and compare; every function reads run.json's `aggregates` and tolerates a run written
before the headline existed (it then says nothing)."""

from __future__ import annotations

from typing import Any, Collection

from harness.probes import CONDITIONS
from harness.render.format import dollars, fixed, headline_rate, percent, wilson_rate

GROUP_NAMES = (("floor_answers", "floor already answers"), ("no_compaction", "no compaction before"),
               ("unreached", "unreached points"), ("invalid", "invalid"))


def lead_headline(agg: dict[str, Any]) -> dict[str, Any] | None:
    """The lead grade's headline (answered when it ran), None for a run without one."""
    return (agg.get("headline") or {}).get(agg.get("grade"))


def testing_phrase(rate: dict[str, Any]) -> str:
    cases = rate["cases"]
    return f"over {rate['total']} summary-testing probes in {cases} case{'' if cases == 1 else 's'}"


def headline_text(headline: dict[str, Any]) -> str:
    """`answered: compacted 57.1% [25-84] [clustered 57-57] (4/7) over 7 summary-testing probes in 1 cases`."""
    rate = headline["tests_summary"]
    return f"{headline['grade']}: compacted {headline_rate(rate)} {testing_phrase(rate)}"


def headline_line(agg: dict[str, Any]) -> str | None:
    """The lead grade's headline, and retained's beside it when both grades ran."""
    lead = lead_headline(agg)
    if lead is None:
        return None
    others = [h for g, h in sorted((agg.get("headline") or {}).items()) if g != lead["grade"]]
    return "; ".join(headline_text(h) for h in (lead, *others))


def group_counts(headline: dict[str, Any]) -> str:
    """`floor already answers 41, no compaction before 43, unreached points 190 (real 190), invalid 19`: each
    group counted, the unreached points by pool (a run written before they had a group counts them invalid)."""
    counts, parts = headline["groups"], []
    for key, name in GROUP_NAMES:
        if key == "unreached" and key not in counts:
            continue
        pools = headline.get("unreached_by_pool") if key == "unreached" and counts[key] else None
        parts.append(f"{name} {counts.get(key, 0)}"
                     + (f" ({', '.join(f'{pool} {n}' for pool, n in pools.items())})" if pools else ""))
    return ", ".join(parts)


def groups_line(headline: dict[str, Any]) -> str:
    """The probes that are not in the headline, each group counted."""
    return "beside it (not in the headline): " + group_counts(headline)


def kind_rows(headline: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind, n, compacted rate with both intervals) over summary-testing probes."""
    return [(kind, str(rate["total"]), headline_rate(rate)) for kind, rate in headline["by_kind"].items()]


def never_compacted_lines(agg: dict[str, Any]) -> list[str]:
    """Cases that never compact, checked for what they test: nothing compacted, the context stayed whole."""
    return [f"{case}: no compaction; " + ("context stayed whole" if facts.get("context_whole")
                                          else "the context did NOT stay whole")
            for case, facts in (agg.get("never_compacted") or {}).items()]


def never_compacted_summary(agg: dict[str, Any], names: bool = True) -> str | None:
    """The cases that never compact on one line: how many stayed whole (named unless `names` is False: report.md
    names them), and by name any that did not."""
    never = agg.get("never_compacted") or {}
    if not never:
        return None
    broken = [case for case, facts in never.items() if not facts.get("context_whole")]
    whole = [case for case in never if case not in broken]
    listed = f": {', '.join(whole)}" if names else " (named in report.md)"
    parts = ([f"the context stayed whole in {len(whole)}{listed}"] if whole else []) + (
        [f"the context did NOT stay whole in {', '.join(broken)}"] if broken else [])
    return f"never compact ({len(never)} cases, not averaged in): " + "; ".join(parts)


def ceiling(agg: dict[str, Any]) -> str:
    """How many probes the full history answers: the instrument's own ceiling (valid probes)."""
    share = f" ({percent(agg['valid_probes'] / agg['probes'])})" if agg["probes"] else ""
    unreached = agg.get("unreached_probes") or 0
    lost = (agg.get("failed_requests") or {}).get("ungraded", 0)  # neither valid nor invalid
    invalid = agg["probes"] - agg["valid_probes"] - unreached - lost
    parts = ([f"{unreached} are at points the replay never reached (not graded)"] if unreached else []) + (
        [f"{lost} lost to failed requests (not graded)"] if lost else []) + (
        ["the rest are invalid"] if invalid else [])
    rest = ", ".join(parts) or "none invalid"
    return f"the full history passes {agg['valid_probes']}/{agg['probes']}{share}, {rest}"


def fmt_cost(cost: dict[str, Any]) -> str:
    if cost.get("usd") is None:
        return "cost n/a"
    # A run replays no agent requests, so its summarizer calls meet a cold prompt cache.
    cold = ("; cold cache: the agent's own requests are not replayed, `compaction-harness cost` models the warm one"
            if cost["usd"] else "")
    return (f"cost {dollars(cost['usd'], 4)} ({dollars(cost['per_compaction'] or 0, 4)} per compaction, "
            f"{dollars(cost['per_session'], 4)} per session that compacted; {cost['source']}{cold})")


def nothing_compacted_line(agg: dict[str, Any], stopped: Collection[str] = ()) -> str | None:
    """A warning when no finished case compacted: then no probe tests a summary, whatever the rates say. Where a
    runtime stopped (`stopped`: those cases) the stop is why, said on its own line, not the window."""
    never = agg.get("never_compacted") or {}
    if not agg.get("cases_ok") or len(never) < agg["cases_ok"]:
        return None
    halted = [case for case in never if case in stopped]
    if halted:
        return (f"warning: no case compacted ({', '.join(never)}): nothing in this run tests a summary; the runtime "
                f"stopped in {', '.join(halted)} (why, and what next, below)")
    return (f"warning: no case compacted under its window ({', '.join(never)}): nothing in this run tests a "
            f"summary; lower the window (--window N) or pick cases that fill theirs")


def agreement_line(agg: dict[str, Any]) -> str | None:
    found = agg.get("agreement")
    if not found:
        return None
    return (f"retained agrees with answered on {wilson_rate(found)} summary-testing probes; "
            f"{len(found['disagreements'])} disagree")


def judged_line(agg: dict[str, Any]) -> str | None:
    found = agg.get("judged")
    if not found:
        return None

    def means(over: dict[str, Any]) -> str:
        return ", ".join(f"{c} {fixed(over.get(c), 2)}" for c in CONDITIONS)

    return (f"judged (mean 0-5): summary-testing probes {means(found['tests_summary'])}; valid probes "
            f"{means(found['valid'])}; {found['errors']} judge errors")
