"""PNG plots where a picture reads faster than a table: retention against fact age and against compactions
survived, cost per compaction by request shape, and the reserve sweep of `simulate`.

matplotlib runs on the Agg backend (files only, no display), imported lazily so the rest of the harness
does not pay for it.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from harness.atomic import write_with
from harness.errors import HarnessError
from harness.render.format import dollars, percent
from harness.render.shapes import shape_label

# Risk kinds worth a line in the sweep plot (the others are rare or policy-specific).
SWEEP_RISKS = ("response_may_be_cut", "summary_request_too_big", "estimator_miss", "no_shrink")
SHAPE_COLOURS = {"cache-on": "#2a7ab0", "cache-off": "#9ab7cf", "fresh": "#d1495b"}
ALT_COLOUR = "#edae49"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise HarnessError("plots need matplotlib: pip install 'matplotlib>=3.8'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path) -> Path:
    with _laid_out(fig):
        return _write_image(fig, path)


@contextmanager
def _laid_out(fig) -> Iterator[None]:
    """The figure laid out once for every format it is saved in, and closed after (pyplot keeps it otherwise)."""
    try:
        fig.tight_layout()
        yield
    finally:
        _pyplot().close(fig)


def _write_image(fig, path: str | Path) -> Path:
    path = Path(path)
    return write_with(path, lambda out: fig.savefig(out, format=path.suffix.lstrip(".") or "png", dpi=110))


def _svg_markup(fig) -> str:
    """The figure as inline SVG markup (for report.html: one file, no image requests)."""
    buffer = io.StringIO()
    with _pyplot().rc_context({"svg.fonttype": "none"}):  # text as text: a third smaller, and searchable
        fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: the SVG sits inside HTML


def age_key(bucket: str) -> int:
    """Fact-age buckets in numeric order (`0-9` < `10-49` < `200+`), not as text."""
    head = bucket.split("-")[0].rstrip("+")
    return int(head) if head.isdigit() else 10**9


def _rate_series(groups: dict[str, dict], order) -> tuple[list[str], list[float], list[tuple[float, float]], list[int]]:
    names, rates, errors, totals = [], [], [], []
    for name in sorted(groups, key=order):
        rate = groups[name]["compacted"]
        if rate.get("rate") is None:
            continue
        low, high = rate["wilson95"]
        names.append(name)
        rates.append(100 * rate["rate"])
        errors.append((100 * (rate["rate"] - low), 100 * (high - rate["rate"])))
        totals.append(rate["total"])
    return names, rates, errors, totals


def retention_plot(runs: Sequence[tuple[str, dict[str, Any]]], path: str | Path) -> Path:
    """Compacted pass rate (Wilson 95% bars) by fact age and by compactions survived, one line per run."""
    return _save(retention_figure(runs), path)


def retention_images(runs: Sequence[tuple[str, dict[str, Any]]], png: str | Path | None, svg: bool) -> str | None:
    """The retention figure drawn once and saved in each format asked for: a PNG at `png` (report.md's) and,
    with `svg`, the SVG markup returned (report.html's). A run that writes both pays for one drawing."""
    fig = retention_figure(runs)
    with _laid_out(fig):
        if png is not None:
            _write_image(fig, png)
        return _svg_markup(fig) if svg else None


@dataclass(frozen=True)
class RunPlot:
    """A run's retention plot as its reports show it: the PNG written, the SVG markup, or why it was skipped;
    all None when the run has no valid probe to plot."""

    png: Path | None = None
    svg: str | None = None
    skipped: str | None = None


def run_retention(run: dict[str, Any], png: Path | None, svg: bool) -> RunPlot:
    """`retention_images` for one run's reports; a drawing that fails is a line in them, never their loss."""
    if not run["aggregates"].get("valid_probes"):
        return RunPlot()
    try:
        markup = retention_images([(run.get("label") or run["run_id"], run)], png, svg)
    except Exception as exc:  # a missing matplotlib must not cost the report
        return RunPlot(skipped=f"{type(exc).__name__}: {exc}")
    return RunPlot(png=png, svg=markup)


def retention_figure(runs: Sequence[tuple[str, dict[str, Any]]]):
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    panels = (("by_age", "fact age (messages since planted)", age_key),
              ("by_compactions_survived", "compactions the fact has lived through", lambda k: int(k) if k.isdigit() else 99))
    grade = runs[0][1]["aggregates"]["grade"] if runs else "retained"
    for ax, (key, xlabel, order) in zip(axes, panels):
        for offset, (label, run) in enumerate(runs):
            names, rates, errors, totals = _rate_series(run["aggregates"][key], order)
            xs = [i + (offset - (len(runs) - 1) / 2) * 0.08 for i in range(len(names))]
            ax.errorbar(xs, rates, yerr=list(zip(*errors)) if errors else None, marker="o", capsize=3, label=label)
            ax.set_xticks(range(len(names)), [f"{n}\n(n={t})" for n, t in zip(names, totals)], fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"compacted, % ({grade})")
        ax.set_ylim(-5, 105)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_title("retention against fact age")
    axes[1].set_title("retention against compactions survived")
    if runs:
        axes[1].legend(fontsize=8, loc="lower left")
    return fig


def cost_plot(result: dict[str, Any], path: str | Path) -> Path:
    """Dollars per compaction by request shape, one panel per model (their scales differ)."""
    return _save(cost_figure(result), path)


def cost_figure(result: dict[str, Any]):
    """Horizontal bars: the shapes' names are rows of the y-axis, so however long they never overlap."""
    plt = _pyplot()
    models = result["models"]
    if not models:
        raise HarnessError("cost plot: no model figures to draw")
    rows = max(len(summary["shapes"]) for summary in models)
    fig, axes = plt.subplots(1, len(models), figsize=(6.2 * len(models), 1.1 + 0.55 * rows), squeeze=False)
    for ax, summary in zip(axes[0], models):
        shapes = list(summary["shapes"].items())
        values = [t["per_compaction_usd"] or 0.0 for _, t in shapes]
        colours = [ALT_COLOUR if s.startswith("alt:") else SHAPE_COLOURS.get(s, "grey") for s, _ in shapes]
        bars = ax.barh(range(len(shapes)), values, color=colours)
        ax.set_yticks(range(len(shapes)), [shape_label(s) for s, _ in shapes], fontsize=8)
        ax.invert_yaxis()  # the first shape on top, as in the tables
        for bar, (_, t) in zip(bars, shapes):
            hit = t.get("cache_hit_rate") or 0
            ax.annotate(" " + dollars(bar.get_width(), 4) + (f" ({percent(hit)} cached)" if hit else ""),
                        (bar.get_width(), bar.get_y() + bar.get_height() / 2), ha="left", va="center", fontsize=8)
        ax.set_xlabel("USD per compaction")
        ax.set_xlim(0, max(values + [1e-9]) * 1.45)  # room for the largest bar's label
        ax.set_title(f"{summary['model']}: {summary['compactions']} compactions ({shapes[0][1]['source']})", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    return fig


def sweep_plot(rows: list[dict[str, Any]], path: str | Path, title: str = "") -> Path:
    """Compactions and risks against the reserve, one line per policy and window (the reserve axis is log 2)."""
    return _save(sweep_figure(rows, title), path)


def sweep_figure(rows: list[dict[str, Any]], title: str = ""):
    if not rows:
        raise HarnessError("sweep plot: the sweep has no rows (every reserve was at or above the window)")
    plt = _pyplot()
    windows = sorted({row["context_window"] for row in rows})
    panels = [("compactions", "compactions")] + [(kind, kind.replace("_", " ")) for kind in SWEEP_RISKS
                                                 if any(row.get(kind) for row in rows)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    policies = list(dict.fromkeys(row["policy"] for row in rows))
    for ax, (key, label) in zip(axes[0], panels):
        for policy in policies:  # one line per policy and window: joining policies would zig-zag
            for window in windows:
                points = sorted((row["reserve_tokens"], row[key]) for row in rows
                                if row["context_window"] == window and row["policy"] == policy)
                if points:
                    name = _tokens_label(window) if len(policies) == 1 else f"{policy}, {_tokens_label(window)}"
                    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
        ax.set_xscale("log", base=2)
        reserves = sorted({row["reserve_tokens"] for row in rows})
        ax.set_xticks(reserves, [f"{r // 1024}Ki" if r % 1024 == 0 else str(r) for r in reserves], fontsize=8)
        ax.minorticks_off()
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("reserve tokens")
        ax.set_ylabel("compactions" if key == "compactions" else "sends at risk")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(title="window" if len(policies) == 1 else "policy, window", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def _tokens_label(tokens: int) -> str:
    return f"{tokens / 1_000_000:g}M" if tokens >= 1_000_000 else f"{tokens / 1000:g}K"


def markdown_image(alt: str, path: str | Path, relative_to: str | Path | None = None) -> str:
    """A markdown image link, relative to the markdown file's folder when given."""
    target = Path(path)
    if relative_to is not None:
        try:
            target = target.resolve().relative_to(Path(relative_to).resolve())
        except ValueError:
            target = target.resolve()
    return f"![{alt}]({target.as_posix()})"
