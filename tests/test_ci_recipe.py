"""docs/ci.md's recipe, run as written (issue 29 item 5): record, write a baseline, replay offline and gate
(exit 0 each), then the documented deliberate regression (exit 3 without --allow-config-change, 1 with it).

The commands are read from docs/ci.md itself, so the test follows the document. Two changes, both needed to
run offline and in seconds: the summarizer is the same spec served by the emulator (`@emulator`: no key, no
network), and the working folder's `cases/` holds two shipped cases (the whole library takes minutes; it was
run by hand, see the commit). One of them compacts six times and loses probes under `truncate`; the other
is a real session whose later probe points the default policy never reaches, which must not stop the baseline.
"""

import re
import shlex
from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[1]
SUBSET = ("edge-32k-window", "real-fittoday-4a")
SUMMARIZER = "anthropic:claude-sonnet-4-6"


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```\n(.*?)^```", text, flags=re.S | re.M)


def commands(block: str) -> list[tuple[list[str], int]]:
    """Each `compaction-harness ...` command of a block (continuation lines joined) with the exit code its
    trailing `# exit N` comment documents (0 when it says none)."""
    joined = re.sub(r"\\\n\s*", " ", block)
    found = []
    for line in joined.splitlines():
        command, _, comment = line.partition("#")
        if not command.startswith("compaction-harness "):
            continue
        expected = re.search(r"exit (\d)", comment)
        found.append((shlex.split(command)[1:], int(expected.group(1)) if expected else 0))
    return found


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "cases").mkdir()
    for case in SUBSET:
        (tmp_path / "cases" / case).symlink_to(ROOT / "cases" / case)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def offline(argv: list[str]) -> list[str]:
    return [f"{a}@emulator" if a == SUMMARIZER else a for a in argv]


def test_the_documented_recipe_records_writes_a_baseline_replays_and_gates(workdir, capsys):
    blocks = code_blocks((ROOT / "docs" / "ci.md").read_text())
    recipe, regression = commands(blocks[0]), commands(blocks[1])
    assert [argv[0] for argv, _ in recipe] == ["run", "gate", "run", "gate"]
    assert [code for _, code in regression] == [0, 3, 1]
    for argv, expected in recipe + regression:
        code = main(offline(argv))
        printed = capsys.readouterr()
        assert code == expected, f"{' '.join(argv)} exited {code}: {printed.err[-400:]}"
        if "--update-baseline" in argv:
            assert "at points this policy never reaches (not gated)" in printed.out
        if code == 3:
            assert "policy: baseline default, run truncate" in printed.err
        if code == 1:
            assert "lost" in printed.out
    assert (workdir / "goldens" / "baselines" / "reference.json").is_file()
    assert (workdir / "results" / "junit.xml").is_file() and (workdir / "results" / "gate.md").is_file()
    assert list((workdir / "goldens" / "cassettes").rglob("*.json"))
