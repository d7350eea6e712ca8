"""Claiming a run folder: one process writes one run.

"Does the folder hold a run?" followed by writing is a race: two runs started at once into one `--out`
both saw no run.json. A new run instead creates the marker `.claim` exclusively (O_EXCL: exactly one
creator wins), and every writer, resuming ones too, holds an exclusive non-blocking lock on it while it
writes, released when the run finishes or the process ends (the kernel drops it even on SIGKILL).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from harness.errors import HarnessError

CLAIM_FILE = ".claim"


class Claim:
    """The open, locked claim file. A copy of a run folder (benchmarks copy one per round) is the same
    writer, so it shares the claim instead of copying an open file."""

    def __init__(self, handle: IO[str]):
        self.handle = handle

    def close(self) -> None:
        self.handle.close()

    def __deepcopy__(self, memo: dict) -> Claim:
        return self


def claim_folder(folder: Path, resume: bool) -> Claim:
    """The locked claim of `folder`; keep it while writing (close it to release)."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / CLAIM_FILE
    flags = os.O_WRONLY | os.O_CREAT | (0 if resume else os.O_EXCL)
    try:
        descriptor = os.open(marker, flags, 0o644)
    except FileExistsError:
        raise HarnessError(f"{folder} is already claimed by another run (it has {CLAIM_FILE}): pass --resume to "
                           f"continue it or --out elsewhere") from None
    except OSError as exc:
        raise HarnessError(f"{folder}: cannot claim the folder ({exc.strerror or exc})") from None
    handle = os.fdopen(descriptor, "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise HarnessError(f"{folder}: another process is writing this run right now; wait for it to finish "
                           f"or choose another --out") from None
    handle.truncate(0)
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return Claim(handle)


def being_written(folder: Path) -> bool:
    """Whether a running process holds the claim of `folder` now (a killed one holds nothing)."""
    try:
        descriptor = os.open(folder / CLAIM_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)  # closing drops a lock taken here
    return False
