"""Reading a file a user named: it must be a regular file under a stated size, checked on the opened file
before a byte is read, so `/dev/zero` is refused instead of read until memory runs out, a FIFO with no writer
is refused instead of waited on, and a folder or a file past the size is one line naming it. Every reader
of a user's file (instruction files, adapter files, cases, sessions, transcripts, baselines, run folders,
cassettes, price files) reads through `read_input`; a `.gz` file is decompressed up to the same size.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from harness.errors import InputError

MiB = 1024 * 1024
# Settings a person writes (an instruction, a case.toml, a runtime adapter, a price file): far below this.
SETTINGS_BYTES = 4 * MiB
# Data a program writes (sessions, transcripts, run folders, baselines, cassettes): the largest real sessions
# seen are tens of MiB (a long Claude Code session, decompressed).
DATA_BYTES = 512 * MiB

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_input(path: str | Path, what: str, missing: str, limit: int = DATA_BYTES) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes; else an InputError naming
    the file and what it is. `missing` says what a file that cannot be opened means (with the OS reason)."""
    where = str(path)
    try:  # O_NONBLOCK: a FIFO opens at once (and is then refused) instead of waiting for a writer
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(where, None, None, f"{missing} ({exc.strerror or exc})") from None
    try:
        info = os.fstat(descriptor)
        kind = next((name for test, name in _KINDS if test(info.st_mode)),
                    None if stat.S_ISREG(info.st_mode) else "not a file")
        if kind is not None:
            raise InputError(where, None, None, f"is {kind}, expected {what} (a regular file)")
        if info.st_size > limit:
            raise _too_large(where, what, limit)
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(where, None, None, f"{missing} ({exc.strerror or exc})") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew while being read
        raise _too_large(where, what, limit)
    return data


def gunzip(data: bytes, where: str, what: str, limit: int = DATA_BYTES) -> bytes:
    """A gzip file's content (every member), refused past `limit` bytes as it is decompressed: a small file
    that would expand to gigabytes stops at the limit."""
    out = bytearray()
    rest = data
    try:
        while rest:
            stream = zlib.decompressobj(wbits=31)
            out += stream.decompress(rest, limit + 1 - len(out))
            if len(out) > limit or stream.unconsumed_tail:
                raise _too_large(where, f"a {what} (decompressed)", limit)
            if not stream.eof:
                raise InputError(where, None, None, f"cannot read {what}: the gzip data is cut short")
            rest = stream.unused_data.lstrip(b"\0")
    except zlib.error as exc:
        raise InputError(where, None, None, f"cannot read {what}: not valid gzip data ({exc})") from None
    return bytes(out)


def _too_large(where: str, what: str, limit: int) -> InputError:
    return InputError(where, None, None, f"larger than {limit // MiB} MiB, more than {what} can be; "
                                         f"not read")
