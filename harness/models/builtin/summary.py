"""The summarizer: an extractive summary in the sections the instruction asks for, later facts winning.

It reads an earlier summary in the history (if any), then the messages after it: the first request is the
goal, rule-like sentences are constraints, the agent's sentences are decisions, progress or next steps,
tool calls name files, failed tool results are errors. The oldest items are dropped to fit the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest
from harness.models.builtin.text import (DECISION_CUES, ERROR_LINE, HEADING, KEYED_VALUE, PATH, STOPWORDS, WORD, clip,
                                         count_cached, last_user, sentences, tool_action)


DEFAULT_SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")
NONE_ITEM = "(none)"
MAX_NEXT_STEPS = 5

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
_NEXT_CUES = re.compile(r"\b(next|i'll|i will|let's|let us|plan|todo|then i|remaining|still need|will now)\b", re.I)
_PROGRESS_CUES = re.compile(r"\b(done|fixed|implemented|added|passes|passing|completed|created|updated|"
                            r"finished|works|working now|resolved|merged)\b", re.I)
_SUPERSEDE_FILLER = {"actually", "now", "instead", "please", "let's", "lets", "ok", "okay", "so", "and", "the"}


@dataclass(frozen=True)
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


def _value_key(category: str, text: str) -> str | None:
    """A key under which a later statement supersedes an earlier one, e.g. 'port' in 'use port 9090'."""
    for match in KEYED_VALUE.finditer(text):
        if match.group(1).lower() not in STOPWORDS:
            return f"{category}:{match.group(1).lower()}"
    words = [w for w in WORD.findall(text.lower()) if w not in _SUPERSEDE_FILLER]
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
        text = clip(text)
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
            heading = HEADING.match(line.strip())
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
        for path in PATH.findall(content):
            self.touch_file(path, "mentioned by user")

    def _read_assistant(self, message: ChatMessage, pending: dict[str, tuple[str, dict]]) -> None:
        for sentence in sentences(message.content):
            if DECISION_CUES.search(sentence):
                self.add("decisions", sentence, keyed=False)
            elif _NEXT_CUES.search(sentence):
                self.add("next", sentence, keyed=False)
            elif _PROGRESS_CUES.search(sentence):
                self.add("progress", sentence, keyed=False)
        for call in message.tool_calls:
            pending[call.id] = (call.name, call.arguments)
            action = tool_action(call.name)
            for path in _paths_in_arguments(call.arguments):
                self.touch_file(path, action)
            if action in ("edited", "created", "deleted"):
                paths = ", ".join(_paths_in_arguments(call.arguments)) or call.name
                self.add("progress", f"{action} {paths}", keyed=False)

    def _read_tool_result(self, message: ChatMessage, pending: dict[str, tuple[str, dict]]) -> None:
        name, arguments = pending.pop(message.tool_call_id or "", ("tool", {}))
        error_line = _error_line(message.content)
        if message.is_error or error_line:
            line = error_line or clip(message.content.strip().splitlines()[0] if message.content.strip() else "error")
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
        return sum(count_cached(line) for line in self._render_all().splitlines() if line)

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


def _paths_in_arguments(arguments: dict) -> list[str]:
    found: list[str] = []
    for key, value in sorted(arguments.items()):
        if not isinstance(value, str):
            continue
        if key.lower() in ("path", "file", "file_path", "filepath", "filename", "target", "dest", "source"):
            candidates = [value]
        else:
            candidates = PATH.findall(value)
        for candidate in candidates:
            candidate = candidate.strip()
            if candidate and candidate not in found and not candidate.startswith(("http:", "https:")):
                found.append(candidate)
    return found


def _command_of(arguments: dict) -> str:
    for key in ("cmd", "command", "script"):
        if isinstance(arguments.get(key), str):
            return clip(arguments[key], 80)
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
        return clip(typed[-1])
    flagged = [line for line in lines if ERROR_LINE.search(line)]
    return clip(flagged[0]) if flagged else ""


def _previous_summary(messages: tuple[ChatMessage, ...], sections: list[tuple[str, str]]) -> int | None:
    """Index of a message that is an earlier summary: it carries at least two of the requested headings."""
    wanted = {title.lower() for _, title in sections}
    for index, message in enumerate(messages):
        titles = {m.group(2).strip().lower() for line in message.content.splitlines()
                  if (m := HEADING.match(line.strip()))}
        if len(titles & wanted) >= 2:
            return index
    return None


def summarize(request: ModelRequest) -> tuple[str, str]:
    """(summary text, finish reason) for a summary request."""
    instruction = last_user(request)
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
