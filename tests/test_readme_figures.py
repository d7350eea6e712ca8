"""tools/readme-figures: every figure the README and docs quote carries its key, and those a committed file or
the case library gives are checked here on every run (the heavier sources run from the script)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "tools" / "readme_figures.py")
figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(figures)


def test_the_cheap_figures_the_readme_quotes_are_current():
    measured = {**figures.library(), **figures.reference()}
    stale, unknown = figures.stale(figures.text_files(), measured, list(figures.CHEAP))
    assert unknown == [] and stale == []
    checked = [key for path in figures.text_files() for _, key, _ in figures.marks(path) if key in measured]
    assert len(checked) >= 15  # the reference headline, the ceiling, the library's counts


def test_every_marked_figure_names_a_source_that_gives_it(monkeypatch):
    keys = {key for path in figures.text_files() for _, key, _ in figures.marks(path)}
    assert {key.split(".")[0] for key in keys} <= set(figures.SOURCES)
    assert {"default.lost_probes", "default.html_mb", "default.risk.estimator_miss.sends"} <= keys


def test_a_stale_figure_is_named_and_rewritten(tmp_path):
    text = tmp_path / "notes.md"
    text.write_text("lists 67<!--fig:default.lost_probes--> lost probes in 29<!--fig:library.cases--> cases; "
                    "a page of 1.2 MB<!--fig:default.html_mb-->, 54-70<!--fig:reference.openai.wilson-->\n"
                    "and 3<!--fig:nowhere.figure--> unknown\n")
    measured = {"default.lost_probes": "58", "library.cases": "29", "default.html_mb": "0.7 MB",
                "reference.openai.wilson": "54-70"}
    stale, unknown = figures.stale([text], measured, ["default", "library", "reference"])
    assert stale == [f"{text}:1: default.lost_probes reads 67, measured 58",
                     f"{text}:1: default.html_mb reads 1.2 MB, measured 0.7 MB"]
    assert unknown == [f"{text}:2: nowhere.figure: no source gives this figure"]
    assert figures.rewrite(text, measured) == 2
    assert text.read_text().startswith("lists 58<!--fig:default.lost_probes--> lost probes in 29<!--fig:library.cases")
    assert "0.7 MB<!--fig:default.html_mb-->" in text.read_text()
    assert figures.stale([text], measured, ["default"])[0] == []


def test_the_default_source_gives_the_headline_the_text_quotes(tmp_path, capsys):
    """The default run's headline, as README.md and docs/validity.md quote it, read from a run's folder."""
    import json
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from harness.cli import main
    from test_runner import make_case

    make_case(tmp_path / "cases", "small")
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "out")]) == 0
    found = figures.default_figures(tmp_path / "out")
    rate = json.loads((tmp_path / "out" / "run.json").read_text())["aggregates"]["headline"]["answered"]["tests_summary"]
    assert found["default.answered.passed"] == str(rate["passed"]) and found["default.answered.total"] == str(rate["total"])
    assert found["default.answered.rate"] == f"{100 * rate['rate']:.1f}%" and "default.retained.rate" in found


def test_a_screenshot_is_of_the_default_run_only(capsys):
    import pytest

    with pytest.raises(SystemExit) as stop:
        figures.main(["--only", "library", "--screenshot"])
    assert stop.value.code == 2 and "--only default" in capsys.readouterr().err
