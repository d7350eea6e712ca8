"""The builtin summarizer says what an edit changed by the names it declares (harness/models/builtin/edits.py):
a file's line in the files section carries them, and they survive the next compaction."""

from __future__ import annotations

from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient
from harness.models.builtin.edits import declared_names
from harness.models.builtin.files import FileEntry, read_file_line

INSTRUCTION = M("user", "Summarize the conversation so far. Use exactly these sections:\n" + "\n".join(
    f"## {s}" for s in ("Goal", "Progress", "Files", "Errors", "Next steps")))


def run(messages: tuple[M, ...], budget: int = 1500) -> str:
    return BuiltinClient().complete(ModelRequest("builtin", None, (*messages, INSTRUCTION), budget)).text


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n\n## ", 1)[0]


def test_an_edit_declares_the_names_its_new_text_defines_and_the_old_did_not() -> None:
    rename = {"old_string": "func countLines(s string) int {", "new_string": "func countLinesStr(s string) int {"}
    assert declared_names(rename) == ["countLinesStr"]
    assert declared_names({"old_string": "const limit = 50", "new_string": "const limit = 100"}) == []
    method = {"new_string": "func (s *Store) SaveCheckpoint(id string) error {\n\treturn nil\n}"}
    assert declared_names(method) == ["SaveCheckpoint"]
    several = {"edits": [{"old_string": "x = 1", "new_string": "MAX_RETRIES = 3\ndef retry_later(job):\n  pass"}]}
    assert declared_names(several) == ["retry_later"]
    prose = {"content": "// a function with two modes\nlet metadata = {}\nclass Parser:\n"}
    assert declared_names(prose) == ["Parser"]  # a plain word names nothing the session made


def test_a_files_line_says_what_the_edits_added_and_reads_back() -> None:
    entry = FileEntry("/srv/app/cmd/explain.go", ["read", "edited"], names=["a1", "a2", "limitMain", "scanAll"])
    line = entry.line("/srv/app/")
    assert line == "- cmd/explain.go (read, edited; adds limitMain, scanAll)"  # the newest few
    assert read_file_line(line[2:], "/srv/app/") == ("/srv/app/cmd/explain.go", ["read", "edited"],
                                                    ["limitMain", "scanAll"])
    assert read_file_line("docs/a.md", "") == ("docs/a.md", [""], [])


def test_the_summary_names_what_an_edit_declared_and_keeps_it_next_time() -> None:
    edit = ToolCallSpec("e1", "Edit", {"file_path": "/srv/app/explain_test.go", "old_string": "x := \"a\\nb\"",
                                        "new_string": "const testTwoLines = \"a\\nb\"\nx := testTwoLines"})
    history = (M("user", "Fix the goconst lint failure in explain_test.go."), M("assistant", "", (edit,)),
               M("tool", "The file was updated.", tool_call_id="e1"))
    first = run(history)
    assert "explain_test.go (edited; adds testTwoLines)" in section(first, "Files")
    later = (M("user", first), M("assistant", "Lint passes now."), M("user", "Thanks."))
    assert "adds testTwoLines" in section(run(later), "Files")
