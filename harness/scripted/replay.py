"""One case set up for a runtime to replay: the script read from the case, the workspace's fixtures written,
and the scripted model behind an emulator, in process or on loopback. The runtime driver (the next issue) and
`compaction-harness serve --script` both start here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.cases import load_case
from harness.models.base import ModelClient
from harness.models.builtin import BuiltinClient
from harness.scripted.fixtures import write_workspace
from harness.scripted.log import RequestLog
from harness.scripted.model import ScriptedModel
from harness.scripted.signatures import ALL, load_signatures
from harness.scripted.steps import Script, script_from_session

LOG_FILE = "requests.jsonl"


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
