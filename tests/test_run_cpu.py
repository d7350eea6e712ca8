"""tools/run_cpu.py: the default run's CPU per graded probe against an older commit, pair by pair."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("run_cpu", ROOT / "tools" / "run_cpu.py")
run_cpu = sys.modules["run_cpu"] = importlib.util.module_from_spec(_spec)  # a dataclass looks its module up
_spec.loader.exec_module(run_cpu)


def test_a_child_that_burns_cpu_is_counted_and_one_that_sleeps_is_not():
    busy = run_cpu.child_cpu([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], ROOT)
    idle = run_cpu.child_cpu([sys.executable, "-c", "import time; time.sleep(0.3)"], ROOT)
    assert busy > 0.1
    assert idle < busy


def test_a_failing_child_stops_the_measure_with_its_error():
    with pytest.raises(SystemExit, match="exited 3: boom"):
        run_cpu.child_cpu([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"], ROOT)


def test_a_missing_program_is_one_line_naming_it(tmp_path):
    with pytest.raises(SystemExit, match="nothing-here not found: run this script with the project's"):
        run_cpu.child_cpu([str(tmp_path / "nothing-here")], ROOT)


def test_graded_probes_are_the_runs_valid_probes(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"aggregates": {"valid_probes": 217, "probes": 434}}))
    assert run_cpu.graded_probes(tmp_path / "run.json") == 217
    (tmp_path / "run.json").write_text(json.dumps({"aggregates": {"valid_probes": 0}}))
    with pytest.raises(SystemExit, match="no graded probes"):
        run_cpu.graded_probes(tmp_path / "run.json")


def test_the_ratio_is_new_over_old_per_graded_probe():
    old, new = run_cpu.Measured(30.0, 234), run_cpu.Measured(31.0, 217)
    assert run_cpu.ratios([(old, new)]) == [pytest.approx((31.0 / 217) / (30.0 / 234))]
    assert run_cpu.ratios([(old, old)]) == [1.0]


def test_pairs_below_one_are_a_usage_error():
    with pytest.raises(SystemExit) as stop:
        run_cpu.main(["--pairs", "0"])
    assert stop.value.code == 2


def test_a_commit_that_does_not_exist_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="making the nosuchcommit checkout .* git worktree add --detach failed"):
        run_cpu.old_checkout("nosuchcommit", tmp_path / "old")
