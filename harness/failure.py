"""A model request that failed for good (after its retries): the exception the adapters raise, and the record
a case keeps of it, so that one failed request loses only the grades that needed it (issue 17)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from harness.errors import HarnessError


class RequestFailed(HarnessError):
    """A provider request that failed after the SDK's retries (an HTTP error, a timeout, a dropped connection,
    an unreadable reply). `request` names what the request was for, once a caller knows it."""

    def __init__(self, message: str, request: str = "") -> None:
        super().__init__(message)
        self.request = request


@dataclass(frozen=True)
class RequestFailure:
    """What a failed request cost: which request (`summarizer` at `compaction` N, an `answer` or a `judge`
    call), and its error text, already redacted."""

    request: str
    error: str
    compaction: int | None = None

    def describe(self) -> str:
        where = f"compaction {self.compaction}'s summarizer" if self.compaction is not None else f"the {self.request}"
        return f"{where} request failed: {self.error}"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.request, **({} if self.compaction is None else {"compaction": self.compaction}),
                "error": self.error}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RequestFailure:
        return cls(data["request"], data["error"], data.get("compaction"))
