"""The terminal summary of a run and its report.md."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.probes import CONDITIONS
from harness.results.aggregate import GRADES, ok_records, passed


def markdown_latency(run: dict[str, Any]) -> list[str]:
    """The latency table: harness time is always measured here; model time is labelled with its source."""
    rows = run["aggregates"].get("latency", {}).get("by_model") or []
    if not rows:
        return []
    cache = "on" if run["configuration"].get("cache", True) else "off"
    lines = ["### Compaction latency (trigger to compacted context)", "",
             "| summarizer | cache | compactions | harness p50 / p95 s (measured) | model p50 / p95 s | model time |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['summarizer']} | {cache} | {r['compactions']} | {r['harness_p50_s']} / {r['harness_p95_s']} | "
              f"{r['model_p50_s']} / {r['model_p95_s']} | {r['latency_source']} |" for r in rows]
    return lines + [""]


def markdown_plots(run: dict[str, Any], folder: Path) -> list[str]:
    """Retention against fact age and compactions survived, as a PNG beside report.md (when plottable)."""
    if not run["aggregates"].get("valid_probes"):
        return []
    try:
        from harness.render.plots import retention_plot

        retention_plot([(run.get("label") or run["run_id"], run)], folder / "retention.png")
    except Exception as exc:  # a missing matplotlib must not cost the report
        return [f"(plots skipped: {type(exc).__name__}: {exc})", ""]
    return ["### Retention", "", "![retention against fact age and compactions survived](retention.png)", ""]


# ---------------------------------------------------------------------------------------------
# rendering


def _fixed(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_cost(cost: dict[str, Any]) -> str:
    if cost.get("usd") is None:
        return "cost n/a"
    # A run replays no agent requests, so its summarizer calls meet a cold prompt cache.
    cold = ("; cold cache: the agent's own requests are not replayed, `compaction-harness cost` models the warm one"
            if cost["usd"] else "")
    return (f"cost ${cost['usd']:.4f} (${cost['per_compaction'] or 0:.4f} per compaction, "
            f"${cost['per_session']:.4f} per session; {cost['source']}{cold})")


def fmt_rate(rate: dict | None) -> str:
    if not rate or rate.get("rate") is None:
        return "-"
    low, high = rate["wilson95"]
    return f"{100 * rate['rate']:.1f}% [{100 * low:.0f}-{100 * high:.0f}] ({rate['passed']}/{rate['total']})"


def rate_table(title: str, groups: dict[str, dict], first: str) -> Table:
    table = Table(title=title)
    table.add_column(first)
    for column in (*CONDITIONS, "normalised"):
        table.add_column(column, justify="right")
    for name, group in groups.items():
        norm = group.get("normalised_retention")
        table.add_row(name, *(fmt_rate(group[c]) for c in CONDITIONS), "-" if norm is None else f"{norm:.2f}")
    return table


def ceiling(agg: dict[str, Any]) -> str:
    """How many probes the full history answers: the instrument's own ceiling (valid probes)."""
    share = f" ({100 * agg['valid_probes'] / agg['probes']:.1f}%)" if agg["probes"] else ""
    return f"the full history passes {agg['valid_probes']}/{agg['probes']}{share}, the rest are invalid"


def render_summary(run: dict[str, Any], console: Console) -> None:
    agg, config = run["aggregates"], run["configuration"]
    grade = agg["grade"]
    console.print(f"[bold]run {run['run_id']}[/]: policy {config['policy']}, model {config['model']}, summarizer "
                  f"{config['summarizer_spec']}, answerer {config['answerer']}, cache {'on' if config['cache'] else 'off'}")
    console.print(f"{agg['cases_ok']}/{agg['cases']} cases, {agg['probes']} probes; {ceiling(agg)}; "
                  f"{agg['floor_survives']} valid probes survive without a summary; grade: {grade}; "
                  f"rates below are over valid probes")
    overall = {g: agg["overall"][g] for g in GRADES if agg["overall"][g]["full"]["total"]}
    console.print(rate_table("pass rate (Wilson 95%)", overall, "grade"))
    console.print(rate_table(f"by kind ({grade})", agg["by_kind"], "kind"))
    console.print(rate_table(f"by pool ({grade})", agg["by_pool"], "pool"))
    s, lat, usage = agg["summary"], agg["latency"], agg["usage"]
    console.print(f"compactions: {sum(agg['compactions'].values())} "
                  f"({', '.join(f'{k} {v}' for k, v in agg['compactions'].items() if v)}); summaries: mean "
                  f"{_fixed(s['mean_tokens'], 0)} tokens, compression {_fixed(s['mean_compression_ratio'], 1)}x, "
                  f"artifact recall {_fixed(s['mean_artifact_recall'], 2)} precision "
                  f"{_fixed(s['mean_artifact_precision'], 2)}, "
                  f"{s['hallucinated_paths']} hallucinated paths, {s['stale_facts']} stale facts")
    console.print(f"summarizer usage: {usage.get('input_tokens', 0)} input ({usage.get('cached_input_tokens', 0)} "
                  f"cached, {usage.get('cache_write_tokens', 0)} written), {usage.get('output_tokens', 0)} output "
                  f"over {usage.get('calls', 0)} calls; {fmt_cost(agg['cost'])}")
    console.print(f"compaction latency: harness p50 {lat['harness_p50_s']} s p95 {lat['harness_p95_s']} s "
                  f"(measured); model p50 {lat['model_p50_s']} s p95 {lat['model_p95_s']} s "
                  f"({lat['model_time_source']})")
    for case, error in agg["errors"].items():
        console.print(f"[red]error[/] in {case}: {error}", markup=True)


def markdown_rates(title: str, groups: dict[str, dict], first: str) -> list[str]:
    lines = [f"### {title}", "", f"| {first} | compacted | full | floor | normalised |", "| --- | --- | --- | --- | --- |"]
    for name, group in groups.items():
        norm = group.get("normalised_retention")
        lines.append(f"| {name} | " + " | ".join(fmt_rate(group[c]) for c in CONDITIONS)
                     + f" | {'-' if norm is None else f'{norm:.2f}'} |")
    return lines + [""]


def write_markdown(run: dict[str, Any], path: Path) -> None:
    agg, config = run["aggregates"], run["configuration"]
    grade = agg["grade"]
    lines = [f"# Run {run['run_id']}", "",
             f"Policy `{config['policy']}`, model `{config['model']}`, summarizer `{config['summarizer_spec']}`, "
             f"answerer `{config['answerer']}`, cache {'on' if config['cache'] else 'off'}; harness "
             f"{run['harness_version']} at {run.get('git_commit')}.", "",
             f"{agg['cases_ok']}/{agg['cases']} cases, {agg['probes']} probes; {ceiling(agg)}; "
             f"{agg['floor_survives']} valid probes survive without any summary (they do not test it). "
             f"Rates are over valid probes.", ""]
    lines += markdown_rates("Pass rate", {g: agg["overall"][g] for g in GRADES}, "grade")
    lines += markdown_rates(f"By kind ({grade})", agg["by_kind"], "kind")
    lines += markdown_rates(f"By pool ({grade})", agg["by_pool"], "pool")
    lines += markdown_rates(f"By fact age in messages ({grade})", agg["by_age"], "age")
    lines += markdown_rates(f"By compactions survived ({grade})", agg["by_compactions_survived"], "compactions")
    lines += ["### Compaction and summaries", "", "| case | compactions |", "| --- | --- |"]
    lines += [f"| {case} | {n} |" for case, n in agg["compactions"].items()]
    lines += ["", "```", *(f"{k}: {v}" for k, v in agg["summary"].items()), "```", "",
              f"Summarizer {fmt_cost(agg['cost'])}.", ""]
    lines += markdown_latency(run) + markdown_plots(run, path.parent)
    if agg["invalid_probes"]:
        lines += ["### Invalid probes (fail on the full history)", "", *(f"- {p}" for p in agg["invalid_probes"]), ""]
    if agg["errors"]:
        lines += ["### Errors", "", *(f"- {c}: {e}" for c, e in agg["errors"].items()), ""]
    lines += markdown_compaction_points([run], "###")
    path.write_text("\n".join(lines), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# per compaction point: the session's own summaries beside ours (issue 9)


def point_label(run: dict[str, Any]) -> str:
    config = run["configuration"]
    if config["policy"] == "recorded":
        who = "recorded (the agent's own)"
    else:
        who = f"{config['policy']} / {config['summarizer_spec']}"
        if config.get("at_recorded_points"):
            who += f" at recorded points ({config['at_recorded_points']} tail)"
    return f"{run['label']}: {who}" if run.get("label") else who


def compaction_point_rows(record: dict[str, Any], grade: str) -> dict[int, dict[str, Any]]:
    """Per compaction of one case record: where it happened, the summary's size, how the probes asked just
    after it fared (by kind, and which were lost), and the summary-level checks."""
    summaries = {s["compaction"]: s for s in record.get("summaries", [])}
    rows = {}
    for event in record.get("events", []):
        number = event["number"]
        probes = [p for p in record.get("probes", []) if p.get("at") == f"compaction:{number}" and p.get("valid")]
        kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        lost = []
        for probe in probes:
            ok = bool(passed(probe, "compacted", grade))
            kinds[probe["kind"]][0] += ok
            kinds[probe["kind"]][1] += 1
            if not ok:
                lost.append(probe["id"])
        check = summaries.get(number, {})
        rows[number] = {
            "at": event["send_index"], "head": f"{event['head_start']}..{event['tail_start']}",
            "source": event["source"], "summary_tokens": event["summary_tokens"],
            "budget": event.get("summary_budget_tokens") or None,
            "by_kind": {k: tuple(v) for k, v in sorted(kinds.items())}, "lost": lost,
            "recall": check.get("artifact_recall"), "precision": check.get("artifact_precision"),
            "hallucinated": check.get("hallucinated_paths", []), "stale": check.get("stale_facts", []),
        }
    return rows


def markdown_compaction_points(runs: list[dict[str, Any]], level: str = "##") -> list[str]:
    """One table per (case, compaction number), one row per run: empty when no probe is asked at a compaction."""
    asked = any(str(p.get("at", "")).startswith("compaction:")
                for run in runs for r in ok_records(run["cases"].values()) for p in r.get("probes", []))
    if not asked:
        return []
    grade = "answered" if all(run["aggregates"].get("grade") == "answered" for run in runs) else "retained"
    tables: dict[tuple[str, int], list[tuple[str, dict]]] = defaultdict(list)
    for run in runs:
        for key, record in sorted(run["cases"].items()):
            if record.get("status") != "ok":
                continue
            for number, row in compaction_point_rows(record, grade).items():
                tables[(key, number)].append((point_label(run), row))
    lines = [f"{level} Per compaction point ({grade}, probes asked just after each compaction)", ""]
    for (case, number), rows in sorted(tables.items()):
        lines += [f"{level}# {case}, compaction {number}", "",
                  "| run | before message | folded | summary tokens (budget) | by kind | lost probes | "
                  "artifact recall / precision | hallucinated paths | stale facts |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for label, row in rows:
            kinds = ", ".join(f"{k} {p}/{t}" for k, (p, t) in row["by_kind"].items()) or "-"
            budget = f" ({row['budget']})" if row["budget"] else ""
            lines.append(
                f"| {label} | {row['at']} | {row['head']} ({row['source']}) | {row['summary_tokens']}{budget} | "
                f"{kinds} | {', '.join(row['lost']) or '-'} | {_dash(row['recall'])} / {_dash(row['precision'])} | "
                f"{', '.join(row['hallucinated']) or '-'} | {', '.join(row['stale']) or '-'} |")
        lines.append("")
    return lines


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)
