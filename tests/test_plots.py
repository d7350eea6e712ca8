"""Plots are written as PNG files from run aggregates, the cost study and a reserve sweep."""

import json

from harness.cli import main
from harness.render.plots import cost_plot, markdown_image, retention_plot, sweep_plot

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
