"""The scripted model: a responder for the emulator that replays a case's steps to a real agent runtime.

Each request is classified by the runtime's signatures. A turn request is checked against the next step
(alignment.py) and answered with it, its calls mapped onto the tools the request offers (mapping.py); a
compaction request goes to the summarizer under test (any ModelClient) and its answer comes back in the
request's own wire; a side request (a session title, a memory extraction) gets a short fixed reply. Once a
case drifts it stays stopped: every later turn request gets the same drift error, so nothing is answered
wrongly. Every request is logged when a RequestLog is given.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.models.base import ModelClient, ModelRequest
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.reply import Exchange, Reply
from harness.scripted.alignment import carries, drift
from harness.scripted.faults import FaultPlan, SummaryFault, cut
from harness.scripted.log import RequestLog
from harness.scripted.mapping import SHELL_COMMAND, NoToolForCall, mapped_call
from harness.scripted.signatures import Signatures
from harness.scripted.steps import CLOSING_TEXT, Script, ScriptStep

SIDE_REPLY = "Replayed session"
SUMMARY_LABEL = "summary:runtime-compaction"  # the builtin answers a request with this label in summary mode


@dataclass(frozen=True)
class Outcome:
    """How a replay went: every step used once and no drift is exit code 0, anything else 1."""

    steps: int
    used: int
    compactions: int
    side_requests: int
    stopped: str | None  # the drift (or the error) that stopped the case

    @property
    def exit_code(self) -> int:
        return 0 if self.stopped is None and self.used == self.steps else 1

    def describe(self) -> str:
        head = f"{self.used} of {self.steps} steps used, {self.compactions} compaction request(s), " \
               f"{self.side_requests} side request(s)"
        return f"{head}; stopped: {self.stopped}" if self.stopped else head


class ScriptedModel:
    """Call it as the emulator's responder: `Emulator(responder=ScriptedModel(...))`."""

    def __init__(self, script: Script, *, signatures: Signatures, summarizer: ModelClient,
                 workspace: str | Path | None = None, log: RequestLog | None = None, side_reply: str = SIDE_REPLY,
                 fault: SummaryFault | None = None, shell_command: str = SHELL_COMMAND):
        self.script, self.signatures, self.summarizer = script, signatures, summarizer
        self.shell_command = shell_command  # what a recorded call runs through a shell tool
        self.faults = FaultPlan(fault)
        self._injected: dict[int, str] = {}  # id of a request being answered -> the fault it got
        self.workspace = Path(workspace).resolve() if workspace is not None else None
        self.log, self.side_reply = log, side_reply
        self.used = 0
        self.compactions = 0
        self.side_requests = 0
        self.stopped: str | None = None
        self._last: tuple[str, Reply] | None = None  # (fingerprint of the last turn request, its reply)
        self._summaries: set[str] = set()  # every summary answered, to know it when it comes back newest
        self._compacted = False  # a summarization request came since the last turn request
        # how many prompts the driver has sent (None: not told, as `serve --script` is not): a runtime's
        # continuation after a compaction at a turn's end must not take the next turn's first step
        self.prompts_sent: int | None = None
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest, exchange: Exchange) -> Reply:
        kind = self.signatures.classify(request, exchange.headers)
        if kind == "compaction":
            fault = self.faults.take()
            self._record(exchange, kind, note=f"injected fault: {fault}" if fault else None)
            if fault is None:
                return self._summarize(request)
            with self._lock:
                self._injected[id(request)] = fault
            return self._faulted(request, fault)
        if kind == "side":
            self._record(exchange, kind)
            with self._lock:
                self.side_requests += 1
            return Reply(self.side_reply)
        with self._lock:
            return self._turn(request, exchange)

    def injected(self, request: ModelRequest) -> str | None:
        """The fault the request (being answered, or just answered) got; asked once, by the observer."""
        with self._lock:
            return self._injected.pop(id(request), None)

    def outcome(self) -> Outcome:
        with self._lock:
            return Outcome(len(self.script.steps), self.used, self.compactions, self.side_requests, self.stopped)

    # -- turns

    def _turn(self, request: ModelRequest, exchange: Exchange) -> Reply:
        fingerprint = _fingerprint(request)
        if self.stopped is None and self._last is not None and self._last[0] == fingerprint:
            self._record(exchange, "turn", self.used, "repeated request: the same step again")
            return self._last[1]  # a retry of the request just answered (a timeout, a client retry)
        reply: Reply | None = None
        resumed = False
        if self.stopped is None:
            step = self.script.steps[self.used] if self.used < len(self.script.steps) else None
            resumed = step is not None and (self.signatures.resumes(request, exchange.headers)
                                            or self._hands_back(request) or self._prompt_again(step, request))
            if resumed and step is not None and self._unprompted(step):
                return self._closing(exchange, fingerprint)
            self.stopped = None if resumed else drift(step, len(self.script.steps), request)
            if self.stopped is not None:  # a release whose prompt changed shows here: the signature is one line
                self.stopped += f"; {self.signatures.names[0] if len(self.signatures.names) == 1 else 'its'} " \
                                f"compaction signatures: {self.signatures.describe()}"
            if self.stopped is None and step is not None:
                try:
                    reply = _reply_for(step, request, self.workspace, self.shell_command)
                except NoToolForCall as exc:
                    self.stopped = f"step {step.number}: {exc}"
        if reply is None:
            self._record(exchange, "turn", None, f"refused: {self.stopped}")
            raise EmulatorError(400, "invalid_request_error", str(self.stopped))
        self.used += 1
        self._compacted = False
        self._last = (fingerprint, reply)
        self._record(exchange, "turn", self.used, "after the runtime's compaction" if resumed else None)
        return reply

    def _unprompted(self, step: ScriptStep) -> bool:
        """The next step opens a turn whose prompt the driver has not sent yet: the runtime goes on after a
        compaction at the end of a finished turn (opencode's "Continue if you have next steps")."""
        return self.prompts_sent is not None and step.before[0].kind == "user" and step.turn >= self.prompts_sent

    def _closing(self, exchange: Exchange, fingerprint: str) -> Reply:
        """The finished turn's answer to a continuation: it has nothing more to do; no step is taken."""
        reply = Reply(CLOSING_TEXT)
        self._compacted = False
        self._last = (fingerprint, reply)
        self._record(exchange, "turn", None, "after the runtime's compaction at a turn's end: closed, no step taken")
        return reply

    def _hands_back(self, request: ModelRequest) -> bool:
        """The newest message is a summary this model wrote: the runtime goes on after compacting mid-turn with
        nothing newer (Codex's remote compaction item, unsealed by the emulator, ends its input)."""
        last = request.messages[-1] if request.messages else None
        return last is not None and last.role == "user" and last.content.strip() in self._summaries

    def _prompt_again(self, step: ScriptStep, request: ModelRequest) -> bool:
        """Right after compacting mid-turn a runtime may hand the turn back by sending the turn's own prompt
        again (opencode does when that prompt is all of the turn it kept): the next step, unchecked."""
        newest = request.messages[-1] if request.messages else None
        return (self._compacted and step.before[0].kind == "tool" and newest is not None and newest.role == "user"
                and step.turn < len(self.script.prompts) and carries(newest.content, self.script.prompts[step.turn]))

    # -- compactions

    def _summarize(self, request: ModelRequest) -> Reply:
        ask = dataclasses.replace(request, tools=(), label=SUMMARY_LABEL)
        try:
            response = self.summarizer.complete(ask)
        except HarnessError as exc:  # a cassette miss, a missing key: the summarizer cannot answer
            raise EmulatorError(400, "invalid_request_error", f"summarizer {self.summarizer.spec}: {exc}") from None
        with self._lock:
            self.compactions += 1
            self._summaries.add(response.text.strip())
            self._compacted = True
        return Reply(response.text, (), "length" if response.truncated else "stop")

    def _faulted(self, request: ModelRequest, fault: str) -> Reply:
        """A summarization request answered with the fault instead of (or, cut, with part of) its summary."""
        reply = self.faults.before(fault)
        return reply if reply is not None else cut(self._summarize(request))

    def _record(self, exchange: Exchange, kind: str, step: int | None = None, note: str | None = None) -> None:
        if self.log is not None:
            self.log.write(path=exchange.path, headers=exchange.headers, body=exchange.payload, wire=exchange.wire,
                           stream=exchange.stream, kind=kind, step=step, note=note)


def _reply_for(step: ScriptStep, request: ModelRequest, workspace: Path | None, command: str) -> Reply:
    calls = tuple(mapped_call(call, request.tools, workspace, command) for call in step.calls)
    return Reply(step.text, calls, "tool_calls" if calls else "stop")


def _fingerprint(request: ModelRequest) -> str:
    """Identifies a request by its length and newest message: a runtime's retry repeats both."""
    newest = request.messages[-1] if request.messages else None
    text = f"{len(request.messages)}|{newest}" if newest is not None else "0"
    return hashlib.sha256(text.encode()).hexdigest()
