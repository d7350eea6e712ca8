"""`merge` refuses shards that are not whole (issue 33.4), with one line and exit 2 naming what is missing:
a shard killed midway, one still being written by a running process, a deleted case file, a `cases/` folder
replaced by a file; `--allow-partial` merges what is there."""

from __future__ import annotations

import json
import shutil

import pytest

from harness.cli import main
from harness.results.claim import claim_folder
from test_cli_gaps import cases, run  # noqa: F401 (the fixture)


@pytest.fixture
def shards(cases, tmp_path):  # noqa: F811
    found = [run(cases, tmp_path / f"s{i}", "--shard", f"{i}/2") for i in (1, 2)]
    return found


def killed(shard):
    """The shard as a run killed before its case finished leaves it: run.json without `finished` or the case."""
    document = json.loads((shard / "run.json").read_text())
    del document["finished"]
    for key in document.pop("cases"):
        (shard / "cases" / f"{key}.json").unlink()
    (shard / "run.json").write_text(json.dumps({**document, "cases": {}}))


def deleted_case_file(shard):
    next((shard / "cases").glob("*.json")).unlink()


def cases_replaced_by_a_file(shard):
    shutil.rmtree(shard / "cases")
    (shard / "cases").write_text("not a folder")


@pytest.mark.parametrize("damage, expected", [
    (killed, "s2: the run did not finish (killed or interrupted; 0 case(s) written): `run --resume` it, or pass "
             "--allow-partial to merge what is there"),
    (deleted_case_file, "s2/cases: 1 case file(s) of run.json missing (first: "),
    (cases_replaced_by_a_file, "s2/cases: not a folder of case files (the run is damaged); pass --allow-partial"),
])
def test_a_damaged_shard_is_refused_in_one_line_unless_allow_partial(shards, tmp_path, capsys, damage, expected):
    damage(shards[1])
    capsys.readouterr()
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: {tmp_path}/") and expected in error and len(error.splitlines()) == 1
    assert not (tmp_path / "merged").exists()
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "partial"), "--allow-partial"]) == 0
    merged = json.loads((tmp_path / "partial" / "run.json").read_text())
    assert sorted(merged["cases"]) == ["one", "two"]  # shard 1's; the damaged shard 2 held `three`


def test_a_shard_still_being_written_is_refused(shards, tmp_path, capsys):
    claim = claim_folder(shards[0], resume=True)  # a running process holds it while it writes
    try:
        capsys.readouterr()
        assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged")]) == 2
        error = capsys.readouterr().err.strip()
        assert error == (f"error: {shards[0]}: a running process is still writing this run; wait for it to finish, "
                         f"or pass --allow-partial to merge what is there")
    finally:
        claim.close()
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged")]) == 0


def test_a_case_file_holding_another_cases_record_is_refused_before_anything_is_written(shards, tmp_path, capsys):
    """Issue 44: a case file copied over another (7 of 8 cases were merged, exit 0) names itself and the case
    it holds; the merged folder is not created, --allow-partial does not take it either."""
    files = sorted((shards[0] / "cases").glob("*.json"))
    assert len(files) >= 2
    shutil.copyfile(files[0], files[1])
    capsys.readouterr()
    for extra in ([], ["--allow-partial"]):
        assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged"), *extra]) == 2
        error = capsys.readouterr().err
        assert error.startswith(f"error: {files[1]}: case: holds the record of {files[0].stem!r}, not of "
                                f"{files[1].stem!r}") and error.count("\n") == 1
        assert not (tmp_path / "merged").exists()
