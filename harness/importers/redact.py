"""Secret redaction: API keys and tokens in imported text become `[REDACTED]`, counted on the report."""

from __future__ import annotations

from typing import Any

from harness.importers.report import ImportReport
from harness.redact import TOKEN_PATTERNS

_SECRET_PATTERNS = TOKEN_PATTERNS  # one list of token shapes for imports and outputs (harness.redact)
REDACTED = "[REDACTED]"


class Redactor:
    def __init__(self, report: ImportReport):
        self.report = report

    def text(self, value: str) -> str:
        for pattern in _SECRET_PATTERNS:
            value, n = pattern.subn(REDACTED, value)
            self.report.redacted += n
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value
