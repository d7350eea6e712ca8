"""Claude Code native session JSONL (`~/.claude/projects/.../<session>.jsonl`).

- The live branch is rebuilt by walking `parentUuid` back from the last leaf (the last user/assistant/system
  entry of the file that is not a sidechain); a `compact_boundary` continues through `logicalParentUuid`, so
  the history before a compaction stays in the session. Entries off the branch are counted as skipped.
- Assistant lines sharing `message.id` are merged into one assistant message (one content block per line).
- `tool_use.id` pairs with `tool_result.tool_use_id`; thinking blocks are left out and counted.
- A `system` entry with subtype `compact_boundary` followed by a user entry with `isCompactSummary` becomes a
  `compaction` line (origin `claude-code`) holding the summary.
- User entries that are noise (isMeta, slash commands, interrupt markers, task notifications) are kept and
  tagged in `meta.tag`; other system entries, attachments and bookkeeping types are skipped with counts.
"""

from __future__ import annotations

from typing import Any

from harness.errors import InputError
from harness.importers.anthropic_messages import add_anthropic_content
from harness.importers.builder import SessionBuilder
from harness.importers.report import ImportReport
from harness.importers.sources import load_jsonl
from harness.session import Session

EXPECTED = "a Claude Code session line {type, uuid, parentUuid, message, ...}"
MESSAGE_TYPES = ("user", "assistant", "system", "attachment")


def _noise_tag(entry: dict[str, Any], text: str) -> str | None:
    if entry.get("isMeta"):
        return "meta"
    if "<command-name>" in text or "<local-command-stdout>" in text:
        return "command"
    if text.startswith("[Request interrupted"):
        return "interrupt"
    if "<task-notification>" in text:
        return "task-notification"
    return None


def _branch(entries: list[tuple[int, dict[str, Any]]], report: ImportReport, path: str) -> list[tuple[int, dict]]:
    by_uuid: dict[str, tuple[int, dict]] = {}
    for number, entry in entries:
        if isinstance(entry.get("uuid"), str):
            by_uuid[entry["uuid"]] = (number, entry)
    leaf = None
    for number, entry in reversed(entries):
        if entry.get("type") in ("user", "assistant", "system") and entry.get("uuid") and not entry.get("isSidechain"):
            leaf = (number, entry)
            break
    if leaf is None:
        raise InputError(path, None, None, f"no user or assistant entry found; expected {EXPECTED}")
    chain: list[tuple[int, dict]] = []
    seen: set[str] = set()
    current: tuple[int, dict] | None = leaf
    while current is not None:
        number, entry = current
        if entry["uuid"] in seen:
            raise InputError(path, number, "parentUuid", "the parent chain loops back on itself")
        seen.add(entry["uuid"])
        chain.append(current)
        parent = entry.get("parentUuid")
        if parent is None and entry.get("subtype") == "compact_boundary":
            parent = entry.get("logicalParentUuid")
        if parent is None:
            break
        current = by_uuid.get(parent)
        if current is None:
            report.notes.append(f"line {number}: parent {parent} is not in the file; the branch starts here")
    chain.reverse()
    on_branch = {entry["uuid"] for _, entry in chain}
    off = sum(1 for _, e in entries if e.get("type") in MESSAGE_TYPES and e.get("uuid") and e["uuid"] not in on_branch)
    if off:
        report.skip("entry off the live branch (sidechain or abandoned)", off)
    return chain


def import_claude_code(text: str, path: str, report: ImportReport) -> Session:
    entries = load_jsonl(text, path, EXPECTED)
    if not any(isinstance(entry.get("uuid"), str) for _, entry in entries):
        number, entry = entries[0]
        hint = " (it looks like a Codex rollout)" if "payload" in entry else ""
        raise InputError(path, number, "uuid", f"no entry of the file has a uuid{hint}; expected {EXPECTED}")
    for number, entry in entries:
        if not isinstance(entry.get("type"), str):
            raise InputError(path, number, "type", f"missing; expected {EXPECTED}")
        if entry["type"] in ("user", "assistant") and not isinstance(entry.get("message"), dict):
            raise InputError(path, number, "message", f"a {entry['type']} entry needs a message object ({EXPECTED})")
        if entry["type"] not in MESSAGE_TYPES:
            report.skip(f"bookkeeping: {entry['type']}")
    chain = [(n, e) for n, e in _branch(entries, report, path) if e["type"] in MESSAGE_TYPES]
    builder = SessionBuilder(path, report)
    i = 0
    pending_boundary: dict[str, Any] | None = None
    while i < len(chain):
        number, entry = chain[i]
        kind = entry["type"]
        if kind == "attachment":  # (bookkeeping types on the chain were counted above)
            report.skip("attachment")
            i += 1
            continue
        if kind == "system":
            if entry.get("subtype") == "compact_boundary":
                if pending_boundary is not None:
                    report.skip("compact boundary without summary")
                pending_boundary = {"line": number, **({"compactMetadata": entry["compactMetadata"]}
                                                        if isinstance(entry.get("compactMetadata"), dict) else {})}
            else:
                report.skip(f"system entry: {entry.get('subtype') or 'plain'}")
            i += 1
            continue
        message = entry["message"]
        if kind == "user" and entry.get("isCompactSummary"):
            summary = message.get("content")
            summary = summary if isinstance(summary, str) else "\n".join(
                b.get("text", "") for b in summary or [] if isinstance(b, dict) and b.get("type") == "text")
            meta = {k: v for k, v in (pending_boundary or {}).items() if k != "line"}
            if pending_boundary is None:
                report.notes.append(f"line {number}: compact summary without a compact_boundary before it")
            builder.compaction(summary, "claude-code", meta=meta or None, line=number)
            pending_boundary = None
            i += 1
            continue
        if pending_boundary is not None:
            report.skip("compact boundary without summary")
            pending_boundary = None
        if kind == "assistant":
            message_id = message.get("id")
            blocks: list[Any] = []
            usage = None
            j = i
            while j < len(chain):
                n2, e2 = chain[j]
                if e2["type"] != "assistant" or (j > i and (message_id is None or e2["message"].get("id") != message_id)):
                    break
                content = e2["message"].get("content")
                blocks.extend(content if isinstance(content, list) else [{"type": "text", "text": content or ""}])
                usage = e2["message"].get("usage") or usage
                j += 1
            if j - i > 1:
                report.tag("assistant lines merged by message.id", j - i - 1)
            model = message.get("model")
            if isinstance(model, str) and model != "<synthetic>":
                report.model = model
            add_anthropic_content(builder, "assistant", blocks, "message", path, report, usage=usage,
                                  ts=entry.get("timestamp"), id=message_id, line=number)
            i = j
            continue
        # user
        content = message.get("content")
        plain = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
        tag = _noise_tag(entry, plain.lstrip())
        if tag and plain.strip():
            report.tag(f"user noise: {tag}")
        add_anthropic_content(builder, "user", content, "message", path, report,
                              meta={"tag": tag} if tag and plain.strip() else None, ts=entry.get("timestamp"),
                              line=number)
        i += 1
    if pending_boundary is not None:
        report.skip("compact boundary without summary")
    return builder.build()
