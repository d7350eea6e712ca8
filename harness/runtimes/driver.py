"""One case through one real runtime: the fixtures in a scratch workspace, the scripted model behind the
emulator on loopback (the summarizer under test answering the runtime's own summarization requests), the
runtime configured in a scratch home and sent the case's user prompts through its headless continuation.
What comes out is what the server saw (observe.py) and the runtime's compactions (capture.py)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from harness.cases.schema import Case
from harness.models import _tokens
from harness.models.base import ModelClient
from harness.models.emulator import Emulator, EmulatorServer
from harness.runtimes import capture
from harness.runtimes.adapter import RuntimeAdapter, with_settings
from harness.runtimes.home import Settings, prepare, values
from harness.runtimes.observe import Observed, Observer
from harness.runtimes.process import RuntimeFailed
from harness.runtimes.session import open_session
from harness.scripted.canary import canary_for, planted
from harness.scripted.faults import SummaryFault
from harness.scripted.fixtures import write_workspace
from harness.scripted.log import RequestLog
from harness.scripted.model import Outcome, ScriptedModel
from harness.scripted.normalise import SCRATCH_PREFIX
from harness.scripted.signatures import signatures_from
from harness.scripted.steps import Script, script_from_session

MODEL_NAME = "harness-model"  # the model name the runtime is configured with; the emulator answers any name
LOG_FILE = "requests.jsonl"
NO_CACHE = 1 << 62  # a prompt size no request reaches: the server's prefix cache never runs


@dataclass
class Drive:
    """One case driven through one runtime."""

    runtime: str
    version: str
    script: Script
    outcome: Outcome
    seen: list[Observed]
    compactions: list[capture.RuntimeCompaction]
    seconds: float
    failure: str | None = None  # a drift, a crash or a timeout: the step and the runtime's last stderr lines
    # The runtime itself gave up a turn (alive, no drift: it ended a prompt without asking for the turn's next
    # step, e.g. pi's failed overflow recovery): a finding about the runtime, graded, not a harness error.
    stopped: str | None = None
    stopped_position: int | None = None  # the first case message it never asked for
    stderr_tail: tuple[str, ...] = field(default=())
    errors: tuple[str, ...] = ()  # what the runtime reported going wrong without losing a turn
    refused: int = 0  # requests the server refused before any model saw them (past the window)
    fault: SummaryFault | None = None  # injected on its summarization calls
    canary: str | None = None  # planted in its first short tool output
    hung: bool = False  # the harness's timeout ended it

    @property
    def ok(self) -> bool:
        return self.failure is None and (self.stopped is not None or self.outcome.exit_code == 0)


def base_url(server: EmulatorServer, wire: str) -> str:
    """OpenAI-style clients want the /v1 prefix; Anthropic and Gemini clients add their own paths."""
    return f"{server.url}/v1" if wire in ("openai-chat", "responses") else server.url


def drive(case: Case, adapter: RuntimeAdapter, binary: Path, version: str, summarizer: ModelClient,
          log_dir: Path, *, compaction: bool = True, window: int | None = None,
          max_output: int | None = None, settings: tuple[tuple[str, str], ...] = (),
          fault: SummaryFault | None = None, canary: bool = False, prompts: int | None = None) -> Drive:
    """`window` and `max_output` default to the case's (a run's --window/--set overrides them); `fault` is
    injected on its summarization calls, `canary` plants a secret in its first short tool output; `prompts`
    sends only that many of the case's prompts (a calibration, harness.runtimes.window)."""
    window = window or case.context_window
    max_output = max_output or case.max_output_tokens
    secret = canary_for(case.id) if canary else None
    script = script_from_session(planted(case.session, secret) if secret else case.session)
    signatures = signatures_from({adapter.name: adapter.signatures}, adapter.source)
    started = time.perf_counter()
    log_dir.mkdir(parents=True, exist_ok=True)
    log = RequestLog(log_dir / LOG_FILE)
    # the tokenizer loads once per process (seconds): load it while the runtime starts, not in its first request
    threading.Thread(target=_tokens.encode, args=("",), daemon=True).start()
    with scratch_folder(adapter.name) as scratch:
        workspace = write_workspace(script, Path(scratch) / "workspace", case.directory).resolve()
        model = ScriptedModel(script, signatures=signatures, summarizer=summarizer, workspace=workspace, log=log,
                              fault=fault)
        observer = Observer(model)
        # no prompt-cache simulation in the server: price.py simulates it once over what the runtime sent
        emulator = Emulator(responder=observer, windows={MODEL_NAME: window}, openai_min_cache_tokens=NO_CACHE)
        sent = Sent()
        try:
            with EmulatorServer(0, emulator=emulator) as server:
                chosen = Settings(base_url(server, adapter.wire), MODEL_NAME, window, max_output, compaction,
                                  tuple(with_settings(adapter, settings).items()))
                filled = values(adapter, binary, Path(scratch) / "home", workspace, chosen)
                sent = _send_all(adapter, filled, workspace, script, model, log_dir, prompts)
        finally:
            log.close()
    outcome = model.outcome()
    failure, stopped, errors = sent.failure or outcome.stopped, sent.stopped, sent.errors
    if fault is not None and failure is not None and outcome.stopped is None:
        # with a fault injected, its crash or hang is the runtime's finding; a crash is an error the user saw
        failure, stopped, errors = None, failure, errors + (() if sent.hung else (failure,))
    found = capture.compactions(observer.seen, script, case.session)
    position = capture.next_position(outcome.used, script, case.session) if stopped else None
    return Drive(adapter.name, version, script, outcome, observer.seen, found, time.perf_counter() - started,
                 failure, stopped, position, sent.tail, errors, len(emulator.requests) - len(observer.seen),
                 fault, secret, sent.hung)


@dataclass(frozen=True)
class Sent:
    """How sending the prompts ended: a failure (drift, crash, timeout) or a turn the runtime gave up."""

    failure: str | None = None
    stopped: str | None = None
    tail: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    hung: bool = False  # the harness's timeout ended the runtime


@contextmanager
def scratch_folder(name: str) -> Iterator[str]:
    """The case's scratch folder, removed after: the first free of /tmp/ch-NAME-00000000, -00000001, ...
    A runtime's prompts name it (pi's working directory, codex's home), so a name that is the same from run
    to run keeps their token counts the same too (a random one shifts them by a token or two)."""
    root = Path(tempfile.gettempdir())
    for number in itertools.count():
        path = root / f"{SCRATCH_PREFIX}{name}-{number:08d}"
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        try:
            yield str(path)
        finally:
            shutil.rmtree(path, ignore_errors=True)
        return


def _send_all(adapter: RuntimeAdapter, filled: dict, workspace: Path, script: Script,
              model: ScriptedModel, log_dir: Path, prompts: int | None = None) -> Sent:
    """Send every prompt; stop at the first drift, runtime failure or turn the runtime gave up."""
    env = prepare(adapter, filled, workspace)
    session = open_session(adapter, filled, workspace, env, log_dir)
    try:
        for number, prompt in enumerate(script.prompts[:prompts], start=1):
            session.send(prompt)
            if model.stopped:
                return Sent(model.stopped, None, session.stderr_tail(), tuple(session.errors))
            due = sum(1 for step in script.steps if step.turn < number)  # every step of this turn and before
            if model.used < due:  # later prompts would meet a script the runtime left behind: stop here
                said = session.last_error()
                return Sent(None, f"{adapter.name} ended prompt {number} without asking for step {model.used + 1}"
                            f"{f': {said}' if said else ''}", session.stderr_tail(), tuple(session.errors))
        return Sent(errors=tuple(session.errors))
    except RuntimeFailed as exc:
        if model.stopped:  # the runtime failed because the server refused a drifted request
            return Sent(model.stopped, None, exc.stderr_tail, tuple(session.errors))
        step = model.used + 1
        return Sent(f"{adapter.name} at step {step} (prompt {number}): {exc}", None, exc.stderr_tail,
                    tuple(session.errors), exc.timed_out)
    finally:
        session.close()
