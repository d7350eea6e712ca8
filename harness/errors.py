"""Errors a user can cause: the CLI prints them as one line and exits 2."""

from __future__ import annotations


class HarnessError(Exception):
    """A usage or input error: bad file, missing key, cassette miss, unknown price."""

    exit_code = 2


class InputError(HarnessError):
    """A malformed input file; the message names the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str | None, problem: str):
        self.path, self.line, self.field, self.problem = path, line, field, problem
        where = path if line is None else f"{path}:{line}"
        what = f"{field}: {problem}" if field else problem
        super().__init__(f"{where}: {what}")
