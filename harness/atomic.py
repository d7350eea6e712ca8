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
