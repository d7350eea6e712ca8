"""Claude Code exported as OpenAI chat: `{format: "openai-chat", model, messages, phases}`.

Standard OpenAI chat messages (see openai_chat), with thinking inlined as `<thinking>...</thinking>` (moved to
`meta.thinking` and counted); user noise (interrupt markers, slash commands, task notifications) is kept and
tagged in `meta.tag` as in the native importer and compactions written as a system message `[compact_boundary] ...` followed by a user message
holding the summary: that pair becomes one `compaction` line (origin `claude-code`). `phases` is not mapped
(counted). The report counts every message by fate (`fates`).
"""

from __future__ import annotations

from harness.errors import InputError
from harness.importers.builder import SessionBuilder
from harness.importers.claude_code import noise_tag
from harness.importers.report import ImportReport
from harness.importers.sources import block_text, load_json_document
from harness.importers.openai_chat import add_openai_message, check_message, messages_of
from harness.session import Session

EXPECTED = 'a Claude Code OpenAI-chat export {format: "openai-chat", model, messages: [...]}'
BOUNDARY = "[compact_boundary]"


def import_claude_code_openai(text: str, path: str, report: ImportReport) -> Session:
    document = load_json_document(text, path, EXPECTED)
    if not isinstance(document, dict) or document.get("format") != "openai-chat":
        raise InputError(path, 1, "format", f'expected "openai-chat" ({EXPECTED})')
    messages = messages_of(document, path, EXPECTED)
    if isinstance(document.get("model"), str):
        report.model = document["model"]
    if document.get("phases"):
        report.skip("phases (not mapped)", len(document["phases"]))
    builder = SessionBuilder(path, report)
    index = 0
    while index < len(messages):
        message = check_message(messages[index], index, path, EXPECTED)
        builder.entry(index)
        content = block_text(message.get("content"), report)
        if message["role"] == "system" and content.lstrip().startswith(BOUNDARY):
            following = messages[index + 1] if index + 1 < len(messages) else None
            if isinstance(following, dict) and following.get("role") == "user":
                builder.skip_entry("kept (compaction boundary)")
                builder.entry(index + 1)  # the summary: its entry owns the compaction line
                summary = block_text(following.get("content"), report)
                builder.compaction(summary, "claude-code", meta={"boundary": content.strip()})
                index += 2
                continue
            report.notes.append(f"messages[{index}]: compact boundary without a summary message after it")
            report.skip("compact boundary without summary")
            builder.skip_entry("skipped (compact boundary without summary)")
            index += 1
            continue
        tag = noise_tag(content.lstrip()) if message["role"] == "user" and content.strip() else None
        if tag:
            report.tag(f"user noise: {tag}")
        add_openai_message(builder, message, index, path, report, strip_thinking=True,
                           user_meta={"tag": tag} if tag else None)
        index += 1
    return builder.build()
