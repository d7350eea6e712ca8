"""Plots are written as PNG files from run aggregates, the cost study and a reserve sweep."""

import json

from harness.cli import main
import harness.render.plots as plots
from harness.render.plots import cost_plot, markdown_image, retention_images, retention_plot, sweep_plot

PNG = b"\x89PNG\r\n\x1a\n"


def _rate(passed, total):
    return {"passed": passed, "total": total, "rate": passed / total, "wilson95": [0.2, 0.9]}


def _run(shift=0):
    groups = {"0-19": {"compacted": _rate(9 - shift, 10)}, "200+": {"compacted": _rate(4, 10)},
              "20-49": {"compacted": _rate(7, 10)}}
    return {"aggregates": {"grade": "answered", "by_age": groups,
                           "by_compactions_survived": {"0": {"compacted": _rate(9, 10)},
                                                       "2": {"compacted": _rate(5 - shift, 10)}}}}


def test_retention_plot(tmp_path):
    path = retention_plot([("same", _run()), ("alt", _run(2))], tmp_path / "r.png")
    assert path.read_bytes()[:8] == PNG


def counted_figures(monkeypatch) -> list:
    """Each retention figure drawn from now on (retention_figure wrapped, not replaced)."""
    drawn, draw = [], plots.retention_figure
    monkeypatch.setattr(plots, "retention_figure", lambda runs: drawn.append(draw(runs)) or drawn[-1])
    return drawn


def test_one_drawing_gives_the_png_and_the_svg_each_as_drawn_alone(tmp_path, monkeypatch):
    from matplotlib import image, pyplot, rcParams

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # the SVG's date and (below) its ids are otherwise unique per save
    monkeypatch.setitem(rcParams, "svg.hashsalt", "test")
    runs = [("same", _run()), ("alt", _run(2))]
    drawn = counted_figures(monkeypatch)
    open_before = pyplot.get_fignums()  # another test in this process may have left one open
    svg = retention_images(runs, tmp_path / "both.png", svg=True)
    assert len(drawn) == 1 and pyplot.get_fignums() == open_before  # one figure, closed once saved in both formats
    png = (tmp_path / "both.png").read_bytes()
    assert png[:8] == PNG and image.imread(tmp_path / "both.png").shape[:2] == (396, 1210)  # 11 x 3.6 in at 110 dpi
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for text in ("retention against fact age", "retention against compactions survived", ">same<", ">alt<",
                 "(n=10)"):
        assert text in svg, text  # text as text: both panels, both runs' legend entries, the bucket sizes
    assert retention_images(runs, None, svg=True) == svg  # saving the PNG first changed nothing in the SVG
    assert retention_images(runs, tmp_path / "alone.png", svg=False) is None
    assert (tmp_path / "alone.png").read_bytes() == png == retention_plot(runs, tmp_path / "plot.png").read_bytes()
    assert len(drawn) == 4  # the counter sees every drawing: the single-format ones drew one each


def test_cost_plot(tmp_path):
    shape = {"model": "openai:gpt-5", "source": "modelled", "per_compaction_usd": 0.01, "cache_hit_rate": 0.9}
    result = {"models": [{"model": "openai:gpt-5", "compactions": 3,
                          "shapes": {"cache-on": shape, "cache-off": {**shape, "per_compaction_usd": 0.05},
                                     "alt:openai:gpt-5-mini": {**shape, "per_compaction_usd": 0.02},
                                     "fresh": {**shape, "per_compaction_usd": 0.05, "cache_hit_rate": 0}}}]}
    assert cost_plot(result, tmp_path / "c.png").read_bytes()[:8] == PNG


def test_sweep_plot_from_simulate(tmp_path, capsys):
    path = tmp_path / "sweep.png"
    assert main(["simulate", "cases/edge-32k-window", "--sweep", "--windows", "32768,65536",
                 "--reserves", "4096,8192,16384", "--plot", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    assert len(rows) == 6
    assert path.read_bytes()[:8] == PNG
    assert sweep_plot(rows, tmp_path / "again.png").exists()


def test_markdown_image_is_relative(tmp_path):
    assert markdown_image("x", tmp_path / "a" / "p.png", tmp_path) == "![x](a/p.png)"


# ---------------------------------------------------------------------------------------------
# no label of a plot overlaps another: each figure drawn as its PNG is, at the library's real sizes


def overlapping_labels(fig) -> list[tuple[str, str]]:
    """Pairs of tick labels (per axis) and of annotations (per panel) whose drawn extents intersect."""
    from itertools import combinations

    fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    groups = [axis.get_ticklabels() for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)]
    groups += [ax.texts for ax in fig.axes]
    found = []
    for labels in groups:
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels if t.get_visible() and t.get_text()]
        found += [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2) if box_a.overlaps(box_b)]
    return found


def _library_cost_result() -> dict:
    """Every request shape the cost study prices, for two models, at figures like the library's."""
    def shapes(alt: str, compact: str) -> dict:
        prices = {"cache-on": 0.0683, "cache-off": 0.4005, "tools-dropped": 0.4553, f"alt:{alt}": 0.1335,
                  "fresh": 0.3870, compact: 0.0680}
        return {s: {"per_compaction_usd": usd, "cache_hit_rate": 0.999 if s == "cache-on" else 0.0,
                    "source": "modelled"} for s, usd in prices.items()}

    return {"models": [
        {"model": "anthropic:claude-sonnet-4-6", "compactions": 34,
         "shapes": shapes("anthropic:claude-haiku-4-5", "anthropic-compact")},
        {"model": "openai:gpt-5", "compactions": 34, "shapes": shapes("openai:gpt-5-mini", "openai-compact")}]}


def test_no_plot_has_overlapping_labels(capsys):
    from harness.render.plots import _pyplot, cost_figure, retention_figure, sweep_figure

    buckets = {b: {"compacted": _rate(7, 10)} for b in ("0-19", "20-49", "50-99", "100-199", "200+")}
    survived = {str(n): {"compacted": _rate(5, 10)} for n in range(7)}
    run = {"aggregates": {"grade": "answered", "by_age": buckets, "by_compactions_survived": survived}}
    assert main(["simulate", "cases/long-auth-refactor", "--sweep", "--windows", "32768,128000,200000",
                 "--reserves", "8192,16384,32768", "--policy", "default", "--policy", "pi", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    figures = {"retention": retention_figure([("20261201-000000-default-builtin", run), ("alt", run)]),
               "cost": cost_figure(_library_cost_result()), "sweep": sweep_figure(rows, "long-auth-refactor")}
    for name, fig in figures.items():
        assert overlapping_labels(fig) == [], name
        _pyplot().close(fig)
