"""The Claude Code OpenAI-chat export: user noise tagged as in the native importer, thinking kept in meta (issue 21)."""

from __future__ import annotations

import json

from harness.importers import import_transcript


def test_the_openai_chat_export_tags_an_interrupt_as_noise(tmp_path):
    export = {"format": "openai-chat", "model": "claude-opus-4-6", "messages": [
        {"role": "user", "content": "Refactor the loader."},
        {"role": "assistant", "content": "<thinking>start with io.py</thinking>Starting."},
        {"role": "user", "content": "[Request interrupted by user]"},
        {"role": "user", "content": "Only io.py, please."},
    ]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    session, report, _ = import_transcript(path, "claude-code-openai")
    assert [m.meta for m in session.messages] == [None, {"thinking": "start with io.py"}, {"tag": "interrupt"}, None]
    assert report.tagged["user noise: interrupt"] == 1
