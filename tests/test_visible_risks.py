"""Risks and sweeps a reader can see (issue 18, items 6 and 8): simulate sweeps list the combinations they
skip and plot one line per policy and window; the summary column shows its budget; a session that never
compacts says so; run shows the risks simulate finds; report.md's fact-age table is in numeric order."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

import harness.render.plots as plots
from harness.cli import main
from harness.render.plots import age_key
from harness.render.terminal import render_summary
from harness.render.risks import run_risks
from harness.results.folder import read_run

from test_runner import make_case

LIBRARY = Path(__file__).parents[1] / "cases"


def test_a_sweep_lists_the_combinations_it_skips(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--sweep", "--json", "--windows", "2000,4000", "--reserves", "400,2000"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(r["context_window"], r["reserve_tokens"]) for r in document["sweep"]] == [(2000, 400), (4000, 400),
                                                                                       (4000, 2000)]
    assert [(s["context_window"], s["reserve_tokens"]) for s in document["skipped"]] == [(2000, 2000)]
    assert main(["simulate", str(case), "--sweep", "--windows", "2000,4000", "--reserves", "400,2000"]) == 0
    assert "skipped: window 2000 reserve 2000 (reserve 2000 >= window 2000" in capsys.readouterr().out


def test_a_sweep_with_nothing_to_run_is_a_one_line_error(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--sweep", "--windows", "2000", "--reserves", "2000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reserve 2000 >= window 2000" in err


def test_the_sweep_plot_draws_one_line_per_policy_and_window(tmp_path, monkeypatch, capsys):
    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or path)
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--sweep", "--policy", "default", "--policy", "ratio-20",
                 "--windows", "2000,4000", "--reserves", "400,800", "--plot", str(tmp_path / "s.png")]) == 0
    compactions = figures[0].axes[0]
    labels = [line.get_label() for line in compactions.get_lines()]
    assert labels == ["default, 2K", "default, 4K", "ratio-20, 2K", "ratio-20, 4K"]
    assert all(len(line.get_xdata()) == 2 for line in compactions.get_lines())  # one point per reserve, no zig-zag


def test_the_summary_column_shows_the_budget_and_a_quiet_session_says_it_never_compacts(tmp_path, capsys):
    case = make_case(tmp_path, "small")
    assert main(["simulate", str(case), "--summary-tokens", "300"]) == 0
    out = capsys.readouterr().out
    assert "summary true (budget)" in out and "(300)" in out
    quiet = make_case(tmp_path, "quiet", window=200_000)
    assert main(["simulate", str(quiet)]) == 0
    assert "no compaction: the session never reaches the trigger under window 200000" in capsys.readouterr().out


def test_run_shows_the_risks_simulate_counts(tmp_path, capsys):
    assert main(["run", "--cases-dir", str(LIBRARY), "--cases", "edge-giant-step", "--out", str(tmp_path / "run"),
                 "--json"]) == 0
    capsys.readouterr()
    run = read_run(tmp_path / "run")
    assert main(["simulate", str(LIBRARY / "edge-giant-step"), "--json", "--summarizer", "builtin"]) == 0
    simulated = {k: v for k, v in json.loads(capsys.readouterr().out)["risk_counts"].items() if v}
    assert simulated and {k: by_case["edge-giant-step"] for k, by_case in run_risks(run).items()} == simulated
    out = io.StringIO()
    render_summary(run, Console(file=out, width=400))
    kind, count = next(iter(simulated.items()))
    assert f"{kind.replace('_', ' ')} {count} sends in 1 case" in out.getvalue()
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"| {kind} | {count} | 1 |" in report


def test_fact_age_buckets_sort_as_numbers():
    assert sorted(["200+", "10-49", "0-9", "50-199"], key=age_key) == ["0-9", "10-49", "50-199", "200+"]


def test_a_run_where_no_case_compacts_warns(tmp_path, capsys):
    make_case(tmp_path / "cases", "quiet", window=200_000)
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "warning: no case compacted under its window (quiet): nothing in this run tests a summary" in out
    assert "**warning: no case compacted" in (tmp_path / "run" / "report.md").read_text()
    assert "warning: no case compacted" in (tmp_path / "run" / "report.html").read_text()
