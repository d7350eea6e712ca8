"""The sections a summary request asks for, which kind of content each heading stands for, and an earlier
summary in the history (a message that carries the requested headings).

A request names its sections as Markdown headings in its instruction (the harness's, pi's, opencode's); as the
child tags of an XML skeleton in its instruction or system prompt (Gemini CLI's and Qwen Code's
`<state_snapshot>`); or as a list of what to include (Codex's handoff: "Include:" then bullets). The summary is
always built under Markdown headings; an XML request gets it turned into its tags at the end (`as_xml`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.models import _tokens
from harness.models.base import ChatMessage
from harness.models.builtin.text import HEADING

DEFAULT_SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")
# Which extracted category a heading stands for, by the words in it.
_CATEGORY_WORDS = (
    ("facts", ("exact", "value", "fact", "knowledge", "data", "reference")),
    ("goal", ("goal", "task", "objective", "intent", "request", "purpose")),
    ("constraints", ("constraint", "preference", "rule", "requirement", "instruction")),
    ("decisions", ("decision", "choice", "rationale")),
    ("files", ("file", "artifact", "code", "change")),
    ("errors", ("error", "issue", "problem", "fail", "bug")),
    ("next", ("next", "todo", "remaining", "pending", "open")),
    ("progress", ("progress", "done", "status", "complete", "state", "work", "action")),
)
_PLAN_WORDS = ("plan",)  # a plan is what comes next: checked after every other category
_TAG = re.compile(r"<([a-z][a-z0-9_]*)>(.*?)</\1>", re.S)
_LIST_LEAD = re.compile(r":\s*$")


@dataclass(frozen=True)
class SummaryFormat:
    sections: list[tuple[str, str]]  # (heading prefix, title) pairs, in order
    xml_root: str | None = None  # the skeleton's root tag when the request asked for XML

    def budget(self, max_tokens: int) -> int:
        """The tokens the sections' content may use: an XML answer's tags take their share."""
        if self.xml_root is None:
            return max_tokens
        tags = as_xml("\n".join(f"## {title}" for _, title in self.sections), self.xml_root)
        return max(max_tokens - _tokens.count(tags), 1)

    def shaped(self, summary: str) -> str:
        """The finished summary in the form asked for."""
        return summary if self.xml_root is None else as_xml(summary, self.xml_root)


def summary_format(instruction: str, system: str = "") -> SummaryFormat:
    """What the request asks the summary to look like (see the module docstring), defaults if it says nothing."""
    return read_format(instruction, system) or SummaryFormat([("##", title) for title in DEFAULT_SECTIONS])


def read_format(instruction: str, system: str = "") -> SummaryFormat | None:
    """The sections the request names, or None when it names none: the only part of an instruction this
    summarizer follows (its wording, tone and other asks change nothing)."""
    headings = _headings(instruction)
    if headings:
        return SummaryFormat(headings)
    for text in (instruction, system):
        root, tags = _xml_skeleton(text)
        if root is not None:
            return SummaryFormat([("##", tag) for tag in tags], root)
    listed = _listed(instruction)
    return SummaryFormat(listed) if listed else None


def as_xml(summary: str, root: str) -> str:
    """A summary built under `## tag` headings, as `<root><tag>...</tag>...</root>`."""
    out = [f"<{root}>"]
    tag: str | None = None
    for line in summary.split("\n"):
        heading = HEADING.match(line.strip())
        if heading:
            if tag is not None:
                out.append(f"    </{tag}>")
            tag = re.sub(r"\W+", "_", heading.group(2).strip().lower()).strip("_")
            out.append(f"    <{tag}>")
        elif line.strip():
            out.append(f"        {line.strip()}")
    if tag is not None:
        out.append(f"    </{tag}>")
    return "\n".join([*out, f"</{root}>"])


def _headings(instruction: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for line in instruction.splitlines():
        match = HEADING.match(line.strip())
        if match and match.group(2).strip():
            found.append((match.group(1), match.group(2).strip()))
    return found


def _xml_skeleton(text: str) -> tuple[str | None, list[str]]:
    """The tag whose body holds the most child tags (at least three), and those children in order."""
    best: tuple[str | None, list[str]] = (None, [])
    for match in _TAG.finditer(text):
        children = [child.group(1) for child in _TAG.finditer(match.group(2))]
        if len(children) >= 3 and len(children) > len(best[1]):
            best = (match.group(1), children)
    return best


def _listed(instruction: str) -> list[tuple[str, str]]:
    """The first run of two or more bullets right after a line ending in a colon, each a section."""
    lines = instruction.splitlines()
    for i, line in enumerate(lines):
        if not _LIST_LEAD.search(line):
            continue
        bullets: list[str] = []
        for following in lines[i + 1:]:
            if not following.lstrip().startswith(("- ", "* ")):
                break
            bullets.append(following.strip()[2:].strip())
        if len(bullets) >= 2:  # a list of what to include names no task: the goal leads, as a heading would
            goal = [] if any(category_of(b) == "goal" for b in bullets) else [("##", "Goal")]
            return goal + [("##", bullet) for bullet in bullets]
    return []


def requested_sections(instruction: str) -> list[tuple[str, str]]:
    """(heading line prefix, heading title) pairs the instruction lists, in order; defaults if none."""
    return _headings(instruction) or [("##", title) for title in DEFAULT_SECTIONS]


def category_of(title: str) -> str:
    lower = title.lower().replace("_", " ")
    for category, words in _CATEGORY_WORDS:
        if any(word in lower for word in words):
            return category
    return "next" if any(word in lower for word in _PLAN_WORDS) else "other"


def previous_summary(messages: tuple[ChatMessage, ...], sections: list[tuple[str, str]]) -> int | None:
    """Index of a message that is an earlier summary: it carries at least two of the requested headings."""
    wanted = {title.lower() for _, title in sections}
    for index, message in enumerate(messages):
        titles = {m.group(2).strip().lower() for line in message.content.splitlines()
                  if (m := HEADING.match(line.strip()))}
        if len(titles & wanted) >= 2:
            return index
    return None
