"""A policy implemented in any language, run as a subprocess speaking JSON lines on stdin/stdout.

`--policy cmd:"node adapter.js"` starts the command once per replay. The harness sends the adapter each
send point (only the messages added since the previous one: role and estimated tokens), the adapter
answers `keep` or a plan, the harness makes the summarizer call itself (so recording, caching and cost
stay in one place) and tells the adapter what it folded. The messages are described in
`adapters/protocol.schema.json`; `adapters/default-policy.js` is a reference adapter implementing the
policy under test.

Anything the adapter does wrong (cannot start, exits, hangs past the timeout, answers with something
that is not the protocol) is a one-line `HarnessError` naming the command.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, NoReturn

from harness.errors import HarnessError
from harness.policy.base import ContextView, ModelSummary, Plan, Policy, PolicyConfig, SendPoint, Tail
from harness.session import Session

PROTOCOL_VERSION = 1
TIMEOUT_ENV = "COMPACTION_HARNESS_POLICY_TIMEOUT"  # seconds an adapter may take to answer one message
DEFAULT_TIMEOUT_S = 10.0
ADAPTERS = Path(__file__).parent / "adapters"
REFERENCE_ADAPTER = ADAPTERS / "default-policy.js"
SCHEMA = ADAPTERS / "protocol.schema.json"

PLAN_FIELDS = {"action", "tail_start", "turns_kept", "steps_kept", "truncated_to_step", "summarize",
               "summary_tokens", "tool_result_chars", "kept_head"}


class ExternalPolicy(Policy):
    """A `Policy` over a subprocess. Stateful: one process per replay (begin ... end)."""

    def __init__(self, command: str, config: PolicyConfig, timeout_s: float | None = None):
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise HarnessError(f"policy cmd:{command}: cannot parse the command ({exc})") from None
        if not self.argv:
            raise HarnessError("policy cmd: needs a command, e.g. cmd:\"node adapter.js\"")
        self.command, self.config, self.name = command, config, f"cmd:{command}"
        self.timeout_s = timeout_s if timeout_s is not None else _timeout_from_env()
        self._process: subprocess.Popen | None = None
        self._pending: Plan | None = None

    @classmethod
    def from_command(cls, command: str, config: PolicyConfig) -> ExternalPolicy:
        return cls(command.strip(), config)

    def check_ready(self) -> None:
        if shutil.which(self.argv[0]) is None:
            raise HarnessError(f"policy adapter `{self.command}` cannot start: no program {self.argv[0]!r} (not on "
                               f"PATH, or not an executable file)")

    # -- lifecycle (called by the compactor) ----------------------------------------------------

    def begin(self, session: Session, tokens: Callable[[int], int], system_tokens: int) -> None:
        self.end()  # one policy object may serve several replays (sweeps): a fresh process each time
        self._roles = [m.role for m in session.messages]
        self._tokens, self._sent, self._pending, self._where = tokens, 0, None, "start"
        self._stderr = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr, bufsize=0)
        except OSError as exc:
            raise HarnessError(f"policy adapter `{self.command}` cannot start: {exc.strerror or exc}") from None
        self._buffer = bytearray()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._process.stdout, selectors.EVENT_READ)
        answer = self._exchange({"type": "start", "protocol": PROTOCOL_VERSION, "config": asdict(self.config),
                                 "system_tokens": system_tokens, "messages": len(self._roles)})
        if answer.get("type") != "ready":
            self._fail(f"answered the start message with {_short(answer)} instead of {{\"type\": \"ready\"}}")

    def end(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.write(b'{"type":"end"}\n')
            process.stdin.close()
        except OSError:
            pass  # it already exited; nothing to tell it
        try:
            process.wait(timeout=min(2.0, self.timeout_s))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._selector.close()
        process.stdout.close()
        self._stderr.close()

    # -- the Policy interface -------------------------------------------------------------------

    def should_compact(self, send: SendPoint) -> bool:
        if self._process is None:
            raise HarnessError(f"policy cmd:{self.command} is driven by the compactor (begin was not called)")
        new = [[self._roles[i], self._tokens(i)] for i in range(self._sent, send.index)]
        self._sent, self._where = send.index, f"send {send.index}"
        answer = self._exchange({"type": "send", "index": send.index, "context_tokens": send.context_tokens,
                                 "mid_turn": send.mid_turn, "new": new})
        action = answer.get("action")
        if action == "keep":
            self._pending = None
            return False
        if action == "compact":
            self._pending = self._plan_from(answer)
            return True
        self._fail(f"answered {_short(answer)}; expected {{\"action\": \"keep\"}} or {{\"action\": \"compact\", ...}}")

    def plan(self, view: ContextView) -> Plan:
        plan, self._pending = self._pending, None
        if plan is None:
            raise HarnessError(f"policy adapter `{self.command}`: plan asked without a compact answer")
        if not view.live_start <= plan.tail_start <= view.end:
            self._fail(f"chose tail_start {plan.tail_start} outside the live context "
                       f"[{view.live_start}, {view.end}]")
        if plan.tail_start < view.end and self._roles[plan.tail_start] == "tool":
            self._fail(f"chose tail_start {plan.tail_start}, a tool result: a cut never separates a call "
                       f"from its result")
        if any(not 0 <= i < view.end for i in plan.tail.kept_head):
            self._fail(f"kept_head {list(plan.tail.kept_head)} names messages outside [0, {view.end})")
        return plan

    def folded(self, tail_start: int, kept: tuple[int, ...], summary: str | None, summary_tokens: int) -> None:
        self._pending = None
        answer = self._exchange({"type": "fold", "tail_start": tail_start, "kept": list(kept),
                                 "summary": summary, "summary_tokens": summary_tokens})
        if answer.get("type") != "folded":
            self._fail(f"answered the fold with {_short(answer)} instead of {{\"type\": \"folded\"}}")

    # -- the wire -------------------------------------------------------------------------------

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            self._process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        except OSError:
            self._fail("exited before reading its input")
        line = self._read_line()
        try:
            answer = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._fail(f"answered with malformed JSON ({exc}): {_short(line)}")
        if not isinstance(answer, dict):
            self._fail(f"answered {_short(line)}, not a JSON object")
        return answer

    def _read_line(self) -> bytes:
        deadline = time.monotonic() + self.timeout_s
        fd = self._process.stdout.fileno()
        while (newline := self._buffer.find(b"\n")) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                self._fail(f"did not answer within {self.timeout_s:g} s (set {TIMEOUT_ENV} to allow longer)")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self._fail("exited without answering")
            self._buffer += chunk
        line = bytes(self._buffer[:newline])
        del self._buffer[:newline + 1]
        return line

    def _fail(self, problem: str) -> NoReturn:
        process = self._process
        detail = ""
        if process is not None:
            if process.poll() is None:
                process.kill()
            code = process.wait()
            self._stderr.seek(0)
            line = _telling_line(self._stderr.read().decode(errors="replace"))
            detail = f" (exit code {code}" + (f"; stderr: {line}" if line else "") + ")"
            self.end()
        raise HarnessError(f"policy adapter `{self.command}` {problem} at {self._where}{detail}")

    def _plan_from(self, answer: dict[str, Any]) -> Plan:
        unknown = sorted(set(answer) - PLAN_FIELDS)
        if unknown:
            self._fail(f"sent a plan with unknown field {unknown[0]!r}")

        def field(name: str, kind: type, default: Any, optional: bool = False) -> Any:
            value = answer.get(name, default)
            if value is None and optional:
                return None
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                self._fail(f"sent a plan whose {name} is {value!r}, not {kind.__name__}")
            return value

        if "tail_start" not in answer:
            self._fail("sent a compact plan without tail_start")
        kept = field("kept_head", list, [])
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in kept):
            self._fail(f"sent kept_head {kept!r}, not a list of message indices")
        tail = Tail(start=field("tail_start", int, None), turns=field("turns_kept", int, 0),
                    steps=field("steps_kept", int, 0), truncated_to_step=field("truncated_to_step", bool, False),
                    kept_head=tuple(kept))
        summarize = field("summarize", bool, True)
        summary = ModelSummary(budget_tokens=field("summary_tokens", int, None, optional=True),
                               tool_result_chars=field("tool_result_chars", int, None, optional=True))
        return Plan(tail, summary if summarize else None)


def _timeout_from_env() -> float:
    raw = os.environ.get(TIMEOUT_ENV)
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise HarnessError(f"{TIMEOUT_ENV}={raw!r}: expected a positive number of seconds")
    return value


def _telling_line(stderr: str) -> str:
    """The stderr line most likely to say what went wrong: the last one naming an error, else the last."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or [""])[-1][:200]


def _short(value: Any) -> str:
    text = value.decode(errors="replace") if isinstance(value, bytes) else json.dumps(value) \
        if not isinstance(value, str) else value
    text = text.replace("\n", " ")
    return text if len(text) <= 120 else text[:117] + "..."
