"""No name is used that is not defined: pyflakes over the harness, the tools and the tests. A merge once left two
modules calling `replace` unimported, on paths only the opt-in runtime drives reach (a Claude Code drive, an
Inspect compaction without a call); this finds such a name without running the path."""

from __future__ import annotations

from pathlib import Path

from pyflakes import api, messages
from pyflakes.reporter import Reporter

ROOT = Path(__file__).resolve().parents[1]
UNDEFINED = (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)


class _Found(Reporter):
    def __init__(self) -> None:
        self.problems: list[str] = []

    def flake(self, message) -> None:
        if isinstance(message, UNDEFINED):
            self.problems.append(str(message))

    def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # noqa: N802 (pyflakes' name)
        self.problems.append(f"{filename}:{lineno}: {msg}")

    def unexpectedError(self, filename, msg) -> None:  # noqa: N802
        self.problems.append(f"{filename}: {msg}")


def test_every_name_used_is_defined():
    found = _Found()
    api.checkRecursive([str(ROOT / folder) for folder in ("harness", "tools", "tests")], found)
    assert found.problems == []


def test_the_check_finds_an_undefined_name(tmp_path):
    (tmp_path / "broken.py").write_text("def f(x):\n    return replace(x, a=1)\n")
    found = _Found()
    api.checkRecursive([str(tmp_path)], found)
    assert len(found.problems) == 1 and "undefined name 'replace'" in found.problems[0]
