"""Shared test set-up: benchmarks run for real only when their folder is asked for by name."""

from pathlib import Path

BENCHMARKS = Path(__file__).parent / "benchmarks"
STORAGE = Path(__file__).parents[1] / "results" / "benchmarks"


def pytest_configure(config):
    # `pytest` (everything) runs each benchmark once with --benchmark-disable (the ini default);
    # `pytest tests/benchmarks` measures them and saves the figures under results/benchmarks/.
    asked = [Path(a.split("::")[0]).resolve() for a in config.args]
    if any(p == BENCHMARKS or BENCHMARKS in p.parents for p in asked):
        config.option.benchmark_disable = False
        config.option.benchmark_autosave = True
        if config.option.benchmark_storage == "file://./.benchmarks":
            config.option.benchmark_storage = f"file://{STORAGE}"
