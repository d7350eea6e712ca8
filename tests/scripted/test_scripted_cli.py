"""`serve --script`: usage and input errors are one line and exit 2."""

from __future__ import annotations

import pytest

from harness.cli import main

CASE = "cases/edge-32k-window"


@pytest.mark.parametrize(("argv", "message"), [
    (["serve", "--script", CASE], "error: --script needs --workspace DIR"),
    (["serve", "--workspace", "x"], "error: --workspace and --summarizer go with --script CASE_DIR"),
    (["serve", "--script", CASE, "--workspace", "{ws}", "--runtime-signatures", "claude"],
     "error: runtime signatures 'claude': unknown; choose all or one of pi, codex, opencode, gemini-cli, qwen-code"),
    (["serve", "--script", "cases/no-such-case", "--workspace", "{ws}"], "error: cases/no-such-case/case.toml"),
    (["serve", "--script", CASE, "--workspace", "{ws}", "--summarizer", "nope:x"], "error: model spec 'nope:x'"),
])
def test_usage_and_input_errors_are_one_line_and_exit_2(argv, message, tmp_path, capsys):
    code = main([a.replace("{ws}", str(tmp_path / "ws")) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "ws").exists() or "claude" not in " ".join(argv)
