"""What a probe question asks for (its intents) and the words it is about."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.models.builtin.shapes import answer_shape
from harness.models.builtin.text import STOPWORDS, content_words, stem


_Q_GOAL = re.compile(r"\b(goal|trying to (achieve|do)|being (built|added|investigated|fixed|implemented|changed|"
                     r"refactored|migrated)|session (is )?about|what (bug|feature|task)|working on|overall|"
                     r"(session|work) (start|started|begin|began)|(user|they) first|first ask\w*|"
                     r"(this|the) session (is )?(implement|doing|build|fix)\w*)\b", re.I)
_Q_NEXT = re.compile(r"\b(next|what now|what should (be|happen|we|i)|last (action|command|step))\b", re.I)
_Q_REMAINING = re.compile(r"\b(still (not|to|fail|open|missing|left|pending)\w*|remain\w*|left to|not (yet )?done|"
                          r"unimplemented|outstanding|todo)\b", re.I)
_Q_FIX = re.compile(r"\b(how (was|were|did|is) .*\b(fix|fixed|resolv|solv|handl|address|work(ed)? around)\w*|"
                    r"what fixed|fix for)\b", re.I)
_Q_DECISION = re.compile(r"\b(why|chose|chosen|choose|decid\w*|decision|picked|pick|opt(ed)?|approach|"
                         r"instead|rather|convention|implemented|handled)\b", re.I)
_Q_FILE = re.compile(r"\b(which|what) (new )?(\w+ ){0,3}(file|files|module|modules|script|path|paths|"
                     r"migration|package(?! managers?)|directory|folder|component)\b|\bin which (file|package|module)\b", re.I)
_Q_FILES_MANY = re.compile(r"\b(files|modules|paths)\b", re.I)
_Q_VALUE = re.compile(r"\b(number only|how many|how long|port|version|hostname|host|url|cluster|line range|"
                      r"(which|what)( [\w'-]+){0,4} (rate|limit|cap|size|timeout|keepalive|queue|count|id|line|"
                      r"offsets?|schedule|interval))\b", re.I)
_Q_CURRENT = re.compile(r"\b(should (we |i |the \w+ )?(be )?(use|used|using)|should \w+ use|must \w+ (use|listen))\b",
                        re.I)
_Q_NUMBER_ONLY = re.compile(r"\bnumber only\b", re.I)
_Q_CONSTRAINT = re.compile(r"\b(must|required?|allowed|forbid\w*|user (say|said|tell|told|want|ask)\w*|"
                           r"rules?|never|always|should not|must not|package manager|policy|convention)\b", re.I)
_Q_ERROR = re.compile(r"\b(errors?|exceptions?|raised?|rais\w+|fail\w*|crash\w*|complain\w*|assert\w*|report\w*|"
                      r"broke|traceback|warn\w*|hit)\b", re.I)
_Q_COMMAND = re.compile(r"\b(command|run|runs|ran|invocation|cli)\b", re.I)
# the question asks for the user's own words: what they asked, said, wanted, required or pointed out
_Q_USER = re.compile(r"\b(user|they|he|she)\s+(first\s+|then\s+|later\s+|just\s+)?(ask|asked|asks|say|said|says|"
                     r"want|wanted|wants|require|required|requires|request|requested|point(ed)? out|state|stated|"
                     r"told|tell|insist\w*|prefer\w*|reject\w*|question\w*|report\w*|share\w*|paste\w*)\b", re.I)
# the question asks what was under way when the history was cut: the answer is the last steps
_Q_IN_FLIGHT = re.compile(r"\b(at the (moment|time|point) of (the )?(\w+ )?compaction|when (the )?(context|history|"
                          r"conversation) (was|is|got) (compacted|cut|summari[sz]ed)|(when|before) (the )?(\w+ )?"
                          r"compaction|in progress|in flight|under way|underway|being (worked on|done|made|examined|"
                          r"edited|written|run|investigated)|was (the (assistant|agent) )?(doing|working on))\b", re.I)
_RECENCY_CUES = re.compile(r"\b(now|current|currently|latest|still|final|last|became of|become of|ended up|"
                           r"in the end|eventually|finally|what happened to)\b", re.I)


@dataclass(frozen=True)
class Ask:
    """The kinds of answer a question asks for; several can hold at once."""

    goal: bool
    next: bool
    remaining: bool
    fix: bool
    decision: bool
    file: bool
    files_many: bool
    value: bool
    number_only: bool
    constraint: bool
    error: bool
    command: bool
    recency: bool
    user: bool = False  # the answer is in the user's words
    in_flight: bool = False  # what was under way when the history ends: its last steps
    focus: frozenset[str] = frozenset()  # the words of the thing asked for: "which *Kubernetes namespace*"
    shape: re.Pattern[str] | None = None  # the token kind of the answer ("which commit": a hash), shapes.py
    text: str = ""  # the question itself


_FOCUS = re.compile(r"\b(?:which|what)\s+([\w./`'()-]+)(?:\s+([\w./`'()-]+))?", re.I)


# 'what comes after', 'what happened': a verb after 'what' asks about an event, not a kind of thing
_EVENT_VERBS = frozenset("""comes came happens happened happen changed changes remains remained failed fails broke
    breaks caused causes went goes needs needed made makes worked works went stopped started""".split())


def focus_of(question: str) -> frozenset[str]:
    """The words right after 'which' / 'what', up to the verb or preposition: the kind of thing the answer
    names ('Which branch is the work on?' asks for a branch)."""
    found = _FOCUS.search(question)
    if not found:
        return frozenset()
    words: set[str] = set()
    if found.group(1).lower() in _EVENT_VERBS:
        return frozenset()
    for token in found.groups():
        if not token or token.lower().strip("`'()") in STOPWORDS:
            break
        words |= content_words(token)
    return frozenset(words)


def ask_of(question: str) -> Ask:
    fix = bool(_Q_FIX.search(question))
    nxt = bool(_Q_NEXT.search(question))
    return Ask(
        goal=bool(_Q_GOAL.search(question)), next=nxt, remaining=bool(_Q_REMAINING.search(question)),
        fix=fix, decision=bool(_Q_DECISION.search(question)) and not fix,
        file=bool(_Q_FILE.search(question)), files_many=bool(_Q_FILES_MANY.search(question)),
        value=bool(_Q_VALUE.search(question)), number_only=bool(_Q_NUMBER_ONLY.search(question)),
        constraint=bool(_Q_CONSTRAINT.search(question)), error=bool(_Q_ERROR.search(question)) and not fix,
        command=bool(_Q_COMMAND.search(question)),
        recency=bool(_RECENCY_CUES.search(question) or _Q_CURRENT.search(question)) or nxt,
        focus=_focus_members(focus_of(question), question) if not _Q_GOAL.search(question) else frozenset(),
        shape=answer_shape(question), text=question, user=bool(_Q_USER.search(question)),
        in_flight=bool(_Q_IN_FLIGHT.search(question)),
    )


# General vocabulary a model brings to a question: a category named in the question stands for its members.
_CONCEPTS = (
    (re.compile(r"\bpackage managers?\b", re.I), ("npm", "pnpm", "yarn", "bun", "pip", "uv", "poetry", "cargo")),
    (re.compile(r"\btest runners?\b", re.I), ("pytest", "vitest", "jest", "mocha", "unittest")),
)


def _focus_members(focus: frozenset[str], question: str) -> frozenset[str]:
    """A category named as the focus ('which package manager') stands for its members."""
    for pattern, members in _CONCEPTS:
        found = pattern.search(question)
        if found and content_words(found.group(0)) <= focus:
            return frozenset(stem(m) for m in members)
    return focus


def question_words(text: str) -> frozenset[str]:
    words = set(content_words(text))
    for pattern, members in _CONCEPTS:
        if pattern.search(text):
            words.update(members)
    return frozenset(words)
