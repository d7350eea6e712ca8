"""The builtin reference model: deterministic, offline, no weights.

It reads a ModelRequest the way an LLM would and picks one of three modes:
- judge:   the system prompt asks to grade/score an answer 0 to 5  -> "score: N" + one-line reason
- summary: the last user message asks for a summary/to summarize    -> an extractive sectioned summary
- answer:  anything else                                           -> the best-matching lines of the context
"""

from __future__ import annotations

import json
import re
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
_UPDATE_CUES = re.compile(r"\b(update|updated|actually|after all|instead|changed?|no longer|switch(ed)? to|now)\b", re.I)
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
_JOINERS = re.compile(r"[./:-]")


@lru_cache(maxsize=65536)  # the same context lines are scored for every probe
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


def _context_units(request: ModelRequest) -> tuple[list[str], set[int]]:
    """The lines/sentences of the context, and which of them were said (system, user, assistant text)
    rather than printed by a tool: only said values can supersede each other."""
    units: list[str] = []
    said: set[int] = set()
    texts = [(request.system or "", True)]
    for message in request.messages[:-1]:
        texts.append((message.content, message.role != "tool"))
        texts += [(f"{c.name}({json.dumps(c.arguments, sort_keys=True)})", False) for c in message.tool_calls]
    for text, spoken in texts:
        start = len(units)
        units.extend(_units_of(text))
        if spoken:
            said.update(range(start, len(units)))
    return units, said


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


def answer(request: ModelRequest) -> tuple[str, str]:
    question = _last_user(request)
    if question is None:
        return "I don't know.", "stop"
    wanted = content_words(question.content)
    units, said = _context_units(request)
    if not wanted or not units:
        return "I don't know.", "stop"
    unit_words = [content_words(u) for u in units]
    # Rarer words carry more weight: a port number beats "server".
    frequency: dict[str, int] = {}
    for words in unit_words:
        for word in words & wanted:
            frequency[word] = frequency.get(word, 0) + 1
    recency = bool(_RECENCY_CUES.search(question.content))
    about_error = bool(_ERROR_QUESTION.search(question.content))
    stale = _superseded(units, said)
    scored: list[tuple[float, int]] = []
    for position, words in enumerate(unit_words):
        # sorted: float sums must not depend on set order (string hashing is randomised per process)
        overlap = sum(1.0 / frequency[w] ** 0.5 for w in sorted(words & wanted))
        if overlap <= 0:
            continue
        if position in stale:  # a value restated later is most likely out of date
            overlap *= 0.3 if recency else 0.6
        if recency:
            overlap *= 1.0 + 0.5 * position / len(units)
            if _UPDATE_CUES.search(units[position]):  # "update: ... after all" restates a value
                overlap *= 1.5
        if about_error and _TYPED_ERROR.search(units[position]):  # the error line itself, not talk about it
            overlap *= 2.0
        scored.append((overlap, position))
    if not scored:
        return "I don't know.", "stop"
    scored.sort(key=lambda pair: (-pair[0], -pair[1]))  # ties go to the later line
    best = [units[position] for _, position in scored[: 1 if recency else 3]]
    text = "\n".join(_clip(line) for line in best)
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
