"""The matrix: configurations x cases, sharded, run with some concurrency, resumable.

One failing case is reported and the others finish; each finished case is written at once (its file and
run.json, through the results folder); `resume` skips the cases a folder already holds.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness.atomic import WriteFailed, write_atomic
from harness.cases.schema import Case
from harness.errors import HarnessError
from harness.results.folder import RunFolder, git_commit, harness_version, now
from harness.results.schema import CaseRecord, RunHeader
from harness.run import workers
from harness.run.case import guarded_case_record
from harness.run.config import RunConfig, RunPlan, plan_run


INTERRUPT_GRACE_S = 0.5
INSTRUCTION_FILE = "instruction.md"  # an --instruction's text, as sent ({sections} and {budget} unfilled)


def run_header(config: RunConfig, run_id: str, label: str | None, shard: str | None = None) -> RunHeader:
    return RunHeader(run_id, label, now(), harness_version(), git_commit(), config.configuration(), shard or None)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not sep or not 1 <= i <= n:
        raise HarnessError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/3")
    return i, n


def in_shard(position: int, shard: tuple[int, int] | None) -> bool:
    """Round-robin over the sorted (configuration, case) matrix: every machine computes the same split."""
    return shard is None or position % shard[1] == shard[0] - 1


def matrix(cases: list[Case], configs: list[RunConfig], shard: tuple[int, int] | None) -> dict[RunConfig, list[Case]]:
    """The cases each configuration runs on this shard."""
    cells = sorted(((config.key(), case.id, config, case) for config in configs for case in cases),
                   key=lambda cell: cell[:2])
    chosen: dict[RunConfig, list[Case]] = {config: [] for config in configs}
    for position, (_, _, config, case) in enumerate(cells):
        if in_shard(position, shard):
            chosen[config].append(case)
    return chosen


def run_cases(cases: list[Case], config: RunConfig | RunPlan, folder: RunFolder, *, run_id: str,
              label: str | None = None, resume: bool = False, repeat: int = 1, concurrency: int = 1,
              shard: str | None = None, on_case: Callable[[dict[str, Any]], None] | None = None,
              jobs: int | None = 1) -> dict[str, Any]:
    """Evaluate every case (x repeat) and write as each finishes. Returns the finished run document.
    `config` may be a plan already made (`plan_run`); otherwise it is planned here, once. `jobs`: worker
    processes for offline models (None: one per core; 1: this process), harness.run.workers."""
    plan = plan_run(config).in_folder(folder.path)
    folder.create(run_header(plan.config, run_id, label, shard), resume)
    if plan.config.own_instruction:  # the text the summarizer was given, beside the digest run.json keeps
        write_atomic(folder.path / INSTRUCTION_FILE, f"{plan.config.instruction}\n")
    try:
        return _run_todo(cases, plan, folder, resume, repeat, Pace(concurrency, jobs), on_case)
    finally:
        folder.release()


@dataclass(frozen=True)
class Pace:
    """Cases in flight: `concurrency` threads for models on the network, `jobs` processes for offline ones."""

    concurrency: int = 1
    jobs: int | None = 1


def _run_todo(cases: list[Case], plan: RunPlan, folder: RunFolder, resume: bool, repeat: int, pace: Pace,
              on_case: Callable[[dict[str, Any]], None] | None) -> dict[str, Any]:
    done = folder.finished_cases() if resume else set()
    todo = [(case, r) for case in cases for r in range(repeat) if (case.id, r) not in done]
    # no `with`: its exit would join a hung worker
    pool, sent = workers.executor(plan, len(todo), pace.jobs, pace.concurrency)
    if isinstance(pool, ProcessPoolExecutor):
        todo = workers.largest_first(todo)
    futures: dict[Future[CaseRecord], tuple[Case, int]] = {}
    written: set[Future[CaseRecord]] = set()
    try:
        with workers.starting(pool):
            for case, r in todo:
                futures[pool.submit(guarded_case_record, case, sent, r)] = (case, r)
        for future in as_completed(futures):
            record = workers.result(future, *futures[future])
            folder.add(record)  # one writer: the case file, then run.json
            written.add(future)
            if on_case:
                on_case(record.to_json())
    except BaseException as stop:
        # Stopped: start nothing new; keep what finished meanwhile, for --resume. Ctrl-C waits at most
        # INTERRUPT_GRACE_S for cases in flight (a hung server would hold it for minutes); an error waits.
        workers.stop(pool, futures, INTERRUPT_GRACE_S if isinstance(stop, KeyboardInterrupt) else None)
        for future in futures if not isinstance(stop, WriteFailed) else ():  # a full disk: keep the first error
            if future not in written and future.done() and not future.cancelled() and not future.exception():
                folder.add(future.result())
        raise
    pool.shutdown(wait=True)
    return folder.finish()


def default_run_id(config: RunConfig, label: str | None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parts = [config.system, config.model] + ([config.summarizer] if config.summarizer != "same" else []) + (
        [f"control-{config.control}"] if config.control else []) + (
        [f"instruction-{config.shown_instruction}"] if config.shown_instruction else [])
    name = label or "-".join(parts)
    return f"{stamp}-{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}"


def results_path(out: str | None, run_id: str) -> Path:
    return Path(out) if out else Path("results") / run_id
