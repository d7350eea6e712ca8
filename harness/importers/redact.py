"""Secret redaction: API keys and tokens in imported text become `[REDACTED]`, counted on the report."""

from __future__ import annotations

import re
from typing import Any

from harness.importers.report import ImportReport

_SECRET_PATTERNS = [
    re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])"),
    re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{16,}"),
]
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
