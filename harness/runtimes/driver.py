"""One case through one real runtime: the fixtures in a scratch workspace, the scripted model behind the
emulator on loopback (the summarizer under test answering the runtime's own summarization requests), the
runtime configured in a scratch home and sent the case's user prompts through its headless continuation, in
its sandbox (sandbox.py: loopback only, nothing of the machine in view but the system and the scratch folder).
What comes out is what the server saw (observe.py) and the runtime's compactions (capture.py).

A runtime killed by a signal, or a process of it that ends before its first request, fails the case (a
`fatal` failure: never a graded stop, even with a fault injected); only a runtime that ends a prompt itself,
having asked the server, without asking for the turn's next step, has stopped (graded)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from harness.cases.schema import Case
from harness.models import _tokens
from harness.models.base import ModelClient
from harness.models.emulator import Emulator, EmulatorServer
from harness.redact import redact
from harness.runtimes import capture
from harness.runtimes.adapter import RuntimeAdapter, with_settings
from harness.runtimes.home import Settings, prepare, values
from harness.runtimes.install import sandbox_reads
from harness.runtimes.observe import Observed, Observer
from harness.runtimes.process import RuntimeFailed, track_scratch
from harness.runtimes.sandbox import Sandbox, bridge, check
from harness.runtimes.session import ExecSession, open_session
from harness.scripted.canary import canary_for, planted
from harness.scripted.faults import SummaryFault
from harness.scripted.fixtures import RUNTIME_CONFIG, prepare_workspace
from harness.scripted.log import RequestLog
from harness.scripted.model import Outcome, ScriptedModel
from harness.scripted.normalise import SCRATCH_PREFIX
from harness.scripted.signatures import signatures_from
from harness.scripted.steps import Script, script_from_session
from harness.session import Session

MODEL_NAME = "harness-model"  # the model name the runtime is configured with; the emulator answers any name
LOG_FILE = "requests.jsonl"
NO_CACHE = 1 << 62  # a prompt size no request reaches: the server's prefix cache never runs
SERVED_PORT = 4096  # where a runtime's own server listens inside its sandbox (mode http)


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
    sandbox: str = "off"  # what confined it: "bubblewrap X.Y.Z", or "off" (--sandbox off)
    left_out: tuple[str, ...] = ()  # the case's files not copied into the workspace, each with why

    @property
    def ok(self) -> bool:
        return self.failure is None and (self.stopped is not None or self.outcome.exit_code == 0)


def base_url(server: EmulatorServer, wire: str) -> str:
    """OpenAI-style clients want the /v1 prefix; Anthropic and Gemini clients add their own paths."""
    return f"{server.url}/v1" if wire in ("openai-chat", "responses") else server.url


def drive(case: Case, adapter: RuntimeAdapter, binary: Path, version: str, summarizer: ModelClient,
          log_dir: Path, *, compaction: bool = True, window: int | None = None,
          max_output: int | None = None, settings: tuple[tuple[str, str], ...] = (),
          fault: SummaryFault | None = None, canary: bool = False, sandboxed: bool = True,
          prompts: int | None = None) -> Drive:
    """`window` and `max_output` default to the case's (a run's --window/--set overrides them); `fault` is
    injected on its summarization calls, `canary` plants a secret in its first short tool output; `sandboxed`
    False (--sandbox off) runs the runtime unconfined; `prompts` sends only that many of the case's prompts (a
    calibration, harness.runtimes.window)."""
    confinement = check() if sandboxed else "off"
    window = window or case.context_window
    max_output = max_output or case.max_output_tokens
    secret = canary_for(case.id) if canary else None
    script = script_from_session(planted(case.session, secret) if secret else case.session)
    if adapter.manual_compact:  # it is asked to compact where the user did: not a departure
        script = replace(script, departures=tuple(d for d in script.departures if d.kind != "manual-compaction"))
    signatures = signatures_from({adapter.name: adapter.signatures}, adapter.source)
    started = time.perf_counter()
    log_dir.mkdir(parents=True, exist_ok=True)
    log = RequestLog(log_dir / LOG_FILE)
    # the tokenizer loads once per process (seconds): load it while the runtime starts, not in its first request
    threading.Thread(target=_tokens.encode, args=("",), daemon=True).start()
    with scratch_folder(adapter.name) as scratch:
        workspace, left_out = prepare_workspace(script, Path(scratch) / "workspace", case.directory,
                                                (*RUNTIME_CONFIG, *adapter.workspace_config))
        workspace = workspace.resolve()
        model = ScriptedModel(script, signatures=signatures, summarizer=summarizer, workspace=workspace, log=log,
                              fault=fault, shell_command=adapter.shell_command)
        observer = Observer(model)
        # no prompt-cache simulation in the server: price.py simulates it once over what the runtime sent
        emulator = Emulator(responder=observer, windows={MODEL_NAME: window}, openai_min_cache_tokens=NO_CACHE)
        sent = Sent()
        try:
            with EmulatorServer(0, emulator=emulator) as server:
                port = server.httpd.server_address[1]
                box = Sandbox(Path(scratch), reads(adapter, binary), port, served_port(adapter, port)) if sandboxed \
                    else None
                chosen = Settings(base_url(server, adapter.wire), MODEL_NAME, window, max_output, compaction,
                                  tuple(with_settings(adapter, settings).items()))
                filled = values(adapter, binary, Path(scratch) / "home", workspace, chosen)
                with bridge(box, server.httpd.RequestHandlerClass) if box else nullcontext():
                    sent = _send_all(adapter, filled, workspace, script, model, log_dir, box,
                                     lambda: len(emulator.requests), manual_before(case.session, script), prompts)
        finally:
            log.close()
    outcome = model.outcome()
    failure, stopped, errors = _redacted(sent.failure or outcome.stopped), _redacted(sent.stopped), sent.errors
    if fault is not None and failure is not None and outcome.stopped is None and not sent.fatal:
        # with a fault injected, its crash or hang is the runtime's finding; a crash is an error the user saw
        failure, stopped, errors = None, failure, errors + (() if sent.hung else (failure,))
    found = capture.compactions(observer.seen, script, case.session, adapter.edits_context)
    position = capture.next_position(outcome.used, script, case.session) if stopped else None
    return Drive(adapter.name, version, script, outcome, observer.seen, found, time.perf_counter() - started,
                 failure, stopped, position, sent.tail, errors, len(emulator.requests) - len(observer.seen),
                 fault, secret, sent.hung, confinement, left_out)


def _redacted(text: str | None) -> str | None:
    return redact(text) if text else text


@dataclass(frozen=True)
class Sent:
    """How sending the prompts ended: a failure (drift, crash, timeout) or a turn the runtime gave up."""

    failure: str | None = None
    stopped: str | None = None
    tail: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    hung: bool = False  # the harness's timeout ended the runtime
    fatal: bool = False  # killed by a signal, or ended before its first request: a failure in every mode


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
        track_scratch(path, True)  # a stop of the command removes it too (process.end_all)
        try:
            yield str(path)
        finally:
            shutil.rmtree(path, ignore_errors=True)
            track_scratch(path, False)
        return


def reads(adapter: RuntimeAdapter, binary: Path) -> tuple[Path, ...]:
    """What the runtime may read in its sandbox: its install, and the adapter's own folder when the adapter runs
    a file beside it (`${adapter_dir}`: Inspect's driver script); a user's adapter folder is shown only then."""
    templates = (*adapter.first, *adapter.next, *adapter.env.values(), *adapter.files, *adapter.files.values())
    beside = (Path(adapter.source).parent,) if any("${adapter_dir}" in text for text in templates) else ()
    return (*sandbox_reads(binary), *beside)


def served_port(adapter: RuntimeAdapter, model_port: int) -> int | None:
    """Inside the sandbox the runtime's own server (mode http) has the loopback to itself but for the model
    server's relayed port: a fixed port other than that one."""
    if adapter.mode != "http":
        return None
    return SERVED_PORT if model_port != SERVED_PORT else SERVED_PORT + 1


def manual_before(session: Session, script: Script) -> frozenset[int]:
    """The prompts (numbered from 1) that the recorded session compacted by hand right before."""
    starts = script.prompt_positions
    return frozenset(next((n for n, start in enumerate(starts, start=1) if start >= record.position), 0)
                     for record in session.compactions if record.by_hand) - {0}


def _send_all(adapter: RuntimeAdapter, filled: dict, workspace: Path, script: Script, model: ScriptedModel,
              log_dir: Path, box: Sandbox | None, requests: Callable[[], int],
              manual: frozenset[int] = frozenset(), prompts: int | None = None) -> Sent:
    """Send every prompt (the first `prompts` of them: a calibration), each one the session compacted by hand
    before preceded by the runtime's own manual compaction (Claude Code's `/compact`; a runtime without one goes
    on); stop at the first drift, runtime failure or turn the runtime gave up. `requests` counts what the server
    received: a runtime process that ends having sent none never ran its prompt."""
    env = prepare(adapter, filled, workspace, box is not None)
    session = open_session(adapter, filled, workspace, env, log_dir, box)
    before = number = 0
    try:
        for number, prompt in enumerate(script.prompts[:prompts], start=1):
            before = requests() if isinstance(session, ExecSession) else 0
            if number in manual and adapter.manual_compact and number > 1:
                session.send(adapter.manual_compact)
            model.prompts_sent = number
            session.send(prompt)
            if model.stopped:
                return Sent(model.stopped, None, session.stderr_tail(), tuple(session.errors))
            if requests() == before:  # an exec process that asked nothing: a broken adapter, not a finding
                return Sent(f"{adapter.name} ended prompt {number} before its first request (exit "
                            f"{getattr(session, 'exit_code', None)})", None, session.stderr_tail(),
                            tuple(session.errors), fatal=True)
            due = sum(1 for step in script.steps if step.turn < number)  # every step of this turn and before
            if model.used < due:  # later prompts would meet a script the runtime left behind: stop here
                said = session.last_error()
                return Sent(None, f"{adapter.name} ended prompt {number} without asking for step {model.used + 1}"
                            f"{f': {said}' if said else ''}", session.stderr_tail(), tuple(session.errors))
        return Sent(errors=tuple(session.errors))
    except RuntimeFailed as exc:
        if model.stopped:  # the runtime failed because the server refused a drifted request
            return Sent(model.stopped, None, exc.stderr_tail, tuple(session.errors))
        early = requests() == before and not exc.timed_out
        why = " before its first request" if early else ""
        return Sent(f"{adapter.name} at step {model.used + 1} (prompt {number}): {exc}{why}", None, exc.stderr_tail,
                    tuple(session.errors), exc.timed_out, exc.killed is not None or early)
    finally:
        session.close()
