"""`serve --script`: usage and input errors are one line and exit 2; on loopback, several cases in one
invocation each get their own outcome, and the exit code is 1 when any case drifted or left steps unused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx2
import openai
import pytest

from harness.cases import load_case
from harness.cli import main
from harness.scripted import script_from_session
from scripted_agent import run_agent
from scripted_sdk import chat_sender

CASE = "cases/edge-32k-window"
SMALL = "cases/desktop-go-env-config"


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


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path, capsys, loopback: None):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--script", CASE, "--workspace", str(tmp_path), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: cannot serve on 127.0.0.1:{port}: ") and err.count("\n") == 1


def test_served_on_loopback_one_case_completes_one_drifts_and_the_report_says_which(tmp_path, loopback: None):
    process = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--script", CASE, "--script", SMALL,
                                "--workspace", str(tmp_path), "--port", "0", "--runtime-signatures", "opencode"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "COLUMNS": "300"})
    try:
        transport = httpx2.HTTPTransport()
        url = _served_url(process)
        small = script_from_session(load_case(SMALL).session)
        outputs = run_agent(small.prompts, chat_sender(transport, "desktop-go-env-config", stream=True, url=url),
                            tmp_path / "desktop-go-env-config")
        assert outputs == {c.id: c.output for c in small.calls}
        big = script_from_session(load_case(CASE).session)
        swap = lambda n, call_id, output: "something else" if n == 0 else output  # noqa: E731
        with pytest.raises(openai.BadRequestError, match="drift at step 2: expected the output of call call_0001"):
            run_agent(big.prompts, chat_sender(transport, "edge-32k-window", stream=False, url=url),
                      tmp_path / "edge-32k-window", tamper=swap)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    expected = script_from_session(load_case(CASE).session).steps[1].before[0].describe()
    assert out.splitlines() == [
        f"edge-32k-window: 1 of 69 steps used, 0 compaction request(s), 0 side request(s); stopped: drift at step 2: "
        f"expected {expected}, got a tool result for call call_0001 'something else'; the request (a turn: no "
        f"compaction or side signature matched; 3 messages, 1 tools): last text block from the tool 'something else'; "
        f"opencode compaction signatures: system text opening with 'You are a context summarization agent'; exit 1",
        "desktop-go-env-config: 17 of 17 steps used, 0 compaction request(s), 0 side request(s); exit 0"]
    logged = [json.loads(line) for line in (tmp_path / "edge-32k-window.requests.jsonl").read_text().splitlines()]
    assert [(r["kind"], r["step"]) for r in logged] == [("turn", 1), ("turn", None)]


def _served_url(process: subprocess.Popen) -> str:
    deadline = time.monotonic() + 60
    assert process.stderr is not None
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if "scripted model on " in line:
            return line.split("scripted model on ", 1)[1].split()[0]
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"the server did not start: {process.stderr.read()}")
