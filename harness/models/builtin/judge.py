"""The judge: a 0 to 5 score for how many of the expected facts an answer covers."""

from __future__ import annotations

import re

from harness.models.base import ModelRequest
from harness.models.builtin.text import clip, content_words, last_user


_LABEL = re.compile(r"^\s*(expected(?: facts| answer)?|facts|answer|response|question|rubric)\s*:\s*(.*)$", re.I)


def _labelled_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _LABEL.match(line)
        if match:
            label = match.group(1).lower()
            current = "expected" if label.startswith(("expected", "facts")) else (
                "answer" if label in ("answer", "response") else label)
            sections.setdefault(current, [])
            line = match.group(2)
        if current is not None and line.strip():
            sections[current].append(line.strip().lstrip("-*• ").strip())
    return sections


def judge(request: ModelRequest) -> tuple[str, str]:
    user = last_user(request)
    parts = _labelled_sections(user.content if user else "")
    facts = [f for f in parts.get("expected", []) if content_words(f)]
    answer_words = content_words(" ".join(parts.get("answer", [])))
    if not facts:
        return "score: 0\nreason: no expected facts were given to grade against", "stop"
    coverage = [len(content_words(f) & answer_words) / len(content_words(f)) for f in facts]
    score = round(5 * sum(coverage) / len(coverage))
    covered = sum(1 for c in coverage if c >= 0.5)
    missing = [f for f, c in zip(facts, coverage) if c < 0.5]
    reason = f"covers {covered} of {len(facts)} expected facts"
    if missing:
        reason += "; missing: " + clip("; ".join(missing), 160)
    return f"score: {score}\nreason: {reason}", "stop"
