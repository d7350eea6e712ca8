"""Reference control summarizers: summaries of known quality that prove the instrument discriminates.

Each wraps the summarizer under test and answers at the size of the summary it wrote (true tokens), so a
control differs from it in content only: `empty` (the header alone), `keyword-bag` (the head's distinctive
tokens, no sentences), `head-first` / `head-last` (the first / last tokens of the head as a transcript).
A grade that gives a keyword bag most of a real summary's credit measures token presence, not retention.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

from harness.compaction.summarizer import Summarizer, SummaryInput, SummaryResult
from harness.session import Message, message_text
from harness.tokens import TokenCounter, counter

CONTROLS = ("empty", "keyword-bag", "head-first", "head-last")
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


def keyword_bag(docs: list[tuple[bool, str]], budget: int, tokens: TokenCounter) -> str:
    """The head's distinctive tokens (TF-IDF over its messages), what was said before tool output, no sentences:
    as strong a bag as token statistics make, so beating it means more than holding the right tokens."""
    tf, df, said, first = Counter(), Counter(), set(), {}
    for position, (is_said, text) in enumerate(docs):
        words = _words(text)
        tf.update(words)
        df.update(set(words))
        if is_said:
            said.update(words)
        for word in words:
            first.setdefault(word, position)
    n = len(docs)
    ranked = sorted(tf, key=lambda w: (w not in said, -tf[w] * math.log(1 + n / df[w]), first[w]))
    return _fill(ranked, " ", budget, tokens)


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
    "head-first": lambda request, budget, tokens: head_first("\n".join(_head_text(request)), budget, tokens),
    "head-last": lambda request, budget, tokens: head_last("\n".join(_head_text(request)), budget, tokens),
}


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
