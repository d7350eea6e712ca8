"""The builtin summarizer against its turn-2 version (commit 345709b, kept verbatim in turn2_builtin.py), on the
three summary requests long-editor-sync sends in the default run.

The two alternate round by round (the reference runs in each round's setup, timed there), so a load on the
machine weighs on both alike; every run starts from cold caches, as a run meets each request once. The row is
the current summarizer; `extra_info` holds the reference's times and the ratio of the medians (issue 32 asks
for at most 1.5). Run with `pytest tests/benchmarks -k builtin_summary`.
"""

from __future__ import annotations

import importlib
import pkgutil
import statistics
import time
from functools import lru_cache
from pathlib import Path

import pytest

import harness.models.builtin
from harness.cases import load_case
from harness.compaction import Compactor
from harness.compaction.summarizer import ModelSummarizer
from harness.models.base import ModelRequest
from harness.models.builtin import BuiltinClient
from harness.models.builtin.summary import summarize
from harness.policy import make_policy
from harness.run.config import RunConfig, plan_run

import turn2_builtin  # noqa: E402 (tests/benchmarks is on the path: pytest prepends it)

CASE = Path(__file__).resolve().parents[2] / "cases" / "long-editor-sync"
ROUNDS = 5


class _Recording(BuiltinClient):
    """The builtin client, keeping the requests it was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest):
        self.requests.append(request)
        return super().complete(request)


@lru_cache(maxsize=None)
def summary_requests() -> tuple[ModelRequest, ...]:
    """The case's summary requests as the default run sends them (each after the first holds a summary)."""
    case = load_case(CASE)
    client = _Recording()
    policy = make_policy("default", plan_run(RunConfig()).policy_config(case))
    Compactor(case.session, policy, ModelSummarizer(client, "builtin"), points=set(case.points) | {"end"}).run()
    return tuple(client.requests)


def clear_caches() -> None:
    """Empty every lru_cache of both implementations (the tokenizer's encoding stays loaded)."""
    modules = [turn2_builtin, *(importlib.import_module(f"harness.models.builtin.{m.name}")
                                for m in pkgutil.iter_modules(harness.models.builtin.__path__))]
    for module in modules:
        for value in vars(module).values():
            if hasattr(value, "cache_clear"):
                value.cache_clear()


def summarize_all(implementation, requests) -> list[tuple[str, str]]:
    return [implementation(request) for request in requests]


def test_builtin_summarize_against_turn2(benchmark):
    requests = summary_requests()
    assert len(requests) == 3
    reference: list[float] = []
    reference_out: list[list[tuple[str, str]]] = []

    def reference_round():
        clear_caches()
        started = time.perf_counter()
        reference_out.append(summarize_all(turn2_builtin.summarize, requests))
        reference.append(time.perf_counter() - started)
        clear_caches()
        return (summarize, requests), {}

    benchmark.group = "builtin summarize(), long-editor-sync's 3 requests"
    out = benchmark.pedantic(summarize_all, setup=reference_round, rounds=ROUNDS, iterations=1)
    assert all(finish == "stop" and text.startswith("## Goal") for text, finish in out)
    assert all(text for text, _ in reference_out[-1])  # the reference did the work it is timed for
    benchmark.extra_info["turn2_seconds"] = [round(s, 4) for s in reference]
    if benchmark.stats is not None:  # measured (not --benchmark-disable)
        ratio = benchmark.stats.stats.median / statistics.median(reference)
        benchmark.extra_info["ratio_to_turn2_median"] = round(ratio, 2)
        print(f"\nbuiltin summarize: {benchmark.stats.stats.median:.3f} s median, turn-2 "
              f"{statistics.median(reference):.3f} s: {ratio:.2f}x")
