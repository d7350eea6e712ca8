"""Every command README.md and docs/ci.md show is accounted for (issue 45): the cheap ones run here exactly as
written, in a folder laid out as a fresh clone (the shipped cases and goldens, nothing recorded beyond them),
each with the exit code and a line of the output the text promises; every other one names why it is not run
here and what runs it instead. A command added to either page fails this test until it is placed in one list."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/ci.md")
SONNET = "anthropic:claude-sonnet-4-6"

# command as written -> (exit code, a phrase its output holds)
RUN = {
    f"compaction-harness run --summarizer {SONNET} --record-mode none --out results/ci --overwrite":
        (2, "record them first"),
    "compaction-harness run --instruction my-prompt.md --instruction default --cases edge-32k-window":
        (0, "from instruction my-prompt it takes Goal"),
    f"compaction-harness run --summarizer openai:gpt-5 --summarizer {SONNET} --estimate": (0, "modelled"),
    f"compaction-harness run --summarizer openai:gpt-5@emulator --summarizer {SONNET}@emulator --cases edge-32k-window":
        (0, "void (same model)"),
    "compaction-harness validate-summarizer --model openai:gpt-5@emulator --alt-model control:keyword-bag --cases "
    "edge-32k-window": (0, "The data supports the same-model summarizer"),
    "compaction-harness cost --cases edge-32k-window": (0, "break"),
}
KEY = "records with a provider's key; tests/test_ci_recipe.py runs the recipe with @emulator specs, offline"
BEHIND_KEY = "needs the run recorded with a key before it; tests/test_ci_recipe.py runs it after an @emulator recording"
USERS = "stands for the user's own transcript; tests/test_import_cli.py and tests/test_recorded.py import real ones"
NOT_RUN = {
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/compaction-harness run":
        "the set-up itself, on the whole library (minutes); tools/readme-figures' `default` source runs it",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/compaction-harness runtimes install pi "
    "codex && .venv/bin/pytest -n auto": "the suite itself; .ci/run runs it on a clean checkout",
    f"compaction-harness run --summarizer {SONNET} --record-mode all --out results/reference --overwrite": KEY,
    "compaction-harness gate results/reference --baseline goldens/baselines/reference.json --update-baseline": BEHIND_KEY,
    "compaction-harness gate results/ci --baseline goldens/baselines/reference.json --junit results/junit.xml":
        BEHIND_KEY,
    "compaction-harness gate results/ci --baseline goldens/baselines/reference.json --junit results/junit.xml "
    "--markdown results/gate.md": BEHIND_KEY,
    f"compaction-harness run --summarizer {SONNET} --policy truncate --record-mode none --out results/truncate "
    "--overwrite": BEHIND_KEY,
    "compaction-harness gate results/truncate --baseline goldens/baselines/reference.json": BEHIND_KEY,
    "compaction-harness gate results/truncate --baseline goldens/baselines/reference.json --allow-config-change":
        BEHIND_KEY,
    "compaction-harness runtimes install pi codex": "npm ci from the network; .ci/run runs it before the suite",
    "compaction-harness run --runtime pi --cases edge-32k-window --window 49152":
        "drives pi for half a minute or more; tests/runtimes/test_drive_pi.py drives the same case at this window",
    "compaction-harness run --runtime pi --runtime codex --runtime opencode --pool real":
        "drives the ten real sessions through three runtimes (18 minutes here); "
        "tests/runtimes/test_real_session_drive.py drives one of them through each",
    "compaction-harness real-report --runtime pi --runtime codex --runtime opencode --out results/real-report":
        "drives the real pool through three runtimes, each case twice (about 40 minutes); tests/test_real_report.py "
        "builds its arms and tests/runtimes/test_real_session_drive.py drives one case with --window recorded",
    "compaction-harness cases import SESSION.jsonl --out cases/my-session": USERS,
    "compaction-harness cases probe-draft cases/my-session": USERS,
    "compaction-harness run --cases my-session --policy recorded --policy default --at-recorded-points": USERS,
}


def documented(page: str) -> list[str]:
    """The commands a page shows in its code blocks (indented or fenced, YAML aside), continuation lines joined
    and trailing comments dropped."""
    text = re.sub(r"\\\n\s*", "", (ROOT / page).read_text(encoding="utf-8"))
    found, fenced = [], None
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = None if fenced is not None else line[3:].strip()
            continue
        in_block = fenced == "" or (fenced is None and line.startswith("    "))
        command = line.split("  #")[0].strip()
        if in_block and command.startswith(("compaction-harness ", "python3 -m venv ")):
            found.append(" ".join(command.split()))
    return found


def test_every_documented_command_is_run_here_or_says_why_not():
    commands = {command for page in PAGES for command in documented(page)}
    assert len(commands) >= 15
    unplaced = sorted(commands - set(RUN) - set(NOT_RUN))
    assert not unplaced, f"place each in RUN (with its exit code and output) or NOT_RUN (with why): {unplaced}"
    assert not set(RUN) & set(NOT_RUN)
    assert set(RUN) <= commands, f"no longer documented: {sorted(set(RUN) - commands)}"


@pytest.fixture
def fresh_clone(tmp_path, monkeypatch):
    """A folder laid out as a fresh clone, and README's first step for your own prompt done: the shipped
    instruction copied and edited (a copy left as it is, is the shipped instruction)."""
    for name in ("cases", "goldens"):
        (tmp_path / name).symlink_to(ROOT / name)
    mine = tmp_path / "my-prompt.md"
    shutil.copyfile(ROOT / "harness" / "compaction" / "instruction.md", mine)
    mine.write_text(mine.read_text() + "Name every port and host with its number.\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", sorted(RUN))
def test_a_cheap_documented_command_runs_as_written(command, fresh_clone, capsys):
    code, phrase = RUN[command]
    argv = shlex.split(command)
    assert argv[0] == "compaction-harness"
    assert main(argv[1:]) == code
    printed = capsys.readouterr()
    assert phrase in " ".join((printed.out + printed.err).split())
