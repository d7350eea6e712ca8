"""Issue 8 through the command line: `cases import`, `cases probe-draft`, errors, and an imported case run end to end."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from harness.cli import main
from harness.results.folder import read_run

DATA = Path(__file__).parent / "data" / "recorded"
IMPORTERS = Path(__file__).parent / "importers" / "data"

PROBES = """
[[probe]]
id = "page-size"
kind = "recall"
question = "Which page size did the user ask for?"
all = ["50"]
anchor = ["page size", "page_size", "per page"]
planted_at = 0

[[probe]]
id = "cursor"
kind = "constraint"
question = "Which cursor parameter name must be used?"
all = ["after_id"]
anchor = ["cursor*"]
planted_at = 4

[[probe]]
id = "changelog"
kind = "continuation"
question = "What is the agent doing now?"
all = ["CHANGELOG.md"]
anchor = ["updat*"]
planted_at = 10
"""


def test_import_prints_the_report_and_what_auto_chose(tmp_path, capsys):
    out = tmp_path / "cases" / "cc-rec"
    assert main(["cases", "import", str(DATA / "claude_code_two_compactions.jsonl"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "--from auto chose claude-code" in printed
    for line in ("messages: 11 (user 3, assistant 5, tool 3)", "compaction records: 2", "skipped: nothing",
                 "left out: nothing", "secrets redacted: 0", "given '[no result recorded]': 0"):
        assert line in printed
    case = tomllib.loads((out / "case.toml").read_text())
    assert case["case"]["id"] == "cc-rec" and case["model"]["context_window"] == 200_000
    assert (out / "session.jsonl").exists()


def test_import_with_format_window_and_model(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["cases", "import", "--from", "codex", str(IMPORTERS / "codex.jsonl"), "--out", str(out),
                 "--window", "64000", "--model", "gpt-5"]) == 0
    printed = capsys.readouterr().out
    assert "auto chose" not in printed and "format: codex (given)" in printed
    assert "encrypted reasoning 1" in printed and "secrets redacted: 1" in printed
    assert "skipped: " in printed and "tool result with no matching call 1" in printed
    model = tomllib.loads((out / "case.toml").read_text())["model"]
    assert model == {"name": "gpt-5", "context_window": 64000, "max_output_tokens": 16384}


def test_mislabelled_and_malformed_files_exit_2_with_one_line(tmp_path, capsys):
    assert main(["cases", "import", "--from", "claude-code", str(DATA / "codex_two_compactions.jsonl"),
                 "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1
    assert "codex_two_compactions.jsonl:1" in error and "expected a Claude Code session line" in error
    broken = tmp_path / "broken.jsonl"
    broken.write_text((DATA / "codex_two_compactions.jsonl").read_text().replace('"type": "turn_context"', '"type: ', 1))
    assert main(["cases", "import", "--from", "codex", str(broken), "--out", str(tmp_path / "y")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "broken.jsonl:2" in error and "bad JSON" in error
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_probe_draft_prints_drafts(tmp_path, capsys):
    out = tmp_path / "cc"
    assert main(["cases", "import", str(DATA / "claude_code_two_compactions.jsonl"), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["cases", "probe-draft", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("# ") and "DRAFT" in printed.splitlines()[0]
    drafts = tomllib.loads(printed)["probe"]
    assert drafts and all(p["draft"] is True for p in drafts)
    assert any(p["kind"] == "artifact" and p["all"] == ["api/users.py"] for p in drafts)


def test_imported_case_runs_end_to_end(tmp_path, capsys):
    cases = tmp_path / "cases"
    assert main(["cases", "import", str(DATA / "claude_code_two_compactions.jsonl"), "--out",
                 str(cases / "cc-rec")]) == 0
    with (cases / "cc-rec" / "case.toml").open("a", encoding="utf-8") as handle:
        handle.write(PROBES)
    assert main(["cases", "validate", "--cases-dir", str(cases)]) == 0
    out = tmp_path / "run"
    assert main(["run", "--cases-dir", str(cases), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    run = read_run(out)
    record = run["cases"]["cc-rec"]
    assert record["status"] == "ok" and record["messages"] == 11
    graded = {p["id"]: p for p in record["probes"]}
    assert set(graded) == {"page-size", "cursor", "changelog"}
    for probe in graded.values():
        assert set(probe["conditions"]) == {"compacted", "full", "floor"}
        assert probe["conditions"]["full"]["retained"] is True  # the facts are in the history
        assert all(c["answered"] in (True, False) and c["answer"] for c in probe["conditions"].values())
    assert graded["page-size"]["valid"] and graded["cursor"]["valid"]
    assert (out / "report.md").exists() and json.loads((out / "cases" / "cc-rec.json").read_text())["contexts"]


LONG = "9" * 5000  # past Python's 4,300-digit limit for reading an integer


@pytest.mark.parametrize("fmt", ["auto", "claude-code", "claude-code-openai", "codex", "openai", "anthropic",
                                 "mini-swe-agent", "swe-agent"])
@pytest.mark.parametrize("layout", ["json", "jsonl", "in arguments"])
def test_a_number_too_long_to_read_is_one_line_naming_the_file(fmt, layout, tmp_path, capsys):
    """Issue 44: every format, the number in a JSON document, on a JSONL line, or inside a tool call's JSON
    arguments string: never a catch-all ValueError line."""
    path = tmp_path / "long.json"
    if layout == "json":
        path.write_text('{"messages": [{"role": "user", "content": "hi"}], "n": ' + LONG + "}")
    elif layout == "jsonl":
        first = json.dumps({"type": "user", "uuid": "a", "sessionId": "s", "message": {"role": "user", "content": "hi"}})
        path.write_text(first + '\n{"type": "assistant", "uuid": "b", "n": ' + LONG + "}\n")
    else:
        call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": '{"a": ' + LONG + "}"}}
        path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                 {"role": "assistant", "content": "", "tool_calls": [call]},
                                                 {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}))
    code = main(["cases", "import", str(path), "--from", fmt, "--out", str(tmp_path / "case"), "--window", "9000"])
    err = capsys.readouterr().err
    assert code in (0, 2) and "ValueError" not in err and "rerun with --debug" not in err
    if code == 2:
        assert err.startswith(f"error: {path}") and err.count("\n") == 1
    if layout != "in arguments":
        assert code == 2 and ("holds a number too long to read" in err or "bad JSON" in err or "expected" in err)
