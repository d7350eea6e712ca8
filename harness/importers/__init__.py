"""Real agent transcripts -> canonical `session.jsonl` + `case.toml` (FORMATS.md, issue 8).

Public API (the CLI calls these):

- `import_transcript(path, fmt="auto", *, window=None, model=None, max_output_tokens=None, title=None,
  pool="autonomous") -> (Session, ImportReport, CaseMeta)`
- `detect(path_or_text) -> str`: the format name `--from auto` would choose
- `write_case(out_dir, session, report, meta) -> Path`: writes session.jsonl and case.toml, returns the toml path
- `draft_probes(case_dir) -> list[dict]` and `render_probes(probes) -> str`: candidate probes, `draft = true`
  (they live in `harness.cases.drafts`; re-exported here for the `cases` commands)
- `FORMATS`: name -> (description, importer function)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from harness.cases import draft_probes, render_probes
from harness.errors import HarnessError, InputError
from harness.input_file import gunzip, read_input
from harness.importers.anthropic_messages import import_anthropic_messages
from harness.importers.atif import import_atif
from harness.importers.case import write_case
from harness.importers.claude_code import import_claude_code
from harness.importers.claude_code_openai import import_claude_code_openai
from harness.importers.codex import import_codex
from harness.importers.mini_swe_agent import import_mini_swe_agent
from harness.importers.openai_chat import import_openai_chat
from harness.importers.sources import load_json
from harness.importers.report import DEFAULT_MAX_OUTPUT_TOKENS, CaseMeta, ImportReport, known_window
from harness.importers.swe_agent import import_swe_agent
from harness.session import Session
from harness.validate import MAX_JSON_DEPTH, depth_exceeds

__all__ = ["FORMATS", "CaseMeta", "ImportReport", "detect", "draft_probes", "import_transcript", "render_probes",
           "write_case"]

Importer = Callable[[str, str, ImportReport], Session]

FORMATS: dict[str, tuple[str, Importer]] = {
    "claude-code": ("Claude Code native session JSONL", import_claude_code),
    "claude-code-openai": ("Claude Code exported as OpenAI chat", import_claude_code_openai),
    "codex": ("Codex CLI rollout JSONL", import_codex),
    "openai": ("OpenAI chat message array", import_openai_chat),
    "anthropic": ("Anthropic messages array", import_anthropic_messages),
    "mini-swe-agent": ("mini-swe-agent trajectory (.traj.json)", import_mini_swe_agent),
    "swe-agent": ("SWE-agent trajectory (.traj)", import_swe_agent),
    "atif": ("ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.x)", import_atif),
}


def detect(source: str | Path, text: str | None = None) -> str:
    """The format of a transcript file, from its content (not its name). Raises HarnessError if unknown."""
    path = str(source)
    if text is None:
        text = _read(path)
    stripped = text.lstrip()
    if not stripped:
        raise InputError(path, None, None, "the file is empty; cannot detect its format")
    try:
        document = load_json(text, path)
    except json.JSONDecodeError:
        document = None
        first_lines = [line for line in text.splitlines() if line.strip()][:20]
        records = []
        for number, line in enumerate(first_lines, start=1):
            try:
                records.append(load_json(line, path, number))
            except json.JSONDecodeError:
                break
        if records and all(isinstance(r, dict) for r in records):
            if all("payload" in r and "type" in r for r in records):
                return "codex"
            if all(isinstance(r.get("type"), str) and "payload" not in r for r in records) and \
                    any("uuid" in r or "sessionId" in r for r in records):
                return "claude-code"
    else:
        if isinstance(document, dict) and document.get("type") and "payload" in document:
            return "codex"  # a one-line rollout
        if isinstance(document, dict) and str(document.get("schema_version", "")).startswith("ATIF-"):
            return "atif"
        if isinstance(document, dict) and document.get("format") == "openai-chat":
            return "claude-code-openai"
        if isinstance(document, dict) and "history" in document and "trajectory" in document:
            return "swe-agent"
        if isinstance(document, dict) and isinstance(document.get("messages"), list) and (
                str(document.get("trajectory_format", "")).startswith("mini-swe-agent") or
                ("info" in document and any(isinstance(m, dict) and "extra" in m for m in document["messages"]))):
            return "mini-swe-agent"
        messages = document.get("messages") if isinstance(document, dict) else document
        if isinstance(messages, list) and all(isinstance(m, dict) and "role" in m for m in messages) and messages:
            if isinstance(document, dict) and "system" in document:
                return "anthropic"
            for message in messages:
                content = message.get("content")
                if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in
                                                     ("tool_use", "tool_result", "thinking") for b in content):
                    return "anthropic"
                if message.get("tool_calls") or message.get("role") in ("tool", "system", "developer"):
                    return "openai"
            return "openai"  # plain text chat: both shapes agree
    raise HarnessError(f"{path}: cannot detect the transcript format; pass --from with one of: {', '.join(FORMATS)}")


def import_transcript(path: str | Path, fmt: str = "auto", *, window: int | None = None, model: str | None = None,
                      max_output_tokens: int | None = None, title: str | None = None,
                      pool: str = "autonomous") -> tuple[Session, ImportReport, CaseMeta]:
    """Import one transcript. `window` / `model` override what the transcript says; without a window in the
    transcript or the known-model table, `window` is required."""
    path = str(path)
    text = _read(path)
    if depth_exceeds(text, MAX_JSON_DEPTH):  # json.loads would recurse out on it, in detect or the importer
        raise InputError(path, None, None, f"the transcript nests deeper than {MAX_JSON_DEPTH} levels")
    report = ImportReport(source=path)
    if fmt == "auto":
        fmt = detect(path, text)
        report.detected = True
    if fmt not in FORMATS:
        raise HarnessError(f"unknown transcript format {fmt!r}; expected auto or one of: {', '.join(FORMATS)}")
    report.format = fmt
    session = _parsed(FORMATS[fmt][1], text, path, report)
    if model:
        report.model = model
    if window is not None:
        if report.window and report.window != window:
            report.notes.append(f"the transcript says window {report.window}; --window {window} wins")
        report.window, report.window_source = window, "--window"
    elif report.window is None:
        report.window, report.window_source = _table_window(report.model)
        if report.window is None:
            raise HarnessError(f"{path}: the context window is unknown (model {report.model or 'not named'}); "
                               f"pass --window TOKENS")
    meta = CaseMeta(
        title=title or _title(session, path),
        context_window=report.window,
        max_output_tokens=max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
        model=report.model,
        pool=pool,
        source=Path(path).name,
        format=fmt,
    )
    return session, report, meta


def _parsed(importer: Importer, text: str, path: str, report: ImportReport) -> Session:
    """The importer's session; a transcript of a shape it does not expect (a value of another type, a
    missing key, nesting no agent writes) is a one-line error naming the file, not a traceback."""
    try:
        return importer(text, path, report)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError, RecursionError) as exc:
        problem = " ".join(f"{type(exc).__name__}: {exc}".split())[:160]
        raise InputError(path, None, None, f"not a {report.format} transcript this importer reads ({problem}); "
                                           f"check --from") from None


def _table_window(model: str | None) -> tuple[int | None, str]:
    """The window of a named model: the price table (harness.models.pricing) first, then the importer's own
    short table of common models."""
    if not model:
        return None, ""
    try:
        from harness.models.pricing import load_prices, resolve

        row = resolve(model, load_prices())
        if row.window:
            return row.window, f"price table ({row.model})"
    except (ImportError, HarnessError):
        pass
    window = known_window(model)
    return window, (f"known model table ({model})" if window else "")


def _read(path: str) -> str:
    """The transcript's text; a `.gz` file (large real sessions are stored compressed) is decompressed."""
    data = read_input(path, "a transcript", "cannot read transcript")
    if path.endswith(".gz"):
        data = gunzip(data, path, "transcript")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, None, None, "not UTF-8 text; expected a JSON or JSONL transcript") from None


def _title(session: Session, path: str) -> str:
    for message in session.messages:
        if message.role == "user" and not (message.meta or {}).get("is_demo") and not (message.meta or {}).get("tag") \
                and not (message.meta or {}).get("source_role"):
            lines = [l.strip() for l in message.content.splitlines() if l.strip() and not l.strip().startswith("<")]
            line = next((l for l in lines if len(l) >= 20 and not l.endswith(":")), lines[0] if lines else "")
            if line:
                return f"Imported: {line[:80]}"
    return f"Imported from {Path(path).name}"
