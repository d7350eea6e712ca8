"""Versioned results (issue 29 item 3): a run folder of every released format (tests/data/formats) is read by
view, compare, gate, merge and `run --resume`; a version this harness cannot read is named as such, with what
to do, and never called damaged."""

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.results.folder import read_run
from harness.results.schema import SCHEMA_VERSION
from harness.results.versions import MIGRATIONS

DATA = Path(__file__).parent / "data" / "formats"
RELEASED = sorted(MIGRATIONS)  # every older version this harness reads has a folder here


@pytest.fixture
def old(tmp_path):
    """Copies of each released format's run folder and baseline, and the cases they were run on."""
    shutil.copytree(DATA / "cases", tmp_path / "cases")
    for version in RELEASED:
        shutil.copytree(DATA / f"run-v{version}", tmp_path / f"run-v{version}")
        shutil.copy(DATA / f"baseline-v{version}.json", tmp_path / f"baseline-v{version}.json")
    return tmp_path


def test_every_older_version_has_a_kept_folder():
    assert RELEASED == list(range(1, SCHEMA_VERSION))
    for version in RELEASED:
        assert json.loads((DATA / f"run-v{version}" / "run.json").read_text())["schema_version"] == version
        assert json.loads((DATA / f"baseline-v{version}.json").read_text())["schema_version"] == version


@pytest.mark.parametrize("version", RELEASED)
def test_view_compare_gate_and_merge_read_an_older_folder(old, version, capsys):
    folder = old / f"run-v{version}"
    assert read_run(folder)["schema_version"] == SCHEMA_VERSION  # migrated on read
    assert main(["view", str(folder), "--no-open"]) == 0
    assert main(["run", "--cases-dir", str(old / "cases"), "--cases", "a", "--out", str(old / "now")]) == 0
    assert main(["compare", str(folder), str(old / "now")]) == 0
    assert main(["gate", str(old / "now"), "--baseline", str(old / f"baseline-v{version}.json")]) == 0
    assert main(["gate", str(folder), "--baseline", str(old / f"baseline-v{version}.json")]) == 0
    assert main(["gate", str(folder), "--baseline", str(old / "new-baseline.json"), "--update-baseline"]) == 0
    assert main(["merge", str(folder), "--out", str(old / "merged")]) == 0
    assert json.loads((old / "merged" / "run.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert "damaged" not in capsys.readouterr().err


@pytest.mark.parametrize("version", RELEASED)
def test_run_resume_continues_an_older_folder(old, version, capsys):
    folder = old / f"run-v{version}"
    before = json.loads((folder / "cases" / "a.json").read_text())
    assert main(["run", "--cases-dir", str(old / "cases"), "--out", str(folder), "--resume"]) == 0
    run = json.loads((folder / "run.json").read_text())
    assert run["schema_version"] == SCHEMA_VERSION and sorted(run["cases"]) == ["a", "b"]
    assert json.loads((folder / "cases" / "a.json").read_text()) == before  # the finished case kept, not redone


@pytest.mark.parametrize("found, words", [(SCHEMA_VERSION + 1, "upgrade"), (0, "run it again"),
                                          ("1", "run it again")])
def test_a_version_this_harness_cannot_read_is_named_not_called_damaged(old, found, words, capsys):
    folder = old / f"run-v{RELEASED[-1]}"
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run, "schema_version": found}))
    assert main(["compare", str(folder), str(folder)]) == 2
    error = capsys.readouterr().err
    assert f"written by results format version {found!r}" in error or f"version {found};" in error
    assert f"this is version {SCHEMA_VERSION}" in error and words in error and "damaged" not in error


def test_damaged_is_said_only_of_a_damaged_file(old, capsys):
    folder = old / f"run-v{RELEASED[-1]}"
    run = json.loads((folder / "run.json").read_text())
    del run["configuration"]
    (folder / "run.json").write_text(json.dumps(run))
    assert main(["compare", str(folder), str(folder)]) == 2
    assert "damaged" in capsys.readouterr().err
