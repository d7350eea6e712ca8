"""A case driven through a real runtime (harness.runtimes), ready for grading: the runtime's compactions become
the case's recorded ones, so the `recorded` policy replays them and probes, controls, headline, lost probes and
reports grade them as any run. A drift, crash or timeout fails the case (the others go on) naming the step and
the runtime's last stderr lines; the request log stays in the run folder."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harness.cases.schema import Case
from harness.errors import HarnessError
from harness.models.base import ModelClient
from harness.runtimes.capture import annotated
from harness.runtimes.driver import drive
from harness.models.pricing import load_prices
from harness.runtimes.price import Pricing, pricing_for
from harness.runtimes.record import drive_json


def driven_case(case: Case, installed: Any, summarizer: ModelClient, logs: Path | None, compaction: bool,
                window: int, max_output: int, settings: tuple[tuple[str, str], ...] = (), fault: Any = None,
                canary: bool = False, pricing: Pricing | None = None) -> tuple[Case, dict[str, Any]]:
    """(the case with the runtime's compactions as its session's, the drive as run.json keeps it, each
    compaction priced by `pricing`). With a fault injected, a runtime that crashes or hangs has stopped (a
    graded finding, as a turn it gives up); a drift still fails the case."""
    log_dir = (logs or Path(tempfile.mkdtemp(prefix="ch-runtime-logs-"))) / case.id
    done = drive(case, installed.adapter, installed.binary, installed.version, summarizer, log_dir,
                 compaction=compaction, window=window, max_output=max_output, settings=settings, fault=fault,
                 canary=canary)
    if not done.ok:
        tail = " | ".join(done.stderr_tail[-5:])
        raise HarnessError(f"{installed.adapter.pin} on {case.id}: {done.failure or done.outcome.describe()}"
                           f"{f'; stderr: {tail}' if tail else ''}; request log: {log_dir}")
    record = drive_json(done, case, window, pricing)  # of the case as recorded, before its compactions are replaced
    return case.with_session(annotated(case.session, done.compactions)), record


def pricing_of(plan: Any) -> Pricing:
    """The run's summarizer priced from its table (--prices over the shipped one), or the cost study's default."""
    return pricing_for(plan.config.summarizer_spec, plan.prices or load_prices(plan.config.prices))
