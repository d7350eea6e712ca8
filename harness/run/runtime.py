"""A case driven through a real runtime (harness.runtimes), ready for grading: the runtime's compactions become
the case's recorded ones, so the `recorded` policy replays them and probes, controls, headline, lost probes and
reports grade them as any run. A drift, crash or timeout fails the case (the others go on) naming the step and
the runtime's last stderr lines; the request log stays in the run folder.

What is graded at a probe point is what the runtime sent there (harness.runtimes.sent): its summary and kept
history, and the case's messages as its request at that point carried them (its own cuts of tool outputs
applied). With a control (`--runtime-control`) the case is driven again with the runtime's compaction off and a
window it never fills; the same probes graded on what that drive sent tell the probes lost to the runtime's own
cuts (lost in the control too) from those lost to its compaction (kept in the control)."""

from __future__ import annotations

import resource
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.cases.schema import Case
from harness.compaction import ContextSnapshot, Replay
from harness.errors import HarnessError
from harness.models.base import ModelClient
from harness.results.schema import ProbeRecord
from harness.runtimes.capture import annotated
from harness.runtimes.driver import drive
from harness.models.pricing import load_prices
from harness.runtimes.price import Pricing, pricing_for
from harness.runtimes.process import sandboxed_cpu
from harness.runtimes.record import cuts, drive_json
from harness.runtimes.sent import SentContexts, sent_contexts
from harness.runtimes.window import context_at, prompts_to_reach, recorded_point, rule_of, window_record
from harness.scripted.steps import script_from_session

CONTROL_WINDOW = 1 << 20  # the control's window: one no shipped case fills, so its runtime never has to compact
LOST_GRADES = ("retained", "answered")


@dataclass(frozen=True)
class Driven:
    case: Case  # with the runtime's compactions as its session's
    record: dict[str, Any]  # the drive as run.json keeps it (outcome.runtime)
    sent: SentContexts
    control: SentContexts | None = None  # what the control drive sent (None: no control, or it failed)


def driven_case(case: Case, installed: Any, summarizer: ModelClient, logs: Path | None, compaction: bool,
                window: int, max_output: int, settings: tuple[tuple[str, str], ...] = (), fault: Any = None,
                canary: bool = False, control: bool = False, pricing: Pricing | None = None,
                sandboxed: bool = True, recorded_window: bool = False) -> Driven:
    """With a fault injected, a runtime that crashes or hangs has stopped (a graded finding, as a turn it gives
    up); a drift still fails the case. The control drive (`control`) gets no fault and no canary. Each
    compaction is priced by `pricing`. `recorded_window`: the window at which the runtime's own trigger fires
    where the recorded session compacted (calibrated first, harness.runtimes.window)."""
    log_dir = (logs or Path(tempfile.mkdtemp(prefix="ch-runtime-logs-"))) / case.id
    chosen = None
    if recorded_window:
        window, chosen = calibrated_window(case, installed, summarizer, log_dir, window, max_output, settings,
                                           sandboxed)
    before = cpu_seconds()
    done = drive(case, installed.adapter, installed.binary, installed.version, summarizer, log_dir,
                 compaction=compaction, window=window, max_output=max_output, settings=settings, fault=fault,
                 canary=canary, sandboxed=sandboxed)
    if not done.ok:
        raise HarnessError(f"{installed.adapter.pin} on {case.id}: {_failure(done)}; request log: {log_dir}")
    record = drive_json(done, case, window, pricing)  # of the case as recorded, before its compactions are replaced
    record["cpu_seconds"] = {k: round(v - w, 2) for (k, v), w in zip(cpu_seconds().items(), before.values())}
    if chosen is not None:
        record["window"] = chosen
    sent = sent_contexts(done.seen, done.script, case.session)
    driven = Driven(case.with_session(annotated(case.session, done.compactions)), record, sent)
    if not control:
        return driven
    checked = drive(case, installed.adapter, installed.binary, installed.version, summarizer, log_dir / "control",
                    compaction=False, window=max(window, CONTROL_WINDOW), max_output=max_output, settings=settings,
                    sandboxed=sandboxed)
    if not checked.ok or checked.stopped:  # the run stands; the split is left out, saying why
        return replace(driven, record={**record, "control": {"failure": f"{_failure(checked)}; request log: "
                                                                         f"{log_dir / 'control'}"}})
    about = {"seconds": round(checked.seconds, 2), "compactions": len(checked.compactions), **cuts(checked, case)}
    return replace(driven, record={**record, "control": about},
                   control=sent_contexts(checked.seen, checked.script, case.session))


def cpu_seconds() -> dict[str, float]:
    """CPU seconds so far of this process (the harness: its server threads, the scripted model, the request log,
    capture and pricing, and the sandbox's relays) and of the runtime's processes that have ended (this
    process's children, or as measured inside their sandbox). A drive's share is the difference across it;
    with cases run side by side in one process (--concurrency) the harness's includes theirs."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    boxed = sandboxed_cpu()
    return {"harness": mine.ru_utime + mine.ru_stime + boxed["relay"],
            "runtime": children.ru_utime + children.ru_stime + boxed["runtime"]}


def calibrated_window(case: Case, installed: Any, summarizer: ModelClient, log_dir: Path, window: int,
                      max_output: int, settings: tuple[tuple[str, str], ...],
                      sandboxed: bool = True) -> tuple[int, dict[str, Any]]:
    """The window at which the runtime's own trigger rule fires at the context it carries where the recorded
    session first compacted, read from a drive with its compaction off up to that turn; the case's `window`
    when the session never compacted."""
    adapter = installed.adapter
    rule = rule_of(adapter)
    if rule is None:
        raise HarnessError(f"--window recorded: the adapter {adapter.source} states no [compaction] trigger rule")
    position = recorded_point(case)
    if position is None:
        return window, window_record(rule, None, None, window, 0.0)
    prompts = prompts_to_reach(script_from_session(case.session), case, position)
    calibration = drive(case, adapter, installed.binary, installed.version, summarizer, log_dir / "calibration",
                        compaction=False, window=CONTROL_WINDOW, max_output=max_output, settings=settings,
                        prompts=prompts, sandboxed=sandboxed)
    context = context_at(calibration.seen, calibration.script, case, position)
    if calibration.failure or calibration.stopped or context is None:
        raise HarnessError(f"{adapter.pin} on {case.id}: the calibration drive for --window recorded did not reach "
                           f"message {position}: {_failure(calibration)}; request log: {log_dir / 'calibration'}")
    chosen = rule.window_for(context, max_output)
    if chosen is None:
        raise HarnessError(f"--window recorded: {adapter.pin}'s rule {rule.text!r} never fires at {context} tokens "
                           f"({case.id}, message {position})")
    return chosen, window_record(rule, position, context, chosen, calibration.seconds)


def _failure(done: Any) -> str:
    tail = " | ".join(done.stderr_tail[-5:])
    return f"{done.failure or done.stopped or done.outcome.describe()}{f'; stderr: {tail}' if tail else ''}"


def as_sent(snapshots: dict[str, ContextSnapshot], sent: SentContexts) -> dict[str, ContextSnapshot]:
    """Each probe point's context with the case's messages as the runtime's request there carried them."""
    return {point: replace(s, sent=sent.at(s.end)) for point, s in snapshots.items()}


def control_case(case: Case, replay: Replay, control: SentContexts) -> tuple[Case, Replay]:
    """The control to grade: the case over its history as the control drive last sent it (each tool output as
    the runtime cut it), whose `full` condition (or oracle, past the answerer's window) is the control's context:
    the ceiling as the runtime's own cuts leave it. Its compacted and floor contexts, at the run's probe points,
    are left empty: only `full` is read."""
    session = case.session
    messages = list(session.messages)
    for index, content in control.at(len(messages)):
        messages[index] = replace(messages[index], content=content)
    cut = case.with_session(replace(session, messages=tuple(messages)))
    empty = {point: ContextSnapshot(point, s.end, s.end, None, 0, 0, 0) for point, s in replay.snapshots.items()}
    return cut, Replay(cut.session, snapshots=empty)


def split(run: list[ProbeRecord], control: list[ProbeRecord]) -> dict[str, Any]:
    """Per grade, the valid probes the run lost: to the runtime's own cuts (the control lost them too), to its
    compaction (the control kept them), and all of them; and any the control lost but the run kept."""
    kept = {p.id: dict(p.conditions or ()).get("full") for p in control}
    out: dict[str, Any] = {}
    for grade in LOST_GRADES:
        lost = [p.id for p in run if p.valid and _fails(dict(p.conditions or ()).get("compacted"), grade)]
        if not any(_graded(dict(p.conditions or ()).get("compacted"), grade) for p in run):
            continue  # not graded this way (no answerer)
        in_control = {pid for pid, g in kept.items() if _fails(g, grade)}
        valid = {p.id for p in run if p.valid}
        out[grade] = {"lost_to_cuts": [p for p in lost if p in in_control],
                      "lost_to_compaction": [p for p in lost if p not in in_control],
                      "lost": lost, "lost_in_control_only": sorted((in_control & valid) - set(lost))}
    return out


def _graded(grade: Any, name: str) -> bool:
    return grade is not None and getattr(grade, name) is not None


def _fails(grade: Any, name: str) -> bool:
    return grade is not None and getattr(grade, name) is False


def pricing_of(plan: Any) -> Pricing:
    """The run's summarizer priced from its table (--prices over the shipped one), or the cost study's default."""
    return pricing_for(plan.config.summarizer_spec, plan.prices or load_prices(plan.config.prices))
