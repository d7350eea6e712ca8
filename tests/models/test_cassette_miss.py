"""A replay miss shows its whole first difference (path, recorded, now), shortened only in the middle, with
no transport prefix, in the exception, in run.json and on the terminal (issue 18, item 5)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.models import ModelRequest, open_client
from harness.models.base import ChatMessage as M
from harness.models.cassette import SHOWN_CHARS, middle_short
from harness.models.emulator import EmulatorTransport

FILLER = "The deploy script copies the build to the staging host and restarts the service. "
SYSTEM = "You are a coding agent. " + FILLER * 70
HISTORY = (M("user", "Move the deploy to staging-2.internal."), M("assistant", "I kept the old script."))
MODELS = {"openai": "gpt-5", "anthropic": "claude-sonnet-4-6"}


def _record(provider: str, path: Path, transport: EmulatorTransport) -> str:
    spec = f"{provider}:{MODELS[provider]}@emulator"
    with open_client(spec, cassette_path=path, record_mode="all", case_id="deploy-case", transport=transport) as m:
        m.complete(ModelRequest(MODELS[provider], SYSTEM, HISTORY, 400))
    return spec


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_miss_names_the_whole_first_difference_without_a_transport_prefix(provider, tmp_path, transport):
    path = tmp_path / "c.json"
    spec = _record(provider, path, transport)
    changed = ModelRequest(MODELS[provider], SYSTEM + " One more rule: never deploy on Fridays.", HISTORY, 400)
    started = time.perf_counter()
    with open_client(spec, cassette_path=path, record_mode="none", case_id="deploy-case", max_retries=0) as model:
        with pytest.raises(HarnessError) as info:
            model.complete(changed)
    message = str(info.value)
    assert time.perf_counter() - started < 5
    assert message.startswith(f"cassette {path} (case 'deploy-case'): request "), message
    assert "connection failed" not in message and "\n" not in message
    assert "recorded \"sha256:" in message and f"now sha256:" in message
    # the end of the new value, where it differs, is shown: shortened in the middle, never cut at the end
    assert "never deploy on Fridays.\"" in message and "You are a coding agent." in message
    assert f"{len(changed.system)} chars:" in message and message.endswith("re-record with --record-mode new")


def test_a_short_difference_is_shown_whole(tmp_path, transport):
    path = tmp_path / "c.json"
    spec = _record("openai", path, transport)
    decision = "I kept the old script but renamed the staging host in every config file we touched today."
    changed = ModelRequest("gpt-5", SYSTEM, HISTORY[:1] + (M("assistant", decision),), 400)
    with open_client(spec, cassette_path=path, record_mode="none", case_id="deploy-case") as model:
        with pytest.raises(HarnessError) as info:
            model.complete(changed)
    assert f'$.body.messages[2].content: recorded "I kept the old script." != now "{decision}"' in str(info.value)


def test_middle_short_keeps_both_ends():
    text = "start " + "x" * 5000 + " the end"
    shown = middle_short(text)
    assert len(shown) <= SHOWN_CHARS and shown.startswith('"start ') and shown.endswith(' the end"')
    assert "chars]…" in shown
    assert middle_short("short") == '"short"'


def _case(root: Path) -> None:
    from test_runner import make_case

    make_case(root, "small")


def test_run_json_and_the_terminal_carry_the_whole_miss(tmp_path, capsys):
    cases, cassettes = tmp_path / "cases", tmp_path / "cassettes"
    _case(cases)
    common = ["run", "--cases-dir", str(cases), "--summarizer", "anthropic:claude-sonnet-4-6@emulator",
              "--answerer", "builtin", "--cassettes", str(cassettes)]
    assert main([*common, "--record-mode", "all", "--out", str(tmp_path / "rec"), "--json"]) == 0
    capsys.readouterr()
    assert main([*common, "--record-mode", "none", "--out", str(tmp_path / "re"), "--sections",
                 "Goal,Files,Next steps"]) == 1
    printed = " ".join(capsys.readouterr().out.split())
    error = json.loads((tmp_path / "re" / "run.json").read_text())["cases"]["small"]["error"]
    assert error.startswith("cassette ") and "connection failed" not in error
    assert "## Next steps" in error and 'tokens."; re-record' in error  # the new instruction, to its end
    assert " ".join(error.split()) in printed
