"""Cases set up for a runtime to replay: each case's script read, its workspace's fixtures written, its scripted
model built with the summarizer under test; several cases behind one server are told apart by the request's
model name (the case id). The runtime driver (the next issue) and `compaction-harness serve --script` start here.

Layout under the chosen folder: `<case id>/` is the workspace a runtime runs in, `<case id>.requests.jsonl` the
log of what it asked (kept outside the workspace, where the runtime's own tools never see it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harness.cases import load_case
from harness.errors import HarnessError
from harness.models.base import ModelClient, ModelRequest
from harness.models.builtin import BuiltinClient
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.reply import Exchange, Reply
from harness.models.registry import cassette_path, check_spec, open_client
from harness.scripted.fixtures import write_workspace
from harness.scripted.log import RequestLog
from harness.scripted.model import Outcome, ScriptedModel
from harness.scripted.normalise import key_normaliser
from harness.scripted.signatures import ALL, load_signatures
from harness.scripted.steps import Script, script_from_session

LOG_SUFFIX = ".requests.jsonl"


@dataclass
class Replay:
    case_id: str
    script: Script
    workspace: Path
    model: ScriptedModel
    log: RequestLog | None

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        self.model.summarizer.close()


def open_replay(case_dir: str | Path, workspace: str | Path, *, runtime: str = ALL,
                summarizer: ModelClient | None = None, log_path: str | Path | None = None) -> Replay:
    """Read the case, write its fixtures into `workspace`, and build the scripted model for `runtime`'s
    signatures (`all`: every runtime declared). The summarizer under test defaults to the builtin model;
    `log_path` (a JSON-lines file) keeps every request received."""
    case = load_case(case_dir)
    script = script_from_session(case.session)
    root = write_workspace(script, workspace, case.directory).resolve()
    log = RequestLog(log_path) if log_path is not None else None
    model = ScriptedModel(script, signatures=load_signatures(runtime), summarizer=summarizer or BuiltinClient(),
                          workspace=root, log=log)
    return Replay(case.id, script, root, model, log)


def summarizer_for(spec: str, case_id: str, workspace: Path, *, cassettes: str | Path | None = None,
                   record_mode: str = "none") -> ModelClient:
    """The summarizer under test for one case: builtin, or a model behind a cassette whose keys ignore what
    varies between runs of a runtime (normalise.py)."""
    check_spec(spec)
    if spec.strip() == "builtin":
        return BuiltinClient()
    path = cassette_path(cassettes, case_id, spec) if cassettes is not None else None
    return open_client(spec, cassette_path=path, record_mode=record_mode, case_id=case_id,
                       cassette_key=key_normaliser(str(workspace)))


class Replays:
    """Several replays behind one emulator: the responder routes by model name (the case id); a single
    replay answers whatever model name the runtime is configured with."""

    def __init__(self, replays: Sequence[Replay]):
        if not replays:
            raise HarnessError("no case to replay")
        self.replays = {replay.case_id: replay for replay in replays}
        if len(self.replays) != len(replays):
            raise HarnessError("the same case is given twice")

    def __call__(self, request: ModelRequest, exchange: Exchange) -> Reply:
        if len(self.replays) == 1:
            return next(iter(self.replays.values())).model(request, exchange)
        replay = self.replays.get(request.model)
        if replay is None:
            raise EmulatorError(404, "not_found_error", f"model {request.model!r}: no case of that id is being "
                                                        f"replayed ({', '.join(self.replays)})")
        return replay.model(request, exchange)

    def outcomes(self) -> dict[str, Outcome]:
        return {case_id: replay.model.outcome() for case_id, replay in self.replays.items()}

    def exit_code(self) -> int:
        return max(outcome.exit_code for outcome in self.outcomes().values())

    def close(self) -> None:
        for replay in self.replays.values():
            replay.close()


def open_replays(case_dirs: Sequence[str | Path], folder: str | Path, *, runtime: str = ALL,
                 summarizer: str = "builtin", cassettes: str | Path | None = None,
                 record_mode: str = "none") -> Replays:
    """Every case in `case_dirs` set up under `folder` (see the module docstring)."""
    root = Path(folder)
    load_signatures(runtime)  # an unknown runtime fails before any folder is written
    replays: list[Replay] = []
    for case_dir in case_dirs:
        case_id = load_case(case_dir).id
        workspace = root / case_id
        client = summarizer_for(summarizer, case_id, workspace.resolve(), cassettes=cassettes,
                                record_mode=record_mode)
        replays.append(open_replay(case_dir, workspace, runtime=runtime, summarizer=client,
                                   log_path=root / f"{case_id}{LOG_SUFFIX}"))
    return Replays(replays)
