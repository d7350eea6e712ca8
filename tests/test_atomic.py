"""Every file is written whole or not at all (issue 33.1): a full disk (ENOSPC) while a report is written
names that file in one line, exits non-zero, and leaves every file written before it intact; a file being
replaced keeps its old bytes; no temporary file is left behind. The disk fills for real on a tiny tmpfs when
this process may mount one, and through an injected ENOSPC in the writer's write otherwise (always)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

import harness.atomic
from harness.atomic import WriteFailed, write_atomic
from harness.cli import main
from test_runner import make_case


def _full_disk_for(monkeypatch, name: str) -> None:
    """The writer's write raises ENOSPC for files called `name` (after writing a first chunk, as a filling
    disk does), every other file is written as usual."""
    real_open = open

    class Filling:
        def __init__(self, handle):
            self.handle = handle

        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, attribute):
            return getattr(self.handle, attribute)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    def opening(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        return Filling(handle) if Path(path).name.startswith(f".{name}.") else handle

    monkeypatch.setattr(harness.atomic, "open", opening, raising=False)


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    write_atomic(target, "the first report\n")
    _full_disk_for(monkeypatch, "report.md")
    with pytest.raises(WriteFailed, match=r"report\.md: cannot write the file \(No space left on device\)"):
        write_atomic(target, "a second report, ten times longer\n" * 10)
    assert target.read_text() == "the first report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_a_full_disk_at_report_html_names_it_and_loses_nothing_written_before(tmp_path, monkeypatch, capsys):
    make_case(tmp_path / "cases", "small")
    out = tmp_path / "out"
    _full_disk_for(monkeypatch, "report.html")
    code = main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out)])
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1
    assert error == f"error: {out / 'report.html'}: cannot write the file (No space left on device); files " \
                    f"written before it are intact"
    run = json.loads((out / "run.json").read_text())  # whole, finished, and its case file beside it
    assert run["finished"] and run["cases"]["small"]["status"] == "ok"
    assert json.loads((out / "cases" / "small.json").read_text())["case"] == "small"
    assert (out / "report.md").read_text().startswith("#")
    assert not (out / "report.html").exists()
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def _mount_tiny_tmpfs(folder: Path) -> bool:
    folder.mkdir()
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    return done.returncode == 0


def test_a_real_full_disk_keeps_the_earlier_files(tmp_path):
    disk = tmp_path / "disk"
    if not _mount_tiny_tmpfs(disk):
        pytest.skip("cannot mount a tmpfs here (needs root); the injected ENOSPC above covers the writer")
    try:
        write_atomic(disk / "run.json", "{}\n")
        write_atomic(disk / "report.md", "# report\n")
        with pytest.raises(WriteFailed) as failed:
            write_atomic(disk / "report.html", "x" * 200_000)  # three times the disk
        assert str(failed.value).startswith(f"{disk / 'report.html'}: cannot write the file (No space left")
        assert (disk / "run.json").read_text() == "{}\n" and (disk / "report.md").read_text() == "# report\n"
        assert sorted(p.name for p in disk.iterdir()) == ["report.md", "run.json"]
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_full_disk_at_a_case_file_stops_the_run_keeping_the_cases_before(tmp_path, monkeypatch, capsys):
    make_case(tmp_path / "cases", "a")
    make_case(tmp_path / "cases", "b")
    out = tmp_path / "out"
    _full_disk_for(monkeypatch, "b.json")
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: {out / 'cases' / 'b.json'}: cannot write the file (No space left on device)")
    assert len(error.splitlines()) == 1
    run = json.loads((out / "run.json").read_text())  # whole, holding the case finished before
    assert list(run["cases"]) == ["a"] and "finished" not in run
    assert sorted(p.name for p in (out / "cases").iterdir()) == ["a.json"]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_the_request_log_never_ends_in_half_a_record_on_a_full_disk(tmp_path):
    from harness.errors import HarnessError
    from harness.scripted.log import RequestLog

    disk = tmp_path / "disk"
    if not _mount_tiny_tmpfs(disk):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        log = RequestLog(disk / "requests.jsonl")
        with pytest.raises(HarnessError) as failed:
            for number in range(1000):  # 1,000 records of ~1 KB: fifteen times the disk
                log.write(path="/v1/chat/completions", headers={}, body={"n": number, "text": "x" * 1000},
                          wire="openai", stream=False, kind="turn")
        log.close()
        assert str(failed.value).startswith(f"{disk / 'requests.jsonl'}: cannot write the file (No space")
        lines = (disk / "requests.jsonl").read_text().splitlines(keepends=True)
        assert lines and all(line.endswith("\n") and json.loads(line)["body"]["text"] for line in lines)
        assert [json.loads(line)["seq"] for line in lines] == list(range(1, len(lines) + 1))
    finally:
        subprocess.run(["umount", str(disk)], check=True)
