"""A file a user names is a regular file under a stated size, checked before it is read (issue 44): `/dev/zero`
and a FIFO with no writer are each one line and exit 2 at once, for every command that reads a user's file;
a folder, a file past the size and a gzip file that expands past it are refused the same way."""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.input_file import MiB, gunzip, read_input

ROOT = Path(__file__).parents[1]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    return path


def test_a_regular_file_is_read_and_anything_else_named(tmp_path: Path, fifo: Path) -> None:
    text = tmp_path / "ok.txt"
    text.write_bytes(b"hello")
    assert read_input(text, "a note", "cannot read it") == b"hello"
    refused = {fifo: "is a named pipe (FIFO), expected a note", Path("/dev/zero"): "is a character device",
               tmp_path: "is a folder, expected a note", tmp_path / "absent": "cannot read it (No such file"}
    for path, words in refused.items():
        with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")) as caught:
            read_input(path, "a note", "cannot read it")
        assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_a_file_past_its_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (MiB + 1))
    assert len(read_input(path, "a note", "cannot read it", limit=MiB + 1)) == MiB + 1
    with pytest.raises(InputError, match="larger than 1 MiB, more than a note can be; not read"):
        read_input(path, "a note", "cannot read it", limit=MiB)


def test_gzip_is_decompressed_only_up_to_the_limit(tmp_path: Path) -> None:
    two_members = gzip.compress(b"a" * 10) + gzip.compress(b"b" * 10)
    assert gunzip(two_members, "s.gz", "session") == b"a" * 10 + b"b" * 10
    bomb = gzip.compress(b"\0" * (8 * MiB))  # 8 KiB on disk
    assert len(bomb) < 64 * 1024
    with pytest.raises(InputError, match="larger than 1 MiB, more than a session \\(decompressed\\) can be"):
        gunzip(bomb, "s.gz", "session", limit=MiB)
    with pytest.raises(InputError, match="cannot read session: the gzip data is cut short"):
        gunzip(two_members[:15], "s.gz", "session")
    with pytest.raises(InputError, match="cannot read session: not valid gzip data"):
        gunzip(b"not gzip", "s.gz", "session")


def _limited() -> None:
    """A child that reads /dev/zero by mistake stops at 2 GB of address space instead of filling the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


def run_cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120, preexec_fn=_limited, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
@pytest.mark.parametrize("argv", [
    ["run", "--instruction", "{file}", "--out", "{tmp}/out"],
    ["run", "--prices", "{file}", "--out", "{tmp}/out"],
    ["cases", "import", "{file}", "--out", "{tmp}/case"],
    ["calibrate", "{file}"],
])
def test_each_command_refuses_a_device_or_a_fifo_at_once_in_one_line(argv, source, fifo: Path,
                                                                     tmp_path: Path) -> None:
    file = "/dev/zero" if source == "/dev/zero" else str(fifo)
    result = run_cli(*[a.replace("{file}", file).replace("{tmp}", str(tmp_path)) for a in argv])
    kind = "a character device" if source == "/dev/zero" else "a named pipe (FIFO)"
    assert result.returncode == 2, result.stderr[-500:]
    assert result.stderr == f"error: {file}: is {kind}, expected {result.stderr.split('expected ')[1]}"
    assert result.stderr.count("\n") == 1 and "(a regular file)" in result.stderr


def test_a_case_whose_files_are_fifos_is_one_line(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "piped"
    case.mkdir(parents=True)
    (case / "case.toml").write_text('[case]\nid = "piped"\ntitle = "t"\npool = "edge"\nsession = "session.jsonl"\n'
                                    '[model]\ncontext_window = 1000\nmax_output_tokens = 100\n')
    os.mkfifo(case / "session.jsonl")
    result = run_cli("cases", "validate", "--cases-dir", str(tmp_path / "cases"))
    assert result.returncode == 2 and "session.jsonl: is a named pipe (FIFO)" in result.stderr
