# The builtin model as of the turn-2 commit 345709b (git show 345709b:harness/models/builtin.py), kept verbatim
# as the reference the summarizer benchmark runs interleaved with the current one (issue 32). Not imported by harness.
"""The builtin reference model: deterministic, offline, no weights.

It reads a ModelRequest the way an LLM would and picks one of three modes:
- judge:   the system prompt asks to grade/score an answer 0 to 5  -> "score: N" + one-line reason
- summary: the last user message asks for a summary/to summarize    -> an extractive sectioned summary
- answer:  anything else                                           -> the best-matching lines of the context
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse, Usage

DEFAULT_SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")
NONE_ITEM = "(none)"
MAX_ITEM_CHARS = 300
MAX_NEXT_STEPS = 5

_SUMMARY_ASK = re.compile(r"\b(summar(y|ies|ize|ise|izing|ising)|compact(ion)?)\b", re.I)
_JUDGE_ASK = re.compile(r"\b(grade|score|judge|rate)\b", re.I)
_ZERO_TO_FIVE = re.compile(r"\b0\s*(to|-|–|and)\s*5\b")
_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])|\n+")
_WORD = re.compile(r"[a-z0-9_]+(?:[./:-][a-z0-9_]+)*")
_PATH = re.compile(r"(?<![\w@])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z][\w]{0,7}\b|(?<![\w@])(?:[\w.-]+/)+[\w.-]+")
_ERROR_LINE = re.compile(r"\b(\w*(Error|Exception)\b:?|Traceback|FAILED|FATAL|fatal:|error:|ERROR\b|panic:)", re.I)
_KEYED_VALUE = re.compile(r"\b([a-z][a-z_-]{1,30})\s*(?:to|=|:|is|of|at|on)?\s*[`'\"]?(\d[\w.:/-]*|v\d[\w.-]*)", re.I)

# Which extracted category a heading stands for, by the words in it.
_CATEGORY_WORDS = (
    ("goal", ("goal", "task", "objective", "intent", "request", "purpose")),
    ("constraints", ("constraint", "preference", "rule", "requirement", "instruction")),
    ("decisions", ("decision", "choice", "rationale")),
    ("files", ("file", "artifact", "code", "change")),
    ("errors", ("error", "issue", "problem", "fail", "bug")),
    ("next", ("next", "todo", "remaining", "pending", "open")),
    ("progress", ("progress", "done", "status", "complete", "state", "work")),
)
_CONSTRAINT_CUES = re.compile(
    r"\b(use|using|don't|do not|dont|must|always|never|prefer|should|avoid|only|make sure|keep|"
    r"required?|no longer|instead|stick to|need to)\b", re.I)
_DECISION_CUES = re.compile(r"\b(decided|decide|decision|instead|chose|choose|going with|go with|rather than|"
                            r"switch(ed)? to|opted)\b", re.I)
_NEXT_CUES = re.compile(r"\b(next|i'll|i will|let's|let us|plan|todo|then i|remaining|still need|will now)\b", re.I)
_PROGRESS_CUES = re.compile(r"\b(done|fixed|implemented|added|passes|passing|completed|created|updated|"
                            r"finished|works|working now|resolved|merged)\b", re.I)
_UPDATE_CUES = re.compile(r"\b(update|updated|actually|after all|instead|changed?|no longer|switch(ed)? to|now|"
                          r"correction|change of plan|moved|renamed|bump(ed)?)\b", re.I)
_ERROR_QUESTION = re.compile(r"\b(error|errors|exception|raise[sd]?|fail(ed|s|ing|ure)?|broke|crash(ed)?)\b", re.I)
_TYPED_ERROR = re.compile(r"\b[\w.]*(Error|Exception)\b:")
_RECENCY_CUES = re.compile(r"\b(now|current|currently|latest|still|final|last)\b", re.I)
_SUPERSEDE_FILLER = {"actually", "now", "instead", "please", "let's", "lets", "ok", "okay", "so", "and", "the"}

_READ_TOOLS = ("read", "view", "cat", "open", "get", "show", "grep", "search", "find", "list", "ls")
_EDIT_TOOLS = ("edit", "replace", "patch", "update", "modify", "str_replace", "apply")
_CREATE_TOOLS = ("write", "create", "new", "save", "touch")
_DELETE_TOOLS = ("delete", "remove", "rm", "unlink")

STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto about as is are was were be been
    being do does did done have has had having it its this that these those there here what which who whom whose
    when where why how i you he she we they me him her us them my your our their mine yours can could would should
    will shall may might must not no yes so than too very just also only any all some each every such own same
    other more most much many few up down out over under again further once please answer question number name
    exact exactly give tell say reply respond word words only session user assistant one use used using tell
    currently now current latest still conversation summary earlier written compaction""".split()
)


# ---------------------------------------------------------------- shared text helpers


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_CAMEL = re.compile(r"([a-z])([A-Z])")
_JOINERS = re.compile(r"[./:_-]")


@lru_cache(maxsize=262144)  # the same context lines are scored for every probe
def content_words(text: str) -> frozenset[str]:
    """Lower-cased words with stopwords removed; identifiers and paths also contribute their parts."""
    words: set[str] = set()
    # CamelCase identifiers also count by their parts: ModuleNotFoundError answers "which error".
    text = _CAMEL.sub(r"\1 \2", text) + " " + text
    for token in _WORD.findall(text.lower()):
        parts = [token, *_JOINERS.split(token)] if _JOINERS.search(token) else [token]
        for part in parts:
            if part and part not in STOPWORDS:
                words.add(_stem(part))
    return frozenset(words)


def sentences(text: str) -> list[str]:
    return [s.strip(" -*•\t") for s in _SENTENCE_SPLIT.split(text) if s and s.strip(" -*•\t")]


def _clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def request_text(request: ModelRequest) -> str:
    """Everything the model reads, flattened: used for input token counts."""
    parts = [request.system or ""]
    for tool in request.tools:
        parts.append(json.dumps(tool, sort_keys=True))
    for message in request.messages:
        parts.append(message_text(message))
    return "\n".join(p for p in parts if p)


def request_tokens(request: ModelRequest) -> int:
    """o200k tokens of the request, counted per part (cached: a session's messages recur in every call)."""
    parts = [request.system or "", *(json.dumps(t, sort_keys=True) for t in request.tools),
             *(message_text(m) for m in request.messages)]
    return sum(_count_cached(part) for part in parts if part)


@lru_cache(maxsize=16384)
def _count_cached(text: str) -> int:
    return _tokens.count(text) + 1  # + the separator between parts


def message_text(message: ChatMessage) -> str:
    calls = " ".join(f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in message.tool_calls)
    return f"{message.role}: {message.content}" + (f" {calls}" if calls else "")


# ---------------------------------------------------------------- mode detection


def detect_mode(request: ModelRequest) -> str:
    system = request.system or ""
    if _JUDGE_ASK.search(system) and _ZERO_TO_FIVE.search(system):
        return "judge"
    last_user = _last_user(request)
    if last_user is not None and _SUMMARY_ASK.search(last_user.content):
        return "summary"
    return "answer"


def _last_user(request: ModelRequest) -> ChatMessage | None:
    for message in reversed(request.messages):
        if message.role == "user":
            return message
    return None


# ---------------------------------------------------------------- summary mode


@dataclass
class _Item:
    category: str
    text: str
    order: int
    key: str | None = None
    protected: bool = False


@dataclass
class _FileEntry:
    path: str
    actions: list[str] = field(default_factory=list)
    order: int = 0


def requested_sections(instruction: str) -> list[tuple[str, str]]:
    """(heading line prefix, heading title) pairs the instruction lists, in order; defaults if none."""
    found: list[tuple[str, str]] = []
    for line in instruction.splitlines():
        match = _HEADING.match(line.strip())
        if match and match.group(2).strip():
            found.append((match.group(1), match.group(2).strip()))
    return found or [("##", title) for title in DEFAULT_SECTIONS]


def category_of(title: str) -> str:
    lower = title.lower()
    for category, words in _CATEGORY_WORDS:
        if any(word in lower for word in words):
            return category
    return "other"


def _value_key(category: str, text: str) -> str | None:
    """A key under which a later statement supersedes an earlier one, e.g. 'port' in 'use port 9090'."""
    for match in _KEYED_VALUE.finditer(text):
        if match.group(1).lower() not in STOPWORDS:
            return f"{category}:{match.group(1).lower()}"
    words = [w for w in _WORD.findall(text.lower()) if w not in _SUPERSEDE_FILLER]
    return f"{category}:{' '.join(words)}" if words else None


class _SummaryBuilder:
    def __init__(self, sections: list[tuple[str, str]]):
        self.sections = sections
        self.items: list[_Item] = []
        self.files: dict[str, _FileEntry] = {}
        self.order = 0

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def add(self, category: str, text: str, *, keyed: bool = True, protected: bool = False) -> None:
        text = _clip(text)
        if not text or text == NONE_ITEM:
            return
        key = _value_key(category, text) if keyed else f"{category}:{text.lower()}"
        for old in self.items:
            if old.category == category and (old.key == key or old.text.lower() == text.lower()):
                self.items.remove(old)  # later facts win for the same key
                protected = protected or old.protected
                break
        self.items.append(_Item(category, text, self.next_order(), key, protected))

    def touch_file(self, path: str, action: str) -> None:
        path = path.strip("`'\",;:()")
        if not path or len(path) > 200:
            return
        entry = self.files.setdefault(path, _FileEntry(path))
        if action and action not in entry.actions:
            entry.actions.append(action)
        entry.order = self.next_order()

    # -- reading the request

    def read_previous(self, text: str) -> None:
        current: str | None = None
        for line in text.splitlines():
            heading = _HEADING.match(line.strip())
            if heading:
                current = category_of(heading.group(2))
                continue
            item = line.strip().lstrip("-*• ").strip()
            if current is None or not item or item == NONE_ITEM:
                continue
            if current == "files":
                path, _, actions = item.partition(" (")
                for action in actions.rstrip(")").split(", ") if actions else [""]:
                    self.touch_file(path, action)
            else:
                self.add(current, item, protected=current == "goal" and not any(i.category == "goal" for i in self.items))

    def read_messages(self, messages: tuple[ChatMessage, ...]) -> None:
        pending_calls: dict[str, tuple[str, dict]] = {}
        for message in messages:
            if message.role == "user":
                self._read_user(message.content)
            elif message.role == "assistant":
                self._read_assistant(message, pending_calls)
            else:
                self._read_tool_result(message, pending_calls)

    def _read_user(self, content: str) -> None:
        parts = sentences(content)
        if not parts:
            return
        first_goal = not any(i.category == "goal" for i in self.items)
        # The first request is the goal; later messages add to it unless they only set a rule.
        if first_goal or not _CONSTRAINT_CUES.search(parts[0]):
            self.add("goal", parts[0], keyed=False, protected=first_goal)
        for sentence in parts:
            if _CONSTRAINT_CUES.search(sentence):
                self.add("constraints", sentence)
        for path in _PATH.findall(content):
            self.touch_file(path, "mentioned by user")

    def _read_assistant(self, message: ChatMessage, pending: dict[str, tuple[str, dict]]) -> None:
        for sentence in sentences(message.content):
            if _DECISION_CUES.search(sentence):
                self.add("decisions", sentence, keyed=False)
            elif _NEXT_CUES.search(sentence):
                self.add("next", sentence, keyed=False)
            elif _PROGRESS_CUES.search(sentence):
                self.add("progress", sentence, keyed=False)
        for call in message.tool_calls:
            pending[call.id] = (call.name, call.arguments)
            action = _tool_action(call.name)
            for path in _paths_in_arguments(call.arguments):
                self.touch_file(path, action)
            if action in ("edited", "created", "deleted"):
                paths = ", ".join(_paths_in_arguments(call.arguments)) or call.name
                self.add("progress", f"{action} {paths}", keyed=False)

    def _read_tool_result(self, message: ChatMessage, pending: dict[str, tuple[str, dict]]) -> None:
        name, arguments = pending.pop(message.tool_call_id or "", ("tool", {}))
        error_line = _error_line(message.content)
        if message.is_error or error_line:
            line = error_line or _clip(message.content.strip().splitlines()[0] if message.content.strip() else "error")
            command = _command_of(arguments)
            where = f" ({name}: {command})" if command else f" ({name})"
            self.add("errors", f"{line}{where}", keyed=False)

    # -- writing the summary

    def render(self, max_tokens: int) -> tuple[str, bool]:
        """The summary within max_tokens, dropping the oldest items first; (text, cut) where cut means
        even the bare headings did not fit."""
        self._cap_next_steps()
        # Cheap first pass: per-line counts (cached) bring the estimate under budget; the exact loop follows.
        while self._estimate() > max_tokens and self._drop_oldest():
            pass
        while True:
            text = self._render_all()
            if _tokens.count(text) <= max_tokens:
                return text, False
            if not self._drop_oldest():
                tokens = _tokens.encode(text)[:max_tokens]
                return _tokens.decode(tokens), True

    def _estimate(self) -> int:
        return sum(_count_cached(line) for line in self._render_all().splitlines() if line)

    def _cap_next_steps(self) -> None:
        steps = [i for i in self.items if i.category == "next"]
        for old in steps[:-MAX_NEXT_STEPS]:
            self.items.remove(old)

    def _drop_oldest(self) -> bool:
        candidates: list[tuple[int, object]] = [(i.order, i) for i in self.items if not i.protected]
        candidates += [(f.order, f) for f in self.files.values()]
        if not candidates:
            protected = [i for i in self.items if i.protected]
            if not protected:
                return False
            candidates = [(i.order, i) for i in protected]
        _, victim = min(candidates, key=lambda pair: pair[0])
        if isinstance(victim, _FileEntry):
            del self.files[victim.path]
        else:
            self.items.remove(victim)
        return True

    def _render_all(self) -> str:
        blocks: list[str] = []
        for prefix, title in self.sections:
            category = category_of(title)
            if category == "files":
                lines = [f"- {f.path} ({', '.join(a for a in f.actions if a)})" if any(f.actions) else f"- {f.path}"
                         for f in sorted(self.files.values(), key=lambda f: f.order)]
            else:
                lines = [f"- {i.text}" for i in sorted(self.items, key=lambda i: i.order) if i.category == category]
            blocks.append("\n".join([f"{prefix} {title}", *(lines or [f"- {NONE_ITEM}"])]))
        return "\n\n".join(blocks)


def _tool_action(name: str) -> str:
    lower = name.lower()
    for words, action in ((_CREATE_TOOLS, "created"), (_EDIT_TOOLS, "edited"), (_DELETE_TOOLS, "deleted"),
                          (_READ_TOOLS, "read")):
        if any(w in lower for w in words):
            return action
    return f"used by {name}"


def _paths_in_arguments(arguments: dict) -> list[str]:
    found: list[str] = []
    for key, value in sorted(arguments.items()):
        if not isinstance(value, str):
            continue
        if key.lower() in ("path", "file", "file_path", "filepath", "filename", "target", "dest", "source"):
            candidates = [value]
        else:
            candidates = _PATH.findall(value)
        for candidate in candidates:
            candidate = candidate.strip()
            if candidate and candidate not in found and not candidate.startswith(("http:", "https:")):
                found.append(candidate)
    return found


def _command_of(arguments: dict) -> str:
    for key in ("cmd", "command", "script"):
        if isinstance(arguments.get(key), str):
            return _clip(arguments[key], 80)
    return ""


def _error_line(output: str) -> str:
    """The most telling error line: the last 'XyzError: ...' line, else the first line that looks like one."""
    lower = output.lower()
    if not any(word in lower for word in ("error", "exception", "traceback", "fail", "fatal", "panic")):
        return ""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    typed = [line for line in lines if ("Error" in line or "Exception" in line)
             and re.match(r"^[\w.]*(Error|Exception)\b", line)]
    if typed:
        return _clip(typed[-1])
    flagged = [line for line in lines if _ERROR_LINE.search(line)]
    return _clip(flagged[0]) if flagged else ""


def _previous_summary(messages: tuple[ChatMessage, ...], sections: list[tuple[str, str]]) -> int | None:
    """Index of a message that is an earlier summary: it carries at least two of the requested headings."""
    wanted = {title.lower() for _, title in sections}
    for index, message in enumerate(messages):
        titles = {m.group(2).strip().lower() for line in message.content.splitlines()
                  if (m := _HEADING.match(line.strip()))}
        if len(titles & wanted) >= 2:
            return index
    return None


def summarize(request: ModelRequest) -> tuple[str, str]:
    """(summary text, finish reason) for a summary request."""
    instruction = _last_user(request)
    sections = requested_sections(instruction.content if instruction else "")
    history = request.messages
    if instruction is not None:
        cut = max(i for i, m in enumerate(history) if m is instruction)
        history = history[:cut]
    builder = _SummaryBuilder(sections)
    previous = _previous_summary(history, sections)
    if previous is not None:
        builder.read_previous(history[previous].content)
        history = history[:previous] + history[previous + 1:]
    builder.read_messages(history)
    text, cut_short = builder.render(request.max_output_tokens)
    return text, "length" if cut_short else "stop"


# ---------------------------------------------------------------- answer mode
#
# A retrieval answerer: the context is cut into units (lines, sentences, tool-call arguments), each unit is
# scored against the question by the IDF of the question words it shares, then weighted by what the question
# asks for (a file, a value, an error, a fix, a decision, the goal, the next step) and by recency; the best few
# units are the answer. The per-context work (units, words, document frequencies) is cached on the context,
# since one context is asked many questions.

MAX_ANSWER_UNITS = 3
MAX_ANSWER_CHARS = 600
MAX_UNIT_CHARS = 240
MAX_ANSWER_PATHS = 4

_Q_GOAL = re.compile(r"\b(goal|trying to (achieve|do)|being (built|added|investigated|fixed|implemented|changed|"
                     r"refactored|migrated)|session (is )?about|what (bug|feature|task)|working on|overall)\b", re.I)
_Q_NEXT = re.compile(r"\b(next|what now|what should (be|happen|we|i)|last (action|command|step))\b", re.I)
_Q_REMAINING = re.compile(r"\b(still (not|to|fail|open|missing|left|pending)\w*|remain\w*|left to|not (yet )?done|"
                          r"unimplemented|outstanding|todo)\b", re.I)
_Q_FIX = re.compile(r"\b(how (was|were|did|is) .*\b(fix|fixed|resolv|solv|handl|address|work(ed)? around)\w*|"
                    r"what fixed|fix for)\b", re.I)
_Q_DECISION = re.compile(r"\b(why|chose|chosen|choose|decid\w*|decision|picked|pick|opt(ed)?|approach|"
                         r"instead|rather|convention|implemented|handled)\b", re.I)
_Q_FILE = re.compile(r"\b(which|what) (new )?(\w+ ){0,3}(file|files|module|modules|script|path|paths|"
                     r"migration|package|directory|folder|component)\b|\bin which (file|package|module)\b", re.I)
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

_FIX_CUES = re.compile(r"\b(fix(ed)?|fixes|resolved|solved|instead|now|switch(ed)?|changed?|use[sd]?|apply|"
                       r"applied|moved|wrap(ped)?|replac\w+|added|handl\w+)\b", re.I)
_NEXT_UNIT_CUES = re.compile(r"\b(next|then|i'll|i will|let's|plan|todo|remaining|still|not done|not yet|"
                             r"left|after that|should|need to|will)\b", re.I)
_REMAINING_UNIT_CUES = re.compile(r"\b(not done|not yet|remaining|still|left|todo|open|pending|failing|fail(ed|s)?|"
                                  r"not started|follow-up)\b", re.I)
_STATUS_CUES = re.compile(r"^(remaining|still open|not done|not yet done|todo|next step|next|follow-up|open)\b|"
                          r"\b(remaining|still open|not started|not done yet)\b", re.I)
_ASSERT_LINE = re.compile(r"\b(want|wanted|expected|got|assert\w*|should (be|equal|have))\b", re.I)
_INTENT_WORDS = frozenset(_stem(w) for w in ("fix", "fixed", "resolve", "resolved", "solve", "solved", "handled",
                                             "handle", "next", "report", "reported", "error", "raise", "raised"))
_PAST_CLAUSE = re.compile(r"\b(from|was|were|old|previous(ly)?|no longer|drained|deprecated|collides?|goes away|"
                          r"instead of|rather than|used to|earlier|before)\b", re.I)
_CLAUSE_SPLIT = re.compile(r"\s*(?:[;—]|,\s+|\s+\(|\)\s*|:\s+(?=[a-z])|\s(?=because\b|since\b|as\b))\s*")
_VALUE = re.compile(r"(?<![\w.])v?\d[\w.:%/-]*")
_HAS_DIGIT = re.compile(r"\d")
_CODE_LINE = re.compile(r"^\s*(\d+[:\s-]|[0-9a-f]{7,40}\s|[│├└]|[{}()\[\];]+$)")
_GENERIC_Q = frozenset(_stem(w) for w in (
    "file", "files", "what", "which", "why", "how", "happen", "step", "thing", "agent", "done", "new", "kind",
    "part", "two", "three", "first", "did", "get", "got", "made", "make", "need", "needs", "way"))


@dataclass
class _Context:
    units: list[str]
    roles: list[str]  # system / user / assistant / tool / call
    messages: list[int]
    said: list[bool]
    words: list[frozenset[str]]
    lengths: list[int]
    postings: dict[str, list[int]]
    stale: set[int]
    first_user: int  # message index of the first user message
    avg_length: float
    code: list[bool]
    parent: list[int]  # for a tool result's units: the message that made the call; else the unit's own message
    by_message: dict[int, list[int]]
    errorish: list[bool]


def _call_units(call) -> tuple[list[str], list[str]]:
    """A tool call as a short header ('bash: pytest -q') and the lines of its long arguments."""
    short: list[str] = []
    long_lines: list[str] = []
    for key, value in sorted(call.arguments.items()):
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        if len(text) <= 200 and "\n" not in text:
            short.append(f"{key}={text}")
        else:
            long_lines.append(text)
    header = f"{call.name}: " + ", ".join(short) if short else call.name
    return [header], long_lines


def _message_key(message: ChatMessage) -> tuple:
    calls = tuple((c.id, c.name, json.dumps(c.arguments, sort_keys=True)) for c in message.tool_calls)
    return (message.role, message.content, message.tool_call_id, calls)


_CONTEXTS: dict[tuple, _Context] = {}
_CONTEXTS_LOCK = threading.Lock()


def _context(request: ModelRequest) -> _Context:
    """The analysed context, cached on its content: each context is asked many questions."""
    key = (request.system or "", tuple(_message_key(m) for m in request.messages[:-1]))
    with _CONTEXTS_LOCK:
        found = _CONTEXTS.get(key)
    if found is None:
        found = _build_context(request)
        with _CONTEXTS_LOCK:
            while len(_CONTEXTS) >= 8:
                _CONTEXTS.pop(next(iter(_CONTEXTS)))
            _CONTEXTS[key] = found
    return found


def _build_context(request: ModelRequest) -> _Context:
    units: list[str] = []
    roles: list[str] = []
    messages: list[int] = []
    texts: list[tuple[str, str, int]] = [(request.system or "", "system", -1)]
    first_user = -1
    caller: dict[str, int] = {}
    parents: dict[int, int] = {}
    for index, message in enumerate(request.messages[:-1]):
        if message.role == "user" and first_user < 0:
            first_user = index
        for call in message.tool_calls:
            caller[call.id] = index
        if message.role == "tool":
            parents[index] = caller.get(message.tool_call_id or "", index - 1)
        texts.append((message.content, message.role, index))
        for call in message.tool_calls:
            headers, long_lines = _call_units(call)
            texts += [(h, "call", index) for h in headers]
            texts += [(t, "tool", index) for t in long_lines]
    for text, role, index in texts:
        found = _units_of(text) if role != "call" else (text,)
        units.extend(found)
        roles.extend([role] * len(found))
        messages.extend([index] * len(found))
    words = [content_words(u) for u in units]
    postings: dict[str, list[int]] = {}
    for position, ws in enumerate(words):
        for w in ws:
            postings.setdefault(w, []).append(position)
    said = [r in ("system", "user", "assistant") for r in roles]
    lengths = [len(ws) for ws in words]
    stale = _superseded(units, {i for i, s in enumerate(said) if s and roles[i] != "system"})
    flags = [_tool_flags(u) if not s else (False, False) for s, u in zip(said, units)]
    code = [f[1] for f in flags]
    parent = [parents.get(m, m) if r == "tool" else m for r, m in zip(roles, messages)]
    by_message: dict[int, list[int]] = {}
    for position, message in enumerate(messages):
        by_message.setdefault(message, []).append(position)
    errorish = [f[0] if not s else _said_error(u) for f, s, u in zip(flags, said, units)]
    return _Context(units, roles, messages, said, words, lengths, postings, stale, first_user,
                    (sum(lengths) / len(lengths)) if lengths else 1.0, code, parent, by_message, errorish)


_ERROR_HINTS = ("rror", "xception", "fail", "fatal", "panic", "want", "expect", "got", "assert", "should",
                "traceback", "enoent", "refused", "denied", "timeout", "timed out")


@lru_cache(maxsize=262144)
def _tool_flags(unit: str) -> tuple[bool, bool]:
    """(looks like an error or a failed assertion, looks like a code/listing line) for a printed unit."""
    lower = unit.lower()
    errorish = any(h in lower for h in _ERROR_HINTS) and bool(
        _TYPED_ERROR.search(unit) or _ERROR_LINE.search(unit) or _ASSERT_LINE.search(unit))
    return errorish, bool(_CODE_LINE.match(unit))


@lru_cache(maxsize=65536)
def _said_error(unit: str) -> bool:
    return bool(_TYPED_ERROR.search(unit) or _ERROR_LINE.search(unit))


@lru_cache(maxsize=16384)
def _units_of(text: str) -> tuple[str, ...]:
    units: list[str] = []
    for line in text.splitlines():
        line = line.strip(" -*•\t")
        if not line or _HEADING.match(line):
            continue
        units.extend(sentences(line))
    return tuple(units)


@lru_cache(maxsize=65536)
def _keyed_values(unit: str) -> tuple[tuple[str, str], ...]:
    return tuple((m.group(1).lower(), m.group(2).lower()) for m in _KEYED_VALUE.finditer(unit)
                 if m.group(1).lower() not in STOPWORDS)


def _superseded(units: list[str], said: set[int]) -> set[int]:
    """Units whose keyed value (e.g. 'port 8080') is restated with another value later on."""
    latest: dict[str, tuple[int, str]] = {}
    stale: set[int] = set()
    for position in sorted(said):
        for key, value in _keyed_values(units[position]):
            earlier = latest.get(key)
            if earlier is not None and earlier[0] < position and earlier[1] != value:
                stale.add(earlier[0])
            latest[key] = (position, value)
    return stale


@dataclass
class _Ask:
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


def _ask(question: str) -> _Ask:
    fix = bool(_Q_FIX.search(question))
    nxt = bool(_Q_NEXT.search(question))
    return _Ask(
        goal=bool(_Q_GOAL.search(question)), next=nxt, remaining=bool(_Q_REMAINING.search(question)),
        fix=fix, decision=bool(_Q_DECISION.search(question)) and not fix,
        file=bool(_Q_FILE.search(question)), files_many=bool(_Q_FILES_MANY.search(question)),
        value=bool(_Q_VALUE.search(question)), number_only=bool(_Q_NUMBER_ONLY.search(question)),
        constraint=bool(_Q_CONSTRAINT.search(question)), error=bool(_Q_ERROR.search(question)) and not fix,
        command=bool(_Q_COMMAND.search(question)),
        recency=bool(_RECENCY_CUES.search(question) or _Q_CURRENT.search(question)) or nxt,
    )


def _score_units(ctx: _Context, wanted: frozenset[str], ask: _Ask) -> list[tuple[float, int]]:
    total = len(ctx.units)
    idf = {w: math.log(1.0 + total / len(ctx.postings[w])) for w in sorted(wanted)
           if w in ctx.postings}
    for w in _GENERIC_Q:
        if w in idf:
            idf[w] *= 0.3
    for w in _INTENT_WORDS:  # "how was it fixed": the word 'fixed' is the kind of answer, not its topic
        if w in idf and (ask.fix or ask.next or ask.error):
            idf[w] *= 0.3
    scores: dict[int, float] = {}
    for w, weight in sorted(idf.items()):
        for position in ctx.postings[w]:
            scores[position] = scores.get(position, 0.0) + weight
    # A goal question and a next-step question are about the session as a whole: every user/assistant unit
    # is a candidate even with no word in common.
    if ask.goal:
        for rank, position in enumerate(ctx.by_message.get(ctx.first_user, ())):
            scores[position] = scores.get(position, 0.0) + (1.5 if rank == 0 else 0.7)
    if ask.next or ask.remaining:
        for position in range(max(0, total - 3000), total):
            if ctx.said[position] and ctx.roles[position] != "system" and _NEXT_UNIT_CUES.search(ctx.units[position]):
                scores.setdefault(position, 0.5)
    # A sentence is read with its message: "Use 1200 per batch instead." answers a question about the backfill
    # when the sentence before it is about the backfill.
    own = dict(scores)
    for position, score in own.items():
        if not ctx.said[position] or ctx.roles[position] == "system":
            continue
        siblings = ctx.by_message.get(ctx.messages[position], ())
        if len(siblings) > 12:
            continue
        for sibling in siblings:
            if sibling != position and ctx.said[sibling]:
                scores[sibling] = scores.get(sibling, 0.0) + 0.35 * score
    if ask.fix or ask.decision:
        # What the agent says right after an error is its diagnosis and fix.
        best_error: dict[int, float] = {}
        for position, score in own.items():
            if ctx.roles[position] == "tool" and ctx.errorish[position]:
                best_error[ctx.messages[position]] = max(best_error.get(ctx.messages[position], 0.0), score)
        for message, lent in sorted(best_error.items(), key=lambda kv: (-kv[1], -kv[0]))[:20]:
            for follow in (message + 1, message + 3):
                for position in ctx.by_message.get(follow, ()):
                    if ctx.roles[position] == "assistant":
                        scores[position] = scores.get(position, 0.0) + 0.5 * lent
    # What the agent said about a step lends its score to the step's tool call and output: "Running the CLI
    # tests." makes the error printed by that run, and the path the next edit touched, answers.
    best_said: dict[int, float] = {}
    for position, score in scores.items():
        if ctx.roles[position] in ("assistant", "call"):
            message = ctx.messages[position]
            best_said[message] = max(best_said.get(message, 0.0), score)
    top_messages = sorted(best_said.items(), key=lambda kv: (-kv[1], -kv[0]))[:40]
    for message, lent in top_messages:
        for position in ctx.by_message.get(message, ()):
            if ctx.roles[position] == "call":
                scores[position] = scores.get(position, 0.0) + 0.6 * lent
        for result in (message + 1, message + 2):
            positions = ctx.by_message.get(result, ())
            short = len(positions) <= 30
            for position in positions:
                if ctx.roles[position] != "tool" or ctx.parent[position] != message:
                    continue
                if ask.error and ctx.errorish[position]:
                    share = 0.7
                elif not short:
                    continue
                elif ask.value and _HAS_DIGIT.search(ctx.units[position]):
                    share = 0.4
                else:
                    share = 0.25
                scores[position] = scores.get(position, 0.0) + share * lent
    scored: list[tuple[float, int]] = []
    for position, score in scores.items():
        unit = ctx.units[position]
        role = ctx.roles[position]
        norm = 1.0 - 0.4 + 0.4 * ctx.lengths[position] / ctx.avg_length
        score /= max(norm, 0.5) ** 0.5
        if ctx.said[position]:
            score *= 0.6 if role == "system" else 1.3
        if ctx.code[position]:
            score *= 0.5
        if position in ctx.stale:  # a value restated later is out of date
            score *= 0.15 if ask.recency else 0.3
        if ask.recency or ask.value:  # a later stated value replaces an earlier one
            score *= 1.0 + (1.2 if ctx.said[position] else 0.3) * position / total
        if (ask.recency or ask.value) and ctx.said[position] and _UPDATE_CUES.search(unit):
            score *= 1.4
        if ask.goal:
            if role == "user":
                score *= 4.0 if ctx.messages[position] == ctx.first_user else 1.2
            else:
                score *= 0.7 if role == "assistant" else 0.3
        if ask.constraint and not ask.goal:
            score *= 2.0 if role == "user" else (1.0 if role == "system" else 0.7)
        if ask.error:
            if not ctx.said[position] and (_TYPED_ERROR.search(unit) or _ERROR_LINE.search(unit)):
                score *= 2.5
            elif _TYPED_ERROR.search(unit):
                score *= 1.6
        if ask.fix:
            if ctx.said[position] and role == "assistant" and _FIX_CUES.search(unit):
                score *= 2.0
            elif role in ("tool", "call") and _ERROR_LINE.search(unit):
                score *= 0.5
        if ask.decision and role == "assistant" and (_DECISION_CUES.search(unit) or "because" in unit.lower()):
            score *= 2.0
        if ask.file:
            score *= 1.8 if _PATH.search(unit) else 0.6
            if role == "call" and _tool_action(unit.split(":", 1)[0]) in ("edited", "created"):
                score *= 1.5
        if ask.value and not ask.file:
            score *= 1.5 if _HAS_DIGIT.search(unit) else 0.7
        if ask.command and role == "call":
            score *= 1.5
        if ask.next or ask.remaining:
            cues = _REMAINING_UNIT_CUES if ask.remaining else _NEXT_UNIT_CUES
            if ctx.said[position] and role != "system":
                cue = 3.0 if _STATUS_CUES.search(unit) else (1.6 if cues.search(unit) else 1.0)
                score *= cue * (1.0 + 2.0 * position / total) * (1.3 if role == "assistant" else 1.0)
            else:
                score *= 0.3
        scored.append((score, position))
    scored.sort(key=lambda pair: (-pair[0], -pair[1]))  # ties go to the later unit
    return scored


def _clip_around(unit: str, wanted: frozenset[str], limit: int = MAX_UNIT_CHARS) -> str:
    """The unit, or for a long one the window around its first question word."""
    unit = " ".join(unit.split())
    if len(unit) <= limit:
        return unit
    lower = unit.lower()
    hits = [lower.find(w) for w in sorted(wanted) if len(w) > 2 and lower.find(w) >= 0]
    start = max(0, min(hits) - limit // 3) if hits else 0
    piece = unit[start:start + limit]
    return ("…" if start else "") + piece + ("…" if start + limit < len(unit) else "")


def _current_clauses(unit: str) -> str:
    """For a question about a current value: drop the clauses of the unit that state the old one."""
    pieces: list[str] = []
    last = 0
    for match in _CLAUSE_SPLIT.finditer(unit):
        pieces.append(unit[last:match.start()])
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(unit[last:])
    clauses = pieces[0::2]
    if sum(1 for c in clauses if c.strip()) < 2:
        return unit
    keep = [bool(c.strip()) and not _PAST_CLAUSE.search(c) for c in clauses]
    if not any(keep) or all(keep or not c.strip() for keep, c in zip(keep, clauses)):
        return unit
    out: list[str] = []
    for index, clause in enumerate(clauses):
        if keep[index]:
            if out and index > 0:
                out.append(pieces[2 * index - 1])
            out.append(clause)
    text = "".join(out).strip(" ,;:—(")
    return text if text and (_VALUE.search(text) or not _VALUE.search(unit)) else unit


def _value_of(unit: str, wanted: frozenset[str]) -> str | None:
    """The value a 'number only' question asks for: the number nearest after a question word."""
    values = [(m.start(), m.group(0).rstrip(".,;:")) for m in _VALUE.finditer(unit)]
    if not values:
        return None
    lower = unit.lower()
    anchors = [m.end() for w in sorted(wanted) for m in re.finditer(re.escape(w), lower)]
    if not anchors:
        return values[-1][1]
    return min(values, key=lambda v: min((v[0] - a) if v[0] >= a else 3 * (a - v[0]) for a in anchors))[1]


# General vocabulary a model brings to a question: a category named in the question stands for its members.
_CONCEPTS = (
    (re.compile(r"\bpackage managers?\b", re.I), ("npm", "pnpm", "yarn", "bun", "pip", "uv", "poetry", "cargo")),
    (re.compile(r"\btest runners?\b", re.I), ("pytest", "vitest", "jest", "mocha", "unittest")),
)


def _question_words(text: str) -> frozenset[str]:
    words = set(content_words(text))
    for pattern, members in _CONCEPTS:
        if pattern.search(text):
            words.update(members)
    return frozenset(words)


def answer(request: ModelRequest) -> tuple[str, str]:
    question = _last_user(request)
    if question is None:
        return "I don't know.", "stop"
    text_q = question.content.rsplit("Question:", 1)[-1]
    wanted = _question_words(text_q)
    ctx = _context(request)
    if not ctx.units:
        return "I don't know.", "stop"
    ask = _ask(text_q)
    scored = _score_units(ctx, wanted, ask)
    if not scored:
        return "I don't know.", "stop"
    limit = 1 if (ask.recency and ask.value) or ask.number_only else MAX_ANSWER_UNITS
    current = ask.recency and ask.value
    if ask.value and any(position in ctx.stale for _, position in scored[:MAX_ANSWER_UNITS]):
        limit, current = 1, True  # an earlier value for the same thing is in the running: give only the best
    chosen: list[int] = []
    seen: set[str] = set()
    for _, position in scored:
        key = " ".join(ctx.units[position].lower().split())
        if key in seen:
            continue
        seen.add(key)
        chosen.append(position)
        if len(chosen) >= limit:
            break
    lines: list[str] = []
    if ask.number_only:
        unit = ctx.units[chosen[0]]
        value = _value_of(_current_clauses(unit), wanted) or _value_of(unit, wanted)
        if value:
            lines.append(value)
    if not lines:
        for position in chosen:
            unit = ctx.units[position]
            if current:
                unit = _current_clauses(unit)
            lines.append(_clip_around(unit, wanted))
    if ask.file:
        paths: list[str] = []
        for _, position in scored[:8]:
            for path in _PATH.findall(ctx.units[position]):
                path = path.strip("`'\",;:()")
                if "/" in path and path not in paths and not path.startswith(("http", "//")):
                    paths.append(path)
        paths = paths[: MAX_ANSWER_PATHS if ask.files_many else 2]
        if paths:
            lines.insert(0, "Files: " + ", ".join(paths))
    text = "\n".join(lines)
    if len(text) > MAX_ANSWER_CHARS:
        text = text[: MAX_ANSWER_CHARS - 1].rstrip() + "…"
    tokens = _tokens.encode(text)
    if len(tokens) > request.max_output_tokens:
        return _tokens.decode(tokens[: request.max_output_tokens]), "length"
    return text, "stop"


# ---------------------------------------------------------------- judge mode

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
    user = _last_user(request)
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
        reason += "; missing: " + _clip("; ".join(missing), 160)
    return f"score: {score}\nreason: {reason}", "stop"


# ---------------------------------------------------------------- the client


def respond(request: ModelRequest) -> tuple[str, str]:
    """(reply text, finish reason) for any request."""
    mode = detect_mode(request)
    if mode == "judge":
        return judge(request)
    if mode == "summary":
        return summarize(request)
    return answer(request)


class BuiltinClient(ModelClient):
    spec = "builtin"
    name = "builtin"

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        text, finish = respond(request)
        usage = Usage(input_tokens=request_tokens(request), output_tokens=_tokens.count(text))
        return ModelResponse(
            text=text, usage=usage, latency_s=time.perf_counter() - started, model="builtin",
            finish_reason=finish, latency_source="live", raw={"mode": detect_mode(request)},
        )
