"""Reference control summarizers: summaries of known quality that prove the instrument discriminates.

Each wraps the summarizer under test and answers at the size of the summary it wrote (true tokens), so a
control differs from it in content only: `empty` (the header alone), `keyword-bag` (the head's distinctive
tokens, no sentences) and the same bag laid out `keyword-bag-lined` (10 tokens a line) and `keyword-bag-dotted`
(". " after every token), `stripped-head` (the head's words in the order said, function words dropped, each
once), `head-first` / `head-last` (the first / last tokens of the head as a transcript), and
the strongest cheap tricks: `value-dump` (every path, number, id and command of the head with a 3-word label)
and the line extracts of harness.compaction.extracts, `line-picker`, `last-lines` and `user-messages`. A grade
that gives any of them most of a real summary's credit measures token presence or layout, not retention.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

from harness.compaction.extracts import last_lines, line_picker, user_messages
from harness.compaction.summarizer import Summarizer, SummaryInput, SummaryResult
from harness.session import Message, message_text
from harness.tokens import TokenCounter, counter

CONTROLS = ("empty", "keyword-bag", "keyword-bag-lined", "keyword-bag-dotted", "stripped-head", "head-first",
            "head-last", "line-picker", "value-dump", "last-lines", "user-messages")
_TOKEN = re.compile(r"[A-Za-z0-9_][\w./:@#-]*[\w]|[A-Za-z0-9]")
# Words that carry no task state in any session; a bag of them would be a weaker adversary than we want.
_COMMON = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just let me more most my no nor not now of off on once only or
other our out over own same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you
your yours ok okay yes please thanks thank sure let's i'll we'll it's that's don't can't
""".split())


def _documents(request: SummaryInput) -> list[tuple[bool, str]]:
    """(said, text) per message of the head, the summary in effect first: `said` for what the user and the
    assistant wrote (tool-call arguments included), where task state is stated, as against tool output."""
    docs = [(True, request.previous_summary)] if request.previous_summary else []
    return docs + [(m.role in ("user", "assistant"), _message_text(m)) for m in request.head]


def _head_text(request: SummaryInput) -> list[str]:
    lines = [request.previous_summary] if request.previous_summary else []
    return lines + [f"[{m.role}] {_message_text(m)}" for m in request.head]


def _message_text(message: Message) -> str:
    calls = " ".join(f"{c.name} {c.arguments}" for c in message.tool_calls)
    return f"{message_text(message)} {calls}".strip()


def _words(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text) if t.lower() not in _COMMON and (len(t) > 2 or t.isdigit())]


def ranked_words(docs: list[tuple[bool, str]]) -> list[str]:
    """The head's distinctive tokens (TF-IDF over its messages), what was said before tool output. Ties (most
    words are said once) go in an order fixed by the word alone (its CRC-32), not the order they were said in:
    in that order the bag's tail would be the head's sentences less their function words (`stripped-head`),
    which binds a value to the word said beside it, and a bag is meant to hold tokens without statements."""
    tf, df, said = Counter(), Counter(), set()
    for is_said, text in docs:
        words = _words(text)
        tf.update(words)
        df.update(set(words))
        if is_said:
            said.update(words)
    n = len(docs)
    return sorted(tf, key=lambda w: (w not in said, -tf[w] * math.log(1 + n / df[w]), zlib.crc32(w.encode())))


def stripped_head(docs: list[tuple[bool, str]], budget: int, tokens: TokenCounter) -> str:
    """The head's words as said, what the user and the assistant wrote first, then tool output, with the
    function words dropped and each word once: a terse transcript, which keeps a value beside the word said
    with it (what a keyword bag ordered by first mention would be)."""
    said = [w for is_said, text in docs if is_said for w in _words(text)]
    output = [w for is_said, text in docs if not is_said for w in _words(text)]
    return _fill(list(dict.fromkeys(said + output)), " ", budget, tokens)


def keyword_bag(docs: list[tuple[bool, str]], budget: int, tokens: TokenCounter, layout: str = "run") -> str:
    """The ranked tokens, no sentences: as strong a bag as token statistics make, so beating it means more than
    holding the right tokens. `layout`: one run of words, `lined` (10 a line) or `dotted` (". " after each)."""
    words = ranked_words(docs)
    if layout == "lined":
        lines = [" ".join(words[i:i + BAG_LINE]) for i in range(0, len(words), BAG_LINE)]
        return _fill(lines, "\n", budget, tokens)
    if layout == "dotted":
        return _fill([w + "." for w in words], " ", budget, tokens)
    return _fill(words, " ", budget, tokens)


BAG_LINE = 10


def _fill(pieces: list[str], sep: str, budget: int, tokens: TokenCounter) -> str:
    """As many leading pieces as fit the budget, counted as the joined text (a binary search: a handful of
    counts even for a long head)."""
    low, high = 0, len(pieces)
    while low < high:
        middle = (low + high + 1) // 2
        if tokens.count_text(sep.join(pieces[:middle])) <= budget:
            low = middle
        else:
            high = middle - 1
    return sep.join(pieces[:low])


def head_first(text: str, budget: int, tokens: TokenCounter) -> str:
    return _fill(text.split(" "), " ", budget, tokens)


def head_last(text: str, budget: int, tokens: TokenCounter) -> str:
    return " ".join(reversed(_fill(list(reversed(text.split(" "))), " ", budget, tokens).split(" ")))


_MAKERS: dict[str, Callable[[SummaryInput, int, TokenCounter], str]] = {
    "empty": lambda request, budget, tokens: "",
    "keyword-bag": lambda request, budget, tokens: keyword_bag(_documents(request), budget, tokens),
    "keyword-bag-lined": lambda request, budget, tokens: keyword_bag(_documents(request), budget, tokens, "lined"),
    "keyword-bag-dotted": lambda request, budget, tokens: keyword_bag(_documents(request), budget, tokens, "dotted"),
    "stripped-head": lambda request, budget, tokens: stripped_head(_documents(request), budget, tokens),
    "line-picker": lambda request, budget, tokens: line_picker(request, budget, tokens),
    "value-dump": lambda request, budget, tokens: value_dump(_documents(request), budget, tokens),
    "last-lines": lambda request, budget, tokens: last_lines(request, budget, tokens),
    "user-messages": lambda request, budget, tokens: user_messages(request, budget, tokens),
    "head-first": lambda request, budget, tokens: head_first("\n".join(_head_text(request)), budget, tokens),
    "head-last": lambda request, budget, tokens: head_last("\n".join(_head_text(request)), budget, tokens),
}


def _lines(docs: list[tuple[bool, str]]) -> list[str]:
    """The head's distinct non-blank lines, what the user and the assistant said first, then tool output, each
    in session order."""
    said = [line.strip() for is_said, text in docs if is_said for line in text.splitlines()]
    output = [line.strip() for is_said, text in docs if not is_said for line in text.splitlines()]
    return list(dict.fromkeys(line for line in said + output if line))


# A value: a path, a dotted name (file, host, version, module), a hex or ticket id, a camelCase or snake_case
# name, a number, or a command in backticks.
_VALUE = re.compile(r"(?:[\w.~-]*/[\w./~-]+|\b[\w-]+(?:\.[\w-]+)+\b|\b[0-9a-f]{7,40}\b|\b[A-Z][A-Z0-9]+-\d+\b|"
                    r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b|\b[A-Za-z]+(?:_[A-Za-z0-9]+)+\b|\b\d[\d,:]*\b|`[^`\n]{2,80}`)")
_LABEL = re.compile(r"[A-Za-z][\w-]*")


def value_dump(docs: list[tuple[bool, str]], budget: int, tokens: TokenCounter) -> str:
    """Every path, number, id and command of the head (what was said first), each once, labelled with the three
    words before it: the exact values a summary would hold, bound to the words that stood beside them."""
    entries: dict[str, str] = {}
    for line in _lines(docs):
        for found in _VALUE.finditer(line):
            value = found.group().strip("`.,:")
            if value and value not in entries:
                label = " ".join(_LABEL.findall(line[:found.start()])[-3:])
                entries[value] = f"{label}: {value}" if label else value
    return _fill(list(entries.values()), "\n", budget, tokens)


@dataclass
class ControlSummarizer:
    """`kind` at the size of what `under_test` writes for the same request (its usage is what is billed)."""

    kind: str
    under_test: Summarizer
    tokens: TokenCounter = None  # type: ignore[assignment]  # the counter of summary_tokens (true counts)

    def __post_init__(self):
        if self.kind not in _MAKERS:
            raise ValueError(f"unknown control {self.kind!r}: choose one of {', '.join(CONTROLS)}")
        self.tokens = self.tokens or counter("o200k")

    @property
    def name(self) -> str:
        return f"control:{self.kind}"

    def summarize(self, request: SummaryInput) -> SummaryResult:
        real = self.under_test.summarize(request)
        size = self.tokens.count_text(real.text)
        return replace(real, text=_MAKERS[self.kind](request, size, self.tokens), model=self.name,
                       extra={**real.extra, "control": self.kind, "size_of": real.model, "size_tokens": size})
