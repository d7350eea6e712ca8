"""The agent's own task list, read from its todo tools (TodoWrite's `todos`, TaskCreate/TaskUpdate, a plan's
`steps`): which tasks are done and which are open at the moment of the summary. A done task stated as done
does not resurface as a next step."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CREATED = re.compile(r"Task #(\d+) created", re.I)
_DONE = ("completed", "done", "complete", "finished")


@dataclass
class TaskList:
    """Tasks by id, in the order first seen: (text, status)."""

    tasks: dict[str, tuple[str, str]] = field(default_factory=dict)
    _pending_create: dict[str, str] = field(default_factory=dict)  # call id -> subject, until its result

    def read_call(self, call_id: str, name: str, arguments: dict) -> None:
        items = arguments.get("todos") or arguments.get("plan") or arguments.get("steps")
        if isinstance(items, list) and items and all(isinstance(i, dict) for i in items):
            self._replace(items)
        elif name.lower() == "taskcreate" and isinstance(arguments.get("subject"), str):
            self._pending_create[call_id] = arguments["subject"]
        elif name.lower() == "taskupdate" and arguments.get("taskId") is not None:
            key = str(arguments["taskId"])
            text, status = self.tasks.get(key, (str(arguments.get("subject") or f"task {key}"), "pending"))
            self.tasks[key] = (str(arguments.get("subject") or text), str(arguments.get("status") or status))

    def read_result(self, call_id: str, output: str) -> None:
        subject = self._pending_create.pop(call_id, None)
        if subject is None:
            return
        found = _CREATED.search(output)
        key = found.group(1) if found else str(len(self.tasks) + 1)
        self.tasks[key] = (subject, "pending")

    def _replace(self, items: list[dict]) -> None:
        self.tasks = {}
        for number, item in enumerate(items, 1):
            text = item.get("content") or item.get("step") or item.get("subject") or item.get("title")
            if isinstance(text, str) and text.strip():
                self.tasks[str(number)] = (text.strip(), str(item.get("status") or "pending").lower())

    def done(self) -> list[str]:
        return [text for text, status in self.tasks.values() if status.lower() in _DONE]

    def open(self) -> list[tuple[str, str]]:
        """(text, status) of the tasks not done, the one in progress first."""
        rest = [(t, s) for t, s in self.tasks.values() if s.lower() not in _DONE and s.lower() != "deleted"]
        return sorted(rest, key=lambda pair: 0 if "progress" in pair[1] else 1)


def is_task_tool(name: str, arguments: dict) -> bool:
    return name.lower() in ("todowrite", "taskcreate", "taskupdate", "tasklist", "update_plan") or \
        isinstance(arguments.get("todos"), list)
