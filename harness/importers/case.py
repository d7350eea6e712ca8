"""An imported case on disk: its case.toml text (provenance comments, no probes yet, probe help) written
through the one case writer in `harness.cases`."""

from __future__ import annotations

from pathlib import Path

from harness.cases import case_toml, write_case_files
from harness.errors import HarnessError, InputError
from harness.importers.report import CaseMeta, ImportReport
from harness.session import Session
from harness.validate import safe_segment

PROBE_HELP = """\
# Probes: none yet. Add one [[probe]] table per question (kinds: goal, constraint, artifact, decision, error,
# recall, update, progress, continuation); `compaction-harness cases probe-draft CASE` proposes candidates.
# planted_at = index of the message where the fact was last established (non-system messages from 0,
# compaction lines excluded). Every `all` item must appear in the answer (an item may be a list of
# alternatives); no `none` item may.
#
# [[probe]]
# id = "bug-file"
# kind = "artifact"
# question = "Which file did the agent modify to fix the bug?"
# all = ["path/to/file.py"]
# none = []
# planted_at = 23
"""


def imported_case_toml(case_id: str, meta: CaseMeta, report: ImportReport | None = None,
                       session_file: str = "session.jsonl") -> str:
    """case.toml of an imported case: where it came from and what the import did, as comments."""
    comments = [f"Imported from {meta.source} ({meta.format}) by `compaction-harness cases import`."]
    if report is not None:
        comments += [f"  {line}" for line in report.lines() if not line.startswith("format:")]
    return case_toml(case_id=case_id, title=meta.title, pool=meta.pool, session_file=session_file,
                     model_name=meta.model, context_window=meta.context_window,
                     max_output_tokens=meta.max_output_tokens, comments=comments, trailer=PROBE_HELP)


def write_case(out_dir: str | Path, session: Session, report: ImportReport, meta: CaseMeta, *,
               overwrite: bool = False) -> Path:
    """Write `session.jsonl` and `case.toml` into out_dir (the case id is the folder name); returns case.toml.
    A case `run` would refuse is never written."""
    case_id = Path(out_dir).resolve().name
    refuse_unrunnable(case_id, session, meta, Path(out_dir))
    return write_case_files(out_dir, session, imported_case_toml(case_id, meta, report), overwrite=overwrite)


def refuse_unrunnable(case_id: str, session: Session, meta: CaseMeta, out: Path) -> None:
    """What the case loader and `run` check, said before anything is written."""
    source = meta.source or "the transcript"
    if not session.messages:
        raise HarnessError(f"{source}: holds no message to replay (a system prompt alone is not a session); "
                           f"no case written")
    for name, value in (("context window", meta.context_window), ("max output tokens", meta.max_output_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise HarnessError(f"{source}: {name} {value!r}: must be a whole number of 1 or more; no case written")
    try:
        safe_segment(case_id, str(out), "the case folder's name (the case id)")
    except InputError as exc:
        raise HarnessError(f"{exc}; no case written") from None
