"""docs/commands.md lists every command's options as the parser declares them (tools/commands_doc.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("commands_doc", ROOT / "tools" / "commands_doc.py")
commands_doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(commands_doc)


def test_the_commands_page_is_current():
    current = commands_doc.PAGE.read_text(encoding="utf-8")
    assert commands_doc.page(current) == current, "docs/commands.md is stale: run .venv/bin/python tools/commands_doc.py"


def test_it_names_every_command_and_option():
    text = commands_doc.generated()
    for line, parser in commands_doc.parsers():
        assert f"## `{line}`" in text
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in text, f"{line}: {flag}"
    assert "--overwrite" in text and "compaction-harness runtimes install" in text
