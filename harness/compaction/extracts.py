"""The cheap extracts among the reference controls: whole lines of the head, picked without any rewriting.

`line-picker` (what the user and the assistant said, every message's first line, then every second line, ...,
newest first within a round, printed in the order said), `last-lines` (the first user message, then the lines
said last) and `user-messages` (the first user message, every later one newest first, then the assistant's last
lines). No single message takes more than a quarter of an extract's budget, so one long request or reply cannot
fill it (a line longer than its message's share is cut at a word's end); what is picked is printed in the order
it was said, each message's lines a paragraph of their own. A summary that cannot beat these is no better than
keeping the talk.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.compaction.summarizer import SummaryInput
from harness.tokens import TokenCounter

MESSAGE_SHARE = 4  # a message takes at most 1/MESSAGE_SHARE of the budget


@dataclass(frozen=True)
class Line:
    position: int  # the message's place in the head (-1: the summary in effect)
    role: str  # user | assistant | summary
    number: int  # the line's place in its message
    text: str


def said_lines(request: SummaryInput, summary: bool = False) -> list[Line]:
    """The non-blank lines the user and the assistant wrote in the head (tool calls and output aside), in order;
    with `summary`, the summary in effect first."""
    messages = [(-1, "summary", request.previous_summary or "")] if summary else []
    messages += [(i, m.role, m.content) for i, m in enumerate(request.head) if m.role in ("user", "assistant")]
    return [Line(position, role, n, text.strip()) for position, role, content in messages
            for n, text in enumerate(line for line in content.splitlines() if line.strip())]


def pick(lines: list[Line], budget: int, tokens: TokenCounter) -> str:
    """The lines, in the priority given, while the budget lasts and no message goes over its share (a line longer
    than what is left is cut at a word's end), printed in the order said."""
    share, used, left, chosen = budget // MESSAGE_SHARE, {}, budget, []
    for line in lines:
        room = min(left, share - used.get(line.position, 0)) - 1  # and its line break
        text = line.text if tokens.count_text(line.text) <= room else _cut(line.text, room, tokens)
        if text:
            chosen.append(Line(line.position, line.role, line.number, text))
            cost = tokens.count_text(text) + 1
            used[line.position] = used.get(line.position, 0) + cost
            left -= cost
    while chosen and tokens.count_text(text := _printed(chosen)) > budget:  # a count across line breaks may differ
        chosen.pop()
    return _printed(chosen)


def _cut(text: str, room: int, tokens: TokenCounter) -> str:
    """The longest run of `text`'s leading words within `room` tokens."""
    words = text.split(" ")
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if tokens.count_text(" ".join(words[:middle])) <= room:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])


def _printed(lines: list[Line]) -> str:
    """In the order said, a blank line between two messages' lines: each message's excerpt is its own paragraph."""
    out, last = [], None
    for line in sorted(lines, key=lambda line: (line.position, line.number)):
        if last is not None and line.position != last:
            out.append("")
        out.append(line.text)
        last = line.position
    return "\n".join(out)


def line_picker(request: SummaryInput, budget: int, tokens: TokenCounter) -> str:
    """Every message's first line, then every second line, ...: the whole head said, newest first in a round."""
    lines = said_lines(request, summary=True)
    return pick(sorted(lines, key=lambda line: (line.number, -line.position)), budget, tokens)


def last_lines(request: SummaryInput, budget: int, tokens: TokenCounter) -> str:
    """The first user message, then the lines said last, from the end back."""
    lines = said_lines(request)
    first = next((line.position for line in lines if line.role == "user"), None)
    opening = [line for line in lines if line.position == first]
    latest = sorted((line for line in lines if line.position != first), key=lambda l: (-l.position, -l.number))
    return pick(opening + latest, budget, tokens)


def user_messages(request: SummaryInput, budget: int, tokens: TokenCounter) -> str:
    """The first user message, every later user message newest first, then the assistant's last lines."""
    lines = said_lines(request)
    users = sorted({line.position for line in lines if line.role == "user"})
    order = users[:1] + users[:0:-1]
    by_user = sorted((line for line in lines if line.role == "user"), key=lambda l: (order.index(l.position), l.number))
    assistant = sorted((line for line in lines if line.role == "assistant"), key=lambda l: (-l.position, -l.number))
    return pick(by_user + assistant, budget, tokens)
