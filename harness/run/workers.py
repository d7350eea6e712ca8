"""Where a run's cases execute: threads in this process, or worker processes.

The builtin model and a cassette replay are pure-Python CPU work, which threads can only take turns at (the GIL),
so such cases run in worker processes, one per core by default (`--jobs`). A model reached over the network
waits on I/O: its cases stay in threads (`--concurrency`), as do a recording (one cassette writer per run,
`models.cassette.one_run`) and a runtime's drive. Workers only compute a case's record: the results folder is
written by the run's own process, so what finished is kept exactly as with threads.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterable, Iterator

from harness.cases.schema import Case
from harness.results.schema import CaseRecord
from harness.errors import HarnessError
from harness.models import check_spec
from harness.run.config import RunConfig, RunPlan

PRELOAD = ["harness.run.preload"]  # imported once by the fork server, not again by each worker


def available_cores() -> int:
    """The cores this process may use (its affinity where the platform says it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def offline(plan: RunPlan) -> bool:
    """No request leaves the process: the configuration runs here and no transport was handed in (a test's
    or a shared emulator, which lives in this process)."""
    return runs_here(plan.config) and not plan.transports


def runs_here(config: RunConfig) -> bool:
    """Every model is the builtin or replays its cassette, and no runtime is driven."""
    replays = config.record_mode == "none"
    try:
        return config.runtime is None and all(check_spec(spec).provider == "builtin" or replays
                                              for spec in config.model_specs)
    except HarnessError:  # a malformed spec: preflight names it
        return False


def process_count(plan: RunPlan, cases: int, jobs: int | None) -> int:
    """Worker processes for `cases` cases (None: every core); 0 runs them in this process's threads."""
    if not offline(plan):
        return 0
    count = min(jobs if jobs is not None else available_cores(), cases)
    return count if count > 1 else 0


def executor(plan: RunPlan, cases: int, jobs: int | None, concurrency: int) -> tuple[Executor, RunPlan]:
    """The pool the cases run in, and the plan as its workers receive it."""
    count = process_count(plan, cases, jobs)
    if not count:
        return ThreadPoolExecutor(max_workers=max(1, concurrency)), plan
    # rate limiters hold locks and pace the network, which an offline plan never reaches
    return process_pool(count), replace(plan, limiters=())


def process_pool(count: int) -> ProcessPoolExecutor:
    """`count` workers forked from a fork server (a fork of this process, which may run threads, could
    inherit a held lock); spawned where there is none."""
    return ProcessPoolExecutor(count, mp_context=_context(), initializer=_start_worker,
                               initargs=(os.getcwd(), dict(os.environ)))


def start_early(configs: Iterable[RunConfig], jobs: int | None) -> None:
    """Start the fork server before the run's checks (preflight), so that its imports overlap them on another
    core instead of delaying the first case; nothing when the cases would stay in this process."""
    wanted = (jobs if jobs is not None else available_cores()) > 1 and any(runs_here(c) for c in configs)
    if wanted and _context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def _context() -> multiprocessing.context.BaseContext:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(PRELOAD)
    return context


def _start_worker(cwd: str, environ: dict[str, str]) -> None:
    """A worker sees the folder and environment of the run now (the fork server kept those of its own start);
    Ctrl-C is the run's to handle: it stops the workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(environ)


@contextmanager
def starting(pool: Executor) -> Iterator[None]:
    """While workers start: a Ctrl-C is held until each started process is the pool's to stop (one interrupted
    halfway would be left behind, unknown to the pool), then raised as it came. Threads need no such care."""
    if not isinstance(pool, ProcessPoolExecutor) or threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)  # the run's own handler takes it now


def result(future: Future[CaseRecord], case: Case, repeat: int) -> CaseRecord:
    """A case's record; a worker process that died (killed, out of memory) fails its cases, as an error would."""
    try:
        return future.result()
    except BrokenProcessPool as exc:
        return CaseRecord.failed(case.id, case.pool, repeat, f"{case.directory / 'case.toml'}: the worker process "
                                                             f"running the case stopped: {exc}")


def stop(pool: Executor, futures: Iterable[Future[CaseRecord]], grace_s: float | None) -> None:
    """Start nothing new and wait for the cases in flight, at most `grace_s` (None: until they end); then
    a process pool's workers still in a case are ended (a thread cannot be; it is left to finish)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # gone once shut down
    pool.shutdown(wait=False, cancel_futures=True)
    in_flight = [f for f in futures if not f.cancelled()]  # a cancelled future never reports done to wait()
    wait(in_flight, timeout=grace_s)
    for process in processes:  # concurrent.futures has terminate_workers() only from Python 3.14
        process.terminate()
    for process in processes:
        process.join(1.0)


def largest_first(todo: list[tuple[Case, int]]) -> list[tuple[Case, int]]:
    """The largest session files start first, so that no long case is left to run alone at the end."""
    return sorted(todo, key=lambda item: -_session_bytes(item[0]))


def _session_bytes(case: Case) -> int:
    try:
        return (case.directory / case.session_file).stat().st_size
    except OSError:
        return 0
