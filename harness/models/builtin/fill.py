"""The fill pass: a summary that leaves its budget unused spends the rest on the sentences a careful human
summarizer keeps and the extractive sections pass over.

The sections keep what cue words and tool results single out; a session's reasoning is mostly in plain prose:
the agent's reading of an error or its reason for a choice ("because", "the issue is", "instead"), the user's
requests in the user's own words, a subagent's findings beyond its conclusion. When budget is left, those
sentences are added to the section they belong to, the most telling first (by kind, then by whether they name
something exact, then the newest), each only once and never one the summary already says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from harness.models import _tokens
from harness.models.base import ChatMessage
from harness.models.builtin.cues import NOT_PROSE
from harness.models.builtin.noise import user_words
from harness.models.builtin.outputs import untagged
from harness.models.builtin.reports import is_protocol_error, is_rejection, is_subagent, report_text
from harness.models.builtin.sections import category_of
from harness.models.builtin.steps import error_details, error_line
from harness.models.builtin.text import HEADING, clip, content_words, count_cached, sentences, tool_action
from harness.models.builtin.turns import is_pasted_document, is_shell_command

# Words that say why: the agent explaining an error, a cause, a choice or what a change does.
EXPLAIN_CUES = re.compile(
    r"\b(because|since|due to|caused by|the (real )?(issue|problem|bug|cause|reason|culprit|fix|error) (is|was)|"
    r"root cause|turns out|it seems|appears to|which means|this means|that means|so that|instead|rather than|"
    r"that's why|this is why|the fix|fixed by|found (that|the)|the reason|failing because|fails because|"
    r"not because|the difference|expects?|requires?|conflicts? with|already)\b", re.I)
# A lead-in and the list it opens ("The insertion points are:" then "1. ...", "- ..."): one finding.
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$")
_THINKING = re.compile(r"\b(let me|let's|i'll|i will|i need to|think|check|look)\b", re.I)  # a plan, not a finding
MAX_LIST_ITEMS = 6
MAX_ITEM_CHARS = 90
MAX_LIST_CHARS = 420
# Something exact: code in backticks, an identifier (CamelCase, snake_case, dotted), a number, a path.
_EXACT = re.compile(r"`[^`]+`|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b\w+_\w+\b|\b\w+\.\w+\b|\d")
MIN_WORDS = 5
MAX_SENTENCE_CHARS = 300
MAX_REQUEST_CHARS = 600  # a user's request is kept verbatim up to a short paragraph
QUOTED_CHARS = 120  # a request whose opening the summary already quotes is in it (as the goal, say)
MAX_PLAIN_FINDINGS = 4  # a report's sentences that explain nothing: its first few say what it is about
COVERED = 0.8  # a sentence whose words the summary already holds says nothing new
MARGIN = 0.98  # per-line counts run a little under the exact count of the joined text
# Kinds of sentence, most telling first, and the section each goes to (then its fallback). An error has no
# fallback: like the errors the sections pick, it goes only where the instruction asks for errors.
_KINDS = {"request": (3, ("goal", "constraints")), "explanation": (2, ("decisions", "progress")),
          "finding": (2, ("progress", "decisions")), "reply": (1, ("progress", "decisions")),
          "error": (2, ("errors",)), "list": (2, ("progress", "decisions")),
          "detail": (0, ("progress", "decisions"))}


@dataclass(frozen=True)
class _Candidate:
    kind: str
    text: str
    order: int

    @property
    def rank(self) -> tuple[int, int, int]:
        return (_KINDS[self.kind][0], bool(_EXACT.search(self.text)), self.order)


def candidates(messages: tuple[ChatMessage, ...]) -> list[_Candidate]:
    """The sentences worth keeping, in the order the session said them."""
    found: list[_Candidate] = []
    names: dict[str, tuple[str, dict]] = {}
    for order, message in enumerate(messages):
        if message.role == "user":
            words = user_words(message.content)
            if words and not is_shell_command(words) and not is_pasted_document(words) \
                    and len(words.split()) >= MIN_WORDS:
                found.append(_Candidate("request", f"User asked: {clip(words, MAX_REQUEST_CHARS)}", order))
        elif message.role == "assistant":
            for call in message.tool_calls:
                names[call.id] = (call.name, call.arguments)
            prose = _prose(message.content)
            found += [_Candidate("list", text, order) for text in _lists(message.content)]
            found += [_Candidate("explanation", s, order) for s in prose if EXPLAIN_CUES.search(s)]
            if prose and not message.tool_calls:  # a reply to the user: what the agent found or concluded
                found += [_Candidate("reply", s, order) for s in prose if not EXPLAIN_CUES.search(s)]
        else:
            name, arguments = names.get(message.tool_call_id or "", ("tool", {}))
            message = replace(message, content=untagged(message.content))
            if is_subagent(name, arguments) and not message.is_error:
                found += _findings(report_text(message.content), order)
            elif _failed(name, message):
                found += [_Candidate("error", f"{line} ({name})", order) for line in error_details(message.content)]
    return found


def _lists(text: str) -> list[str]:
    """Each list the agent wrote after a lead-in ending in a colon, as the lead-in and its items in a line."""
    lines = text.splitlines()
    found: list[str] = []
    for at, line in enumerate(lines):
        if not line.rstrip().endswith(":") or len(line.split()) < 2 or _THINKING.search(line):
            continue
        items = []
        for following in lines[at + 1:]:
            if not following.strip() and not items:
                continue  # a blank line between the lead-in and its list
            item = _ITEM.match(following)
            if not item:
                break
            items.append(clip(item.group(1).replace("**", ""), MAX_ITEM_CHARS))
        if len(items) >= 2:
            lead = " ".join(line.replace("**", "").split())
            found.append(clip(f"{lead} " + "; ".join(items[:MAX_LIST_ITEMS]), MAX_LIST_CHARS))
    return found


def _failed(name: str, message: ChatMessage) -> bool:
    """A step that failed, as the errors section reads it: a read file that mentions an error is the file, and
    a call the user declined or the harness refused is no project error."""
    if is_rejection(message.content) or is_protocol_error(message.content):
        return False
    return message.is_error or (tool_action(name) != "read" and bool(error_line(message.content)))


def _findings(report: str, order: int) -> list[_Candidate]:
    """A subagent's report: the sentences that explain are findings; of the rest, the first few are what the
    report is about and the others detail (a listing of lines and fields)."""
    found: list[_Candidate] = []
    plain = 0
    for sentence in _prose(report):
        explains = bool(EXPLAIN_CUES.search(sentence))
        plain += not explains
        kind = "finding" if explains else ("reply" if plain <= MAX_PLAIN_FINDINGS else "detail")
        found.append(_Candidate(kind, f"Subagent found: {sentence}", order))
    return found


def _prose(text: str) -> list[str]:
    return [clip(s, MAX_SENTENCE_CHARS) for s in sentences(text)
            if len(s.split()) >= MIN_WORDS and not NOT_PROSE.search(s)]


def fill(summary: str, messages: tuple[ChatMessage, ...], max_tokens: int) -> str:
    """The summary with the best unsaid sentences added to their sections while the budget allows."""
    blocks = _blocks(summary)
    if not blocks:
        return summary
    left = int(max_tokens * MARGIN) - _tokens.count(summary)
    said = set(content_words(summary))
    chosen: list[tuple[int, _Candidate]] = []
    for candidate in sorted(candidates(messages), key=lambda c: c.rank, reverse=True):
        if left <= 0:
            break
        words = content_words(candidate.text)
        if not words or len(words & said) >= COVERED * len(words) or _quoted(candidate, summary):
            continue
        at = _section_for(blocks, candidate.kind)
        cost = count_cached(f"- {candidate.text}")
        if at is None or cost > left:
            continue
        chosen.append((at, candidate))
        said |= words
        left -= cost
    while chosen:
        text = _render(blocks, chosen)
        if _tokens.count(text) <= max_tokens:
            return text
        chosen.remove(min(chosen, key=lambda pair: pair[1].rank))
    return summary


def _quoted(candidate: _Candidate, summary: str) -> bool:
    opening = candidate.text.partition(": ")[2][:QUOTED_CHARS]
    return candidate.kind == "request" and " ".join(opening.split()) in " ".join(summary.split())


def _blocks(summary: str) -> list[tuple[str, list[str]]]:
    """(category, lines) per section, the heading line first."""
    blocks: list[tuple[str, list[str]]] = []
    for line in summary.split("\n"):
        heading = HEADING.match(line.strip())
        if heading:
            blocks.append((category_of(heading.group(2)), [line]))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _section_for(blocks: list[tuple[str, list[str]]], kind: str) -> int | None:
    for category in _KINDS[kind][1]:
        at = next((i for i, (c, _) in enumerate(blocks) if c == category), None)
        if at is not None:
            return at
    return None


def _render(blocks: list[tuple[str, list[str]]], chosen: list[tuple[int, _Candidate]]) -> str:
    out: list[str] = []
    for at, (_, lines) in enumerate(blocks):
        added = [f"- {c.text}" for _, c in sorted((p for p in chosen if p[0] == at), key=lambda p: p[1].order)]
        body = [line for line in lines[1:] if line.strip()]
        if added and body == ["- (none)"]:
            body = []
        out.append("\n".join([lines[0], *body, *added]))
    return "\n\n".join(out)
