"""Who may record into a case's cassette folder at once. Recordings that add (`new`, a first `once`) join what
the file holds when they save, so any number of them share a folder. A re-recording (`all`) replaces what the
file held when it opened, which drops what a concurrent recording saved before that moment: so a
re-recording claims its folder alone, and a recording in another process that meets its claim (or that a
re-recording meets) stops at once with one line, instead of both exiting 0 with exchanges lost.

The claim is an flock on a lock file named after the folder's resolved path, in the system's temporary
folder: nothing is written beside the cassettes (they are committed), the kernel drops the lock when the
process ends, even on SIGKILL, and one process's writers never refuse each other (it claims once)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
from pathlib import Path

from harness.errors import HarnessError

LOCKS = Path(tempfile.gettempdir()) / "compaction-harness-cassette-claims"

class FolderClaimed(HarnessError):
    """Another process records into the folder in a way this recording must not meet: the run stops here
    (one line, exit 2), not only the case, since every later case would meet it too."""


_held: dict[str, tuple[int, bool]] = {}  # lock name -> (descriptor, exclusive), this process's claims
_mutex = threading.Lock()


def claim_folder(folder: Path, *, exclusive: bool) -> None:
    """Claim `folder` for a recording: `exclusive` for a re-recording, else shared with other recordings."""
    name = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:32]  # the folder need not exist yet
    with _mutex:
        held = _held.get(name)
        if held is not None and (held[1] or not exclusive):
            return
        if held is None:
            LOCKS.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(LOCKS / name, os.O_RDWR | os.O_CREAT, 0o666)
        else:
            descriptor = held[0]
        try:
            fcntl.flock(descriptor, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            if held is None:
                os.close(descriptor)
            theirs = "recording into" if exclusive else "re-recording (--record-mode all)"
            raise FolderClaimed(f"cassette folder {folder}: another process is {theirs} it, and a re-recording "
                               "beside another recording would drop exchanges: wait for it to finish, or record "
                               "into another --cassettes") from None
        _held[name] = (descriptor, exclusive)


def release_claims() -> None:
    """Give up every claim of this process (the end of a `run`; otherwise the process's end does it)."""
    with _mutex:
        for descriptor, _ in _held.values():
            os.close(descriptor)
        _held.clear()
