"""Claude Code native session JSONL (`~/.claude/projects/.../<session>.jsonl`), FORMATS.md and issue 21.

- The live conversation is rebuilt from the `parentUuid` tree (`claude_code_tree`): parallel calls sharing a live
  `message.id` and their results on sibling forks are kept, calls on an abandoned leaf are skipped and counted.
  Live entries are mapped in file order.
- Assistant entries sharing `message.id` (one content block each) are merged into one assistant message at its
  first entry; its `usage` keeps the provider's four token counts from the entry that reported the most output
  (Claude Code repeats the usage on every block, output growing while it streams). Thinking text goes into
  `meta.thinking`, never into the content.
- `tool_use.id` pairs with `tool_result.tool_use_id`; a live call with no result gets the builder's marker.
- A `compact_boundary` followed by its `isCompactSummary` user entry becomes a `compaction` line (origin
  `claude-code`, meta: trigger, preTokens, the boundary's line); the history before it stays in the session.
- Every message carries `meta.source_line` (the 1-based line of its entry; the first line of a merged message) and
  `ts`. The report counts every line of the file by fate.
- User entries that are noise (isMeta, slash commands, interrupt markers, task notifications, `!` shell escapes)
  are kept and tagged in `meta.tag`; other system entries, attachments and bookkeeping types are skipped as
  noise. `/exit` and its output are skipped wherever they are: the session ended there, and a resumed session
  does not always send them again (issue 31).
- A prompt the user typed while the agent was busy is a `queue-operation` entry (enqueue, with the text). When
  Claude Code hands it to the model with a tool result (`remove`), it becomes a user message after that result
  (or before the next entry, if no result follows), `meta.queued`; a `dequeue`d prompt is sent later as an entry
  of its own, and `popAll` puts the queue back in the input box, so neither adds a message.
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import InputError
from harness.importers.anthropic_messages import add_anthropic_content
from harness.importers.builder import SessionBuilder
from harness.importers.claude_code_tree import MESSAGE_TYPES, Entry, LiveSet, blocks_of, live_entries, message_id
from harness.importers.report import ImportReport
from harness.importers.sources import load_jsonl
from harness.session import Session

EXPECTED = "a Claude Code session line {type, uuid, parentUuid, message, ...}"
USAGE_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
KEPT, TAGGED, REDACTED, NOISE = "kept", "kept, tagged as noise", "kept, secret redacted", "skipped as noise"


def noise_tag(text: str, is_meta: bool = False) -> str | None:
    """The kind of noise a Claude Code user message is (None: a real prompt); shared with the OpenAI export."""
    if is_meta:
        return "meta"
    if "<command-name>" in text or "<local-command-stdout>" in text:
        return "command"
    if text.startswith("[Request interrupted"):
        return "interrupt"
    if "<task-notification>" in text:
        return "task-notification"
    if text.startswith(("<bash-input>", "<bash-stdout>", "<bash-stderr>")):
        return "shell"
    return None


_EXIT = "<command-name>/exit</command-name>"
_SLASH_COMMAND = re.compile(r"\s*/[\w:-]+\s*$")  # a queued "/skills" runs as a command, not a prompt


def _check(entries: list[Entry], path: str) -> None:
    if not any(isinstance(entry.get("uuid"), str) for _, entry in entries):
        number, entry = entries[0]
        hint = " (it looks like a Codex rollout)" if "payload" in entry else ""
        raise InputError(path, number, "uuid", f"no entry of the file has a uuid{hint}; expected {EXPECTED}")
    for number, entry in entries:
        if not isinstance(entry.get("type"), str):
            raise InputError(path, number, "type", f"missing; expected {EXPECTED}")
        if entry["type"] in ("user", "assistant") and not isinstance(entry.get("message"), dict):
            raise InputError(path, number, "message", f"a {entry['type']} entry needs a message object ({EXPECTED})")


class _Mapper:
    """Feeds the live entries to the builder in file order and gives every line of the file its fate."""

    def __init__(self, entries: list[Entry], live: LiveSet, path: str, report: ImportReport):
        self.path, self.report, self.live = path, report, live
        self.builder = SessionBuilder(path, report, source_lines=True)
        self.groups: dict[str, list[Entry]] = {}
        for number, entry in entries:
            if number in live.kept and entry["type"] == "assistant" and message_id(entry):
                self.groups.setdefault(message_id(entry), []).append((number, entry))
        self.emitted: set[str] = set()
        self.boundary: dict[str, Any] | None = None
        self.queued: list[Entry] = []  # prompts typed while the agent was busy, not yet taken
        self.delivered: list[Entry] = []  # taken with a tool result: placed after it
        self.exited = False  # the last user entry was /exit: its output follows

    def add(self, number: int, entry: dict[str, Any]) -> None:
        kind = entry["type"]
        if kind == "queue-operation":
            self.report.fate(self._queue(number, entry))
        elif kind not in MESSAGE_TYPES:
            self.report.skip(f"bookkeeping: {kind}")
            self.report.fate(NOISE)
        elif number in self.live.abandoned:
            self.report.skip("abandoned call (no result and no child entry anywhere)")
            self.report.fate("abandoned call")
        elif number in self.live.off_branch:
            self.report.skip("entry off the live branch (sidechain or abandoned)")
            self.report.fate("off-branch")
        else:
            before = self.report.redacted
            fate = self._kept(number, entry)
            self.report.fate(REDACTED if fate == KEPT and self.report.redacted > before else fate)

    def _queue(self, number: int, entry: dict[str, Any]) -> str:
        operation = entry.get("operation")
        if operation == "enqueue" and isinstance(entry.get("content"), str):
            self.queued.append((number, entry))
        elif operation == "remove" and self.queued:
            self.delivered.append(self.queued.pop(0))
            return KEPT
        elif operation == "dequeue" and self.queued:
            self.queued.pop(0)
        elif operation == "popAll":
            self.queued.clear()
        self.report.skip("bookkeeping: queue-operation")
        return NOISE

    def _place_queued(self) -> None:
        for number, entry in self.delivered:
            text = entry["content"]
            tag = noise_tag(text.lstrip()) or ("command" if _SLASH_COMMAND.match(text) else None)
            self.report.tag("queued prompt placed where the model took it")
            self.builder.user(text, meta={"queued": True, **({"tag": tag} if tag else {})},
                              ts=entry.get("timestamp"), line=number)
        self.delivered.clear()

    def finish(self) -> Session:
        self._place_queued()
        if self.boundary is not None:
            self.report.skip("compact boundary without summary")
        return self.builder.build()

    def _kept(self, number: int, entry: dict[str, Any]) -> str:
        kind = entry["type"]
        if kind == "system" and entry.get("subtype") == "compact_boundary":
            self._open_boundary(number, entry)
            return KEPT
        if kind == "user" and entry.get("isCompactSummary"):
            self._summary(number, entry)
            return KEPT
        if kind in ("attachment", "system"):
            self.report.skip("attachment" if kind == "attachment" else f"system entry: {entry.get('subtype') or 'plain'}")
            return NOISE
        if self.boundary is not None:
            self.report.skip("compact boundary without summary")
            self.boundary = None
        if kind == "assistant":
            self._place_queued()
            return self._assistant(number, entry)
        results = any(block.get("type") == "tool_result" for block in blocks_of(entry))
        if not results:
            self._place_queued()
        fate = self._user(number, entry)
        self._place_queued()  # after the tool result the model read the prompt with
        return fate

    def _open_boundary(self, number: int, entry: dict[str, Any]) -> None:
        if self.boundary is not None:
            self.report.skip("compact boundary without summary")
        metadata = entry.get("compactMetadata") if isinstance(entry.get("compactMetadata"), dict) else {}
        self.boundary = {k: metadata[k] for k in ("trigger", "preTokens") if k in metadata}
        self.boundary["boundary_line"] = number
        if number in self.live.orphan_boundaries:
            self.boundary["logical_parent_missing"] = True

    def _summary(self, number: int, entry: dict[str, Any]) -> None:
        content = entry["message"].get("content")
        summary = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
        if self.boundary is None:
            self.report.notes.append(f"line {number}: compact summary without a compact_boundary before it")
        meta = {**(self.boundary or {}), "source_line": number}
        self.builder.compaction(summary, "claude-code", meta=meta, line=number)
        self.boundary = None

    def _assistant(self, number: int, entry: dict[str, Any]) -> str:
        key = message_id(entry)
        if key in self.emitted:
            return KEPT  # merged into the message at its first entry
        group = self.groups.get(key, []) if key else [(number, entry)]
        if key:
            self.emitted.add(key)
        if len(group) > 1:
            self.report.tag("assistant lines merged by message.id", len(group) - 1)
        model = entry["message"].get("model")
        if isinstance(model, str) and model != "<synthetic>":
            self.report.model = model
        texts, calls, thinking = self._blocks(group)
        meta = {"thinking": self.builder.redact.text("\n\n".join(thinking))} if thinking else None
        self.builder.assistant("\n".join(t for t in texts if t), calls, usage=_usage(group), meta=meta,
                               ts=entry.get("timestamp"), id=key, line=number)
        return KEPT

    def _blocks(self, group: list[Entry]) -> tuple[list[str], list[tuple[str, str, dict]], list[str]]:
        texts: list[str] = []
        calls: list[tuple[str, str, dict]] = []
        thinking: list[str] = []
        for _, entry in group:
            content = entry["message"].get("content")
            if isinstance(content, str):
                texts.append(content)
            for block in blocks_of(entry):
                kind = block.get("type")
                if kind == "text":
                    texts.append(str(block.get("text", "")))
                elif kind == "tool_use":
                    arguments = block.get("input")
                    calls.append((str(block.get("id")), str(block.get("name")),
                                  arguments if isinstance(arguments, dict) else {"value": arguments}))
                elif kind == "thinking":
                    self._thinking(str(block.get("thinking") or ""), thinking)
                else:
                    self.report.leave_out(f"{kind} block")
        return texts, calls, thinking

    def _thinking(self, text: str, into: list[str]) -> None:
        if text.strip():
            into.append(text)
            self.report.thinking["blocks"] += 1
            self.report.thinking["characters"] += len(text)
        else:
            self.report.thinking["empty"] += 1  # only a signature: nothing to keep

    def _user(self, number: int, entry: dict[str, Any]) -> str:
        content = entry["message"].get("content")
        plain = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
        tag = noise_tag(plain.lstrip(), bool(entry.get("isMeta"))) if plain.strip() else None
        exited, self.exited = self.exited, _EXIT in plain
        if self.exited or (exited and plain.lstrip().startswith("<local-command-stdout>")):
            self.report.skip("session exit: /exit and its output")
            return NOISE
        if tag:
            self.report.tag(f"user noise: {tag}")
        add_anthropic_content(self.builder, "user", content, "message", self.path, self.report,
                              meta={"tag": tag} if tag else None, ts=entry.get("timestamp"), line=number)
        return TAGGED if tag else KEPT


def _usage(group: list[Entry]) -> dict[str, int] | None:
    best: dict[str, Any] | None = None
    for _, entry in group:
        usage = entry["message"].get("usage")
        if isinstance(usage, dict) and (best is None or (usage.get("output_tokens") or 0) >= (best.get("output_tokens") or 0)):
            best = usage
    if best is None:
        return None
    return {k: best[k] for k in USAGE_KEYS if isinstance(best.get(k), int)} or None


def import_claude_code(text: str, path: str, report: ImportReport) -> Session:
    entries = load_jsonl(text, path, EXPECTED)
    _check(entries, path)
    live = live_entries(entries, path)
    report.notes.extend(live.notes)
    mapper = _Mapper(entries, live, path, report)
    for number, entry in entries:
        mapper.add(number, entry)
    return mapper.finish()
