"""The summarizer: an extractive summary in the sections the instruction asks for, later facts winning.

It reads an earlier summary in the history (if any), then the messages after it: the user's own words (not the
harness noise around them, noise.py) give the goal and the constraints, the agent's sentences give decisions,
progress and next steps, its task list (tasks.py) what is done and what is open, tool calls name files
(files.py), failed tool results (read as outputs.py reads them) are errors, and the lines that state exact
values (facts.py) go to an exact-values section. Each section that can grow without end (values, files,
errors) has a share of the budget; past it, and past the budget as a whole, the oldest items go first."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest
from harness.models.builtin.cues import ANNOUNCES_STEP, CONSTRAINT_CUES, NEXT_CUES, NOT_PROSE, PROGRESS_CUES, is_rule
from harness.models.builtin.facts import fact_lines
from harness.models.builtin.fill import fill
from harness.models.builtin.edits import declared_names
from harness.models.builtin.files import (FileEntry, common_root, paths_in_text, paths_of_call, read_file_line,
                                          read_root_line, root_line, same_file)
from harness.models.builtin.items import Item, Items
from harness.models.builtin.keys import fact_key, value_key
from harness.models.builtin.later import LaterFacts
from harness.models.builtin.outputs import untagged
from harness.models.builtin.noise import strip_noise, user_words
from harness.models.builtin.rules import enabled
from harness.models.builtin.reports import is_protocol_error, is_rejection, is_subagent, report_text
from harness.models.builtin.sections import category_of, previous_summary, summary_format
from harness.models.builtin.steps import (MIN_RUNS, command_key, command_of, error_line, first_line,
                                          recurring_command, step_of)
from harness.models.builtin.tasks import TaskList, is_task_tool
from harness.models.builtin.turns import document_title, is_pasted_document, is_shell_command
from harness.models.builtin.text import (DECISION_CUES, HEADING, clip, count_cached, sentences, tool_action)
from harness.models.builtin.transcript import split_request

FACTS_TITLE = "Exact values"
NONE_ITEM = "(none)"
MAX_NEXT_STEPS = 5
MIN_GOAL_WORDS = 4  # "yes", "1+2", "ok do that" answer the agent; they set no goal
# Shares of the budget for the sections that grow with the session rather than with the task.
SHARES = {"facts": 0.25, "files": 0.15, "errors": 0.12}
MAX_REPORT_DECISIONS = 3  # a subagent's report is long; its decisions beyond a few are detail
MAX_GOAL_SENTENCES = 2
MAX_LAST_WORDS = 400
_RANKS = {"user": 2, "assistant": 1, "tool": 0}


class _SummaryBuilder(LaterFacts):
    def __init__(self, sections: list[tuple[str, str]]):
        self.sections = sections
        if not any(category_of(title) == "facts" for _, title in sections):
            at = next((i for i, (_, t) in enumerate(sections) if category_of(t) == "next"), len(sections))
            self.sections = [*sections[:at], (sections[0][0] if sections else "##", FACTS_TITLE), *sections[at:]]
        self.items = Items()
        self.files: dict[str, FileEntry] = {}
        self.tasks = TaskList()
        self.runs: dict[str, int] = {}  # shell commands by what they are (command_key): how often run
        self.open_error: Item | None = None  # the last error, until the agent says what it makes of it
        self.in_flight: str | None = None
        self.last_words = ""  # the agent's last prose
        self.order = 0

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def add(self, category: str, text: str, *, keyed: bool = True, protected: bool = False, rank: int = 1,
            key: str | None = None) -> Item | None:
        text = clip(text)
        if not text or text == NONE_ITEM:
            return None
        if key is None:
            key = value_key(category, text) if keyed else f"{category}:{text.lower()}"
        old = self.items.superseded(category, key, text, lower=(lower := text.lower()))
        if old is not None:
            self.items.remove(old)  # later facts win for the same key
            protected = protected or old.protected
            rank = max(rank, old.rank)
        item = Item(category, text, self.next_order(), key, protected, rank)
        self.items.append(item, lower=lower)
        return item

    def touch_file(self, path: str, action: str, names: list[str] | tuple[str, ...] = ()) -> None:
        path = path.strip("`'\",;:()")
        if not path or len(path) > 200:
            return
        same = next((known for known in self.files if same_file(known, path)), None)
        if same is not None and not same.startswith("/") and path.startswith("/"):
            self.files[path] = self.files.pop(same)  # the absolute path says more; it takes the entry
            self.files[path].path = path
            same = path
        entry = self.files.setdefault(same or path, FileEntry(path))
        if action and action not in entry.actions:
            entry.actions.append(action)
        entry.names = [n for n in entry.names if n not in names] + list(names)
        entry.order = self.next_order()

    def add_facts(self, text: str, who: str, *, listing_ok: bool = False) -> None:
        for line, values in fact_lines(text, listing_ok=listing_ok):
            self.add("facts", line, rank=_RANKS[who], key=fact_key(line, values))

    # -- reading the request

    def read_previous(self, text: str) -> None:
        current: str | None = None
        root = ""
        for line in strip_noise(text).splitlines():
            heading = HEADING.match(line.strip())
            if heading:
                current = category_of(heading.group(2))
                continue
            item = line.strip().lstrip("-*• ").strip()
            if current is None or not item or item == NONE_ITEM:
                continue
            if current == "files":
                if (found := read_root_line(item)) is not None:
                    root = found
                    continue
                path, actions, names = read_file_line(item, root)
                for action in actions:
                    self.touch_file(path, action, names)
            elif current == "facts":
                self.add_facts(item, "user", listing_ok=True)  # values an earlier summary kept stay kept
            else:
                self.add(current, item, protected=current == "goal" and not self.items.has("goal"))

    def read_messages(self, messages: tuple[ChatMessage, ...]) -> None:
        pending_calls: dict[str, tuple[str, dict]] = {}
        for message in messages:
            if message.role == "user":
                self._read_user(message.content)
            elif message.role == "assistant":
                self._read_assistant(message, pending_calls)
            else:
                self._read_tool_result(replace(message, content=untagged(message.content)), pending_calls)

    def _read_user(self, content: str) -> None:
        words = user_words(content)
        if words:
            self.open_error = None  # what the agent says after the user spoke answers the user, not the error
        if is_shell_command(words):
            return
        if is_pasted_document(words) and self.items.has("goal"):
            self._read_document(words)
            return
        parts = sentences(words)
        if not parts:
            return
        first_goal = not self.items.has("goal")
        # The first request is the goal; later requests add to it unless they only set a rule or reply.
        # A sentence that sets a rule is a constraint: it goes there, where a later rule supersedes it.
        asks = [p for p in parts if not CONSTRAINT_CUES.search(p)][:MAX_GOAL_SENTENCES]
        if first_goal or (asks and asks[0] == parts[0] and len(parts[0].split()) >= MIN_GOAL_WORDS):
            self.add("goal", " ".join(asks) or parts[0], keyed=False, protected=first_goal)
        for sentence in parts:
            if is_rule(sentence):
                self.add("constraints", sentence)
        self._give_reason(words)
        for path in paths_in_text(words):
            self.touch_file(path, "mentioned by user")
        self.add_facts("\n".join(parts), "user", listing_ok=True)

    def _read_document(self, words: str) -> None:
        """A pasted document: its title says what the user handed over; its values are material (ranked as a
        tool's), its rules are the document's, not constraints the user set."""
        self.add("progress", f"User pasted a document: {document_title(words)}", keyed=False)
        self.add_facts(words, "tool")

    def _read_assistant(self, message: ChatMessage, pending: dict[str, tuple[str, dict]]) -> None:
        prose = self._refute([s for s in sentences(message.content) if len(s.split()) >= 4 and not NOT_PROSE.search(s)])
        if prose and self.open_error is not None:
            self._attach_fix(prose[0])
        if message.content.strip():
            self.last_words = clip(message.content, MAX_LAST_WORDS)
        # a reply opens with what it found; one with no step after it, always (rule `lead-sentence`)
        if prose and (not message.tool_calls or enabled("lead-sentence") and not ANNOUNCES_STEP.search(prose[0])):
            self.add("progress", prose[0], keyed=False)
        for sentence in prose:
            if DECISION_CUES.search(sentence):
                self.add("decisions", sentence, keyed=False)
            elif NEXT_CUES.search(sentence):
                self.add("next", sentence, keyed=False)
            elif PROGRESS_CUES.search(sentence):
                self.add("progress", sentence, keyed=False)
        self.add_facts(message.content, "assistant")
        for call in message.tool_calls:
            pending[call.id] = (call.name, call.arguments)
            if is_task_tool(call.name, call.arguments):
                self.tasks.read_call(call.id, call.name, call.arguments)
                continue
            action = tool_action(call.name)
            paths = paths_of_call(call.arguments)
            names = declared_names(call.arguments) if action in ("edited", "created") else []
            for path in paths:
                self.touch_file(path, action, names if len(paths) == 1 else [])
            self.in_flight = step_of(call.name, call.arguments)
            self._count_command(call.arguments)

    def _count_command(self, arguments: dict) -> None:
        """A command the agent runs again and again (its build, its tests) is an exact value of the session:
        kept in its latest form, which replaces the earlier one (a new simulator, a new flag)."""
        command = arguments.get("command") or arguments.get("cmd")
        key = command_key(command) if isinstance(command, str) else None
        if key is None:
            return
        self.runs[key] = self.runs.get(key, 0) + 1
        if self.runs[key] >= MIN_RUNS:
            self.add("facts", f"Command run {self.runs[key]} times, latest: {recurring_command(command)}",
                     rank=1, key=f"facts:command:{key}")

    def _read_tool_result(self, message: ChatMessage, pending: dict[str, tuple[str, dict]]) -> None:
        name, arguments = pending.pop(message.tool_call_id or "", ("tool", {}))
        self.tasks.read_result(message.tool_call_id or "", message.content)
        if is_task_tool(name, arguments):
            return
        command = command_of(arguments)
        if is_rejection(message.content):
            return self._read_declined(step_of(name, arguments), message.content)
        if is_protocol_error(message.content):
            return
        if is_subagent(name, arguments) and not message.is_error:
            self._read_report(report_text(message.content), str(arguments.get("description") or name))
            return
        reads = tool_action(name) == "read"
        # A file's text that mentions an error is the file, not a failure: reads only fail when marked so.
        failed = "" if reads and not message.is_error else error_line(message.content)
        if message.is_error or failed:
            line = failed or first_line(message.content) or "error"
            where = f" ({name}: {command})" if command else f" ({name})"
            self.open_error = self.add("errors", f"{line}{where}", keyed=False)
        if not reads:
            self.add_facts(strip_noise(message.content), "tool")

    def _read_report(self, report: str, task: str) -> None:
        """A subagent's findings: its conclusion (the report's last sentence of prose) and the sentences that
        state a decision or a next step, as the agent's own; its values as a tool's."""
        prose = [s for s in sentences(report) if len(s.split()) >= 4 and not NOT_PROSE.search(s)]
        if prose:
            self.add("progress", f"Subagent report ({clip(task, 60)}): {prose[-1]}", keyed=False)
        cued = [s for s in prose[:-1] if DECISION_CUES.search(s)][-MAX_REPORT_DECISIONS:]
        for sentence in cued:
            self.add("decisions", sentence, keyed=False)
        self.add_facts(report, "tool")

    def _attach_fix(self, sentence: str) -> None:
        """What the agent said next after an error is how it read it or fixed it: kept beside the error."""
        error, self.open_error = self.open_error, None
        if error is None or self.items.get(error.order) is not error:
            return
        self.items.replace(error._replace(fix=sentence))

    def finish(self) -> None:
        """The task list and the step in flight, as items newer than anything read."""
        for text in self.tasks.done():
            self.add("progress", f"Done: {text}", keyed=False)
        for text, status in self.tasks.open():
            self.add("next", f"{'In progress' if 'progress' in status else 'Pending'}: {text}", keyed=False)
        if self.last_words and not any(self.last_words in i.text for i in self.items):  # the step, in its words
            self.add("next", f"The agent's last words before this summary: {self.last_words}", keyed=False)
        if self.in_flight:
            self.add("next", f"Last step started before this summary: {self.in_flight}", keyed=False)

    # -- writing the summary

    def render(self, max_tokens: int) -> tuple[str, bool]:
        """The summary within max_tokens, dropping the oldest items first; (text, cut) where cut means
        even the bare headings did not fit."""
        self._cap_next_steps()
        self._drop_restated_facts()
        for category, share in SHARES.items():
            self._trim(category, int(max_tokens * share))
        victims = self._oldest_first()
        self._shrink_by_estimate(max_tokens, victims)
        while True:
            text = self._render_all()
            if _tokens.count(text) <= max_tokens:
                return text, False
            victim = next(victims, None)
            if victim is None:
                return _tokens.decode(_tokens.encode(text)[:max_tokens]), True
            self._drop(victim)

    def _oldest_first(self) -> Iterator[Item | FileEntry]:
        """What goes first when the whole is over budget: the oldest item or file, the protected items last.
        From here on entries are only dropped, so the order is taken once."""
        users = ("goal", "constraints") if enabled("user-words-last") else ()  # the user's words go last
        words = [i for i in self.items if not i.protected and i.category in users]
        entries = [*(i for i in self.items if not i.protected and i.category not in users), *self.files.values()]
        protected = [i for i in self.items if i.protected]  # the store keeps them oldest first
        return iter([*sorted(entries, key=lambda entry: entry.order), *words, *protected])

    def _shrink_by_estimate(self, max_tokens: int, victims: Iterator[Item | FileEntry]) -> None:
        """Cheap first pass: per-line counts (cached) of the rendered summary bring it under budget; the exact
        loop follows. Kept per section, so a drop costs its own line (the files section is recounted: its
        common root may move)."""
        sections = [(f"{prefix} {title}", category_of(title)) for prefix, title in self.sections]
        tokens = {category: self._estimate_lines(category) for _, category in sections}
        headings, none = sum(_estimate(heading) for heading, _ in sections), _estimate(f"- {NONE_ITEM}")
        while headings + sum(tokens[category] or none for _, category in sections) > max_tokens:
            victim = next(victims, None)
            if victim is None:
                return
            self._drop(victim)
            if isinstance(victim, FileEntry):
                if "files" in tokens:
                    tokens["files"] = self._estimate_lines("files")
            elif victim.category in tokens:
                tokens[victim.category] -= _estimate(f"- {victim.line}")

    def _estimate_lines(self, category: str) -> int:
        return sum(_estimate(line) for line in self._lines(category))

    def _cap_next_steps(self) -> None:
        tasks = {f"{p}: {t}" for t, _ in self.tasks.open() for p in ("In progress", "Pending")}
        steps = [i for i in self.items if i.category == "next" and i.text not in tasks]
        for old in steps[:-MAX_NEXT_STEPS]:
            self.items.remove(old)

    def _drop_restated_facts(self) -> None:
        """A value the other sections already state needs no line of its own."""
        said = "\n".join(i.text for i in self.items if i.category != "facts").lower()
        said += "\n" + "\n".join(self.files).lower()
        for item in [i for i in self.items if i.category == "facts"]:
            values = [v.lower() for _, vs in fact_lines(item.text, listing_ok=True) for v in vs]
            if values and all(v in said for v in values):
                self.items.remove(item)

    def _trim(self, category: str, limit: int) -> None:
        """Bring one section under its share: the least telling entries first (tool-stated values before the
        user's, files only read before files written), the oldest first among equals."""
        if category == "files":
            for victim in sorted(self.files.values(), key=lambda f: (f.written, f.order)):
                if self._section_tokens("files") <= limit:  # recounted: the common root may move
                    return
                del self.files[victim.path]
            return
        entries = self.items.in_category(category)
        total = sum(count_cached(f"- {i.line}") for i in entries)
        entries = [i for i in entries if not i.protected]
        for item in [i for i in entries if i.fix]:  # an error without the agent's reading of it before no error
            if total <= limit:
                return
            plain = item._replace(fix="")
            total += count_cached(f"- {plain.line}") - count_cached(f"- {item.line}")
            self.items.replace(plain)
        for item in sorted(entries, key=lambda i: (i.rank, i.order)):
            if total <= limit:
                return
            current = self.items[item.order]  # unfixed above, maybe
            total -= count_cached(f"- {current.line}")
            self.items.remove(current)

    def _section_tokens(self, category: str) -> int:
        return sum(count_cached(line) for line in self._lines(category))

    def _drop(self, victim: Item | FileEntry) -> None:
        if isinstance(victim, FileEntry):
            del self.files[victim.path]
        else:
            self.items.remove(victim)

    def _lines(self, category: str) -> list[str]:
        if category == "files":
            entries = sorted(self.files.values(), key=lambda f: f.order)
            root = common_root([f.path for f in entries])
            lines = [f"- {root_line(root)}"] if root else []
            return lines + [f.line(root) for f in entries]
        return [f"- {i.line}" for i in self.items.in_category(category)]

    def _render_all(self) -> str:
        blocks: list[str] = []
        for prefix, title in self.sections:
            lines = self._lines(category_of(title))
            blocks.append("\n".join([f"{prefix} {title}", *(lines or [f"- {NONE_ITEM}"])]))
        return "\n\n".join(blocks)


def _estimate(text: str) -> int:
    """The per-line estimate of a piece of the summary; pieces joined by line breaks add up to the whole's."""
    return sum(count_cached(line) for line in text.splitlines() if line)


def summarize(request: ModelRequest) -> tuple[str, str]:
    """(summary text, finish reason) for a summary request."""
    history, asked = split_request(request)
    wanted = summary_format(asked, request.system or "")
    sections = wanted.sections
    builder = _SummaryBuilder(sections)
    previous = previous_summary(history, sections)
    if previous is not None:
        builder.read_previous(history[previous].content)
        builder.previous_next_as_history(followed=previous + 1 < len(history))
        history = history[:previous] + history[previous + 1:]
    builder.read_messages(history)
    builder.finish()
    budget = wanted.budget(request.max_output_tokens)  # XML: built under headings, then put into the tags
    text, cut_short = builder.render(budget)
    return (text, "length") if cut_short else (wanted.shaped(fill(text, history, budget)), "stop")
