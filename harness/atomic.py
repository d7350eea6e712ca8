"""The one writer of every file the harness writes: whole or not at all.

The bytes go to a temporary file in the target's folder (a rename never crosses file systems), are flushed
to disk (fsync), and only then replace the target (os.replace, atomic on POSIX). A full disk, a read-only
folder or any other OSError leaves the target as it was (an earlier version, or nothing), removes the
temporary file, and is one HarnessError naming the file it could not write.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from harness.errors import HarnessError


class WriteFailed(HarnessError):
    """A file could not be written (full disk, no permission); earlier files are intact."""


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write `data` (text as UTF-8; a lone surrogate becomes its escape) to `path` atomically."""
    content = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    return write_with(path, lambda out: out.write(content))


def write_with(path: str | Path, fill: Callable[[BinaryIO], object]) -> Path:
    """`fill` writes the content into a binary file object (for writers that stream, like a plot);
    the target appears only once it is complete and on disk."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "wb") as out:
            fill(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except OSError as exc:
        raise WriteFailed(f"{path}: cannot write the file ({exc.strerror or exc}); files written before it are "
                          f"intact") from None
    finally:
        try:
            partial.unlink(missing_ok=True)  # a failed write leaves no temporary file behind
        except OSError:
            pass
    return path


class AppendOnly:
    """An append-only log (JSON lines as they arrive, like the scripted server's request log), one whole
    record per write: each record goes to the file in one write on an O_APPEND descriptor, and a write that
    fails midway (a full disk) is cut back, so the file never ends in half a record; the error names it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise WriteFailed(f"{self.path}: cannot open the file for writing ({exc.strerror or exc})") from None

    def append(self, record: str) -> None:
        data = record.encode("utf-8", "backslashreplace")
        size = os.fstat(self._descriptor).st_size
        try:
            written = os.write(self._descriptor, data)
            if written != len(data):
                raise OSError(28, "No space left on device")  # a short write: the disk filled midway
        except OSError as exc:
            try:
                os.ftruncate(self._descriptor, size)
            except OSError:
                pass
            raise WriteFailed(f"{self.path}: cannot write the file ({exc.strerror or exc}); records written "
                              f"before it are intact") from None

    def close(self) -> None:
        os.close(self._descriptor)
