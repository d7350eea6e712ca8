"""Later facts win where no key says so (issue 31): an earlier summary's next steps once newer messages follow
it, a decision or diagnosis a later sentence calls wrong, and the user's words that come with a declined call.

Values with a key (facts.py, keys.py) already give way to the newer value; these are the items keyed by their
words, where the summary has to see the later sentence to know the earlier one is history. `LaterFacts` is the
summary builder's part that applies them (summary.py holds the rest of the builder)."""

from __future__ import annotations

import re
from typing import Any

from harness.models.builtin.noise import user_words
from harness.models.builtin.rules import enabled
from harness.models.builtin.text import clip

_TASK_STATUS = re.compile(r"^(In progress|Pending): ")

# A sentence that says an earlier conclusion was wrong: a misdiagnosis, not the cause, a fix that did not fix.
REFUTES = re.compile(
    r"\b(misdiagnos\w*|(was|were|is|are) (wrong|incorrect|mistaken)|not the (real |actual |root )?(cause|issue|"
    r"problem|fix|culprit)|(wasn't|isn't|was not|is not) (actually |really )?(the )?(real |root )?(cause|issue|"
    r"problem|culprit|the fix|right|correct)|red herring|false alarm|(doesn't|didn't|does not|did not) "
    r"(actually |really )?(fix|solve|help)|turns? out (that )?(it|this|that|the) (was|is)n't|that's not right|"
    r"i was (wrong|mistaken)|my (earlier|previous) (analysis|diagnosis|conclusion|assumption))", re.I)
_WORD = re.compile(r"[A-Za-z_][\w.]{4,}")
_COMMON = frozenset("about after again because before being could doesn't should their there these those which "
                    "while would actually really still think where other first value every using which".split())
MIN_SHARED = 3  # distinctive words a refuting sentence shares with the item it refutes
SUPERSEDED = "Superseded later: "


def history_step(text: str) -> str | None:
    """An earlier summary's next step, read after newer messages: a task it listed as open stays, as what was
    open then; a planned step or the step in flight then is dropped (the newer messages say what came of it,
    and its line would take budget from what they say)."""
    status = _TASK_STATUS.match(text)
    if status:
        return f"Open at the previous summary ({status.group(1).lower()}): {text[status.end():]}"
    return None


def _words(text: str) -> set[str]:
    return {w.lower().rstrip(".") for w in _WORD.findall(text)} - _COMMON


def refuted_by(sentence: str, texts: list[str]) -> list[int]:
    """The index of the text (an earlier decision or finding) the sentence calls wrong, as a list of at most
    one: the sentence says so, and of the texts it shares at least MIN_SHARED distinctive words with, it shares
    the most with this one (the latest among equals). One sentence refutes one conclusion, not a topic."""
    if not REFUTES.search(sentence):
        return []
    said = _words(sentence)
    shared = [(len(said & _words(text)), i) for i, text in enumerate(texts) if text != sentence]
    best = max(shared, default=(0, -1))
    return [best[1]] if best[0] >= MIN_SHARED else []


_USER_SAID = re.compile(r"the user said:\s*(.+)\Z", re.I | re.S)


def reason_in_rejection(content: str) -> str:
    """The words a user typed while declining a call (Claude Code: '... To tell you how to proceed, the user
    said:\\n<words>'), or ''."""
    found = _USER_SAID.search(content)
    return " ".join(found.group(1).split()) if found else ""


MAX_DECLINED_STEP, MAX_REASON = 100, 240  # the call named, the user's words whole: they are the constraint


def declined(step: str, reason: str) -> str:
    if not reason:
        return f"The user declined: {step}"
    return f"The user declined: {clip(step, MAX_DECLINED_STEP)}; the user said: \"{clip(reason, MAX_REASON)}\""


class LaterFacts:
    """The builder's reading of declined calls, refuting sentences and an earlier summary's next steps (mixed
    into summary._SummaryBuilder, whose `items` store and `add` it uses)."""

    items: Any
    declined: Any = None  # a declined call with no words from the user yet: the next user turn says why

    def previous_next_as_history(self, followed: bool) -> None:
        """Called right after an earlier summary is read, when newer messages follow it: its next steps (the
        only ones read so far) are what was planned then."""
        if not (followed and enabled("previous-next-as-history")):
            return
        for item in self.items.in_category("next"):
            self.items.remove(item)
            self.add("progress", history_step(item.text) or "", keyed=False)

    def _read_declined(self, step: str, content: str) -> None:
        """A declined call, with the user's words typed while declining it: one constraint line (the words are
        an answer to the call, not a new request: no goal of their own)."""
        keep_reason = enabled("declined-with-reason")
        reason = user_words(reason_in_rejection(content)) if keep_reason else ""
        item = self.add("constraints" if reason else "progress", declined(step, reason), keyed=False)
        self.declined = item if keep_reason and not reason else None

    def _give_reason(self, words: str) -> None:
        """The user's next turn after a bare decline is why: the declined call moves to the constraints (called
        once the turn is read, so the turn's own constraint sentences give way to the one line)."""
        item, self.declined = self.declined, None
        if item is not None and self.items.get(item.order) is item:
            self.items.remove(item)
            self._drop_restated(words)
            self.add("constraints", declined(item.text.removeprefix("The user declined: "), words), keyed=False)

    def _drop_restated(self, reason: str) -> None:
        """A constraint the user's reason for a decline already says, in the declined call's line."""
        said = " ".join(reason.split()).lower()
        for item in self.items.in_category("constraints"):
            if said and item.text.lower() in said and not item.text.startswith("The user declined"):
                self.items.remove(item)

    def _refute(self, prose: list[str]) -> list[str]:
        """An earlier decision or finding a sentence calls wrong is stated as superseded (its place kept); the
        sentence that says so is the decision now. Returns the prose, read on."""
        if not enabled("refuted-as-history"):
            return prose
        for sentence in prose:
            earlier = sorted((i for category in ("decisions", "progress") for i in self.items.in_category(category)
                              if not i.history), key=lambda i: i.order)
            for at in refuted_by(sentence, [i.text for i in earlier]):
                self.items.replace(earlier[at]._replace(history=SUPERSEDED))
                self.add("decisions", sentence, keyed=False)
        return prose
