"""The sections a summary request asks for, which kind of content each heading stands for, and an earlier
summary in the history (a message that carries the requested headings)."""

from __future__ import annotations

from harness.models.base import ChatMessage
from harness.models.builtin.text import HEADING

DEFAULT_SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")
# Which extracted category a heading stands for, by the words in it.
_CATEGORY_WORDS = (
    ("facts", ("exact", "value", "fact")),
    ("goal", ("goal", "task", "objective", "intent", "request", "purpose")),
    ("constraints", ("constraint", "preference", "rule", "requirement", "instruction")),
    ("decisions", ("decision", "choice", "rationale")),
    ("files", ("file", "artifact", "code", "change")),
    ("errors", ("error", "issue", "problem", "fail", "bug")),
    ("next", ("next", "todo", "remaining", "pending", "open")),
    ("progress", ("progress", "done", "status", "complete", "state", "work")),
)


def requested_sections(instruction: str) -> list[tuple[str, str]]:
    """(heading line prefix, heading title) pairs the instruction lists, in order; defaults if none."""
    found: list[tuple[str, str]] = []
    for line in instruction.splitlines():
        match = HEADING.match(line.strip())
        if match and match.group(2).strip():
            found.append((match.group(1), match.group(2).strip()))
    return found or [("##", title) for title in DEFAULT_SECTIONS]


def category_of(title: str) -> str:
    lower = title.lower()
    for category, words in _CATEGORY_WORDS:
        if any(word in lower for word in words):
            return category
    return "other"


def previous_summary(messages: tuple[ChatMessage, ...], sections: list[tuple[str, str]]) -> int | None:
    """Index of a message that is an earlier summary: it carries at least two of the requested headings."""
    wanted = {title.lower() for _, title in sections}
    for index, message in enumerate(messages):
        titles = {m.group(2).strip().lower() for line in message.content.splitlines()
                  if (m := HEADING.match(line.strip()))}
        if len(titles & wanted) >= 2:
            return index
    return None
