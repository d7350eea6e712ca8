"""Session builder, probe-truth verification, a policy simulation for tuning, and case.toml output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESERVE = 16384
TAIL_TURNS = 3
TAIL_CAP = 16384


@dataclass
class Probe:
    id: str
    kind: str
    question: str
    all: list[Any]
    at: str  # beat name (or "@<index>") where the fact was last established
    none: list[str] = field(default_factory=list)
    regex: str | None = None
    rubric: str | None = None
    planted_at: int = -1


class Builder:
    def __init__(self, system: str):
        self.system = system
        self.msgs: list[dict[str, Any]] = []  # non-system, non-compaction messages
        self.compactions: list[tuple[int, dict[str, Any]]] = []  # (position, record)
        self.marks: dict[str, int] = {}
        self._calls = 0
        self.chars = len(system)

    # -- writing messages
    def _add(self, rec: dict[str, Any]) -> int:
        self.msgs.append(rec)
        self.chars += len(message_text(rec))
        return len(self.msgs) - 1

    def user(self, text: str) -> int:
        return self._add({"role": "user", "content": text})

    def say(self, text: str) -> int:
        return self._add({"role": "assistant", "content": text})

    def step(self, text: str, calls: list[tuple[str, dict[str, Any], str, bool]]) -> tuple[int, list[int]]:
        recs = []
        for name, args, _out, _err in calls:
            self._calls += 1
            recs.append({"id": f"call_{self._calls:04d}", "name": name, "arguments": args})
        a = self._add({"role": "assistant", "content": text, "tool_calls": recs})
        outs = []
        for rec, (_name, _args, out, err) in zip(recs, calls):
            r = {"role": "tool", "tool_call_id": rec["id"], "content": out}
            if err:
                r["is_error"] = True
            outs.append(self._add(r))
        return a, outs

    def compaction(self, content: str, covers: int, origin: str = "manual") -> None:
        self.compactions.append((len(self.msgs), {"role": "compaction", "content": content, "covers": covers,
                                                  "origin": origin}))

    def mark(self, name: str, index: int) -> None:
        self.marks[name] = index

    @property
    def tool_calls(self) -> int:
        return self._calls

    def records(self) -> list[dict[str, Any]]:
        out = [{"role": "system", "content": self.system}]
        blocks = sorted(self.compactions, key=lambda c: c[0])
        b = 0
        for i, m in enumerate(self.msgs + [None]):
            while b < len(blocks) and blocks[b][0] == i:
                out.append(blocks[b][1])
                b += 1
            if m is not None:
                out.append(m)
        return out

    def write(self, path: Path) -> None:
        with path.open("w", encoding="utf-8") as fh:
            for r in self.records():
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def message_text(rec: dict[str, Any]) -> str:
    calls = rec.get("tool_calls") or []
    if not calls:
        return rec["content"]
    lines = "\n".join(f"{c['name']} {json.dumps(c['arguments'], sort_keys=True)}" for c in calls)
    return f"{rec['content']}\n{lines}" if rec["content"] else lines


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\\", "/")).lower()


def _item_in(item: Any, text: str) -> bool:
    if isinstance(item, list):
        return any(norm(str(x)) in text for x in item)
    return norm(str(item)) in text


def verify_probes(b: Builder, probes: list[Probe]) -> list[str]:
    """Probe truth: every `all` item occurs at or before planted_at, the planted message holds one of them,
    update probes' old values appear before the new one and are not restated after planted_at."""
    texts = [norm(message_text(m)) for m in b.msgs]
    problems = []
    for p in probes:
        if p.at.startswith("@"):
            p.planted_at = int(p.at[1:])
        else:
            p.planted_at = b.marks[p.at]
        upto = " \u241e ".join(texts[: p.planted_at + 1])
        for item in p.all:
            if not _item_in(item, upto):
                problems.append(f"{p.id}: {item!r} not found at or before message {p.planted_at}")
        if not any(_item_in(item, texts[p.planted_at]) for item in p.all):
            problems.append(f"{p.id}: planted message {p.planted_at} holds none of {p.all!r}")
        for old in p.none:
            first_old = next((i for i, t in enumerate(texts) if norm(old) in t), None)
            if first_old is None:
                problems.append(f"{p.id}: superseded value {old!r} never appears")
                continue
            if first_old >= p.planted_at:
                problems.append(f"{p.id}: superseded value {old!r} first appears at {first_old}, not before planted_at {p.planted_at}")
            for i in range(p.planted_at + 1, len(texts)):
                if norm(old) in texts[i]:
                    problems.append(f"{p.id}: superseded value {old!r} restated at message {i} after planted_at")
                    break
    return problems


# ------------------------------------------------------------------------------------------------
# a small re-implementation of the default policy, used only to tune sizes and report expectations


def _turns(msgs: list[dict[str, Any]], upto: int) -> list[tuple[int, int, list[tuple[int, int]]]]:
    turns, start, steps, step_start = [], 0, [], None
    for i in range(upto):
        r = msgs[i]["role"]
        if r == "user":
            if step_start is not None:
                steps.append((step_start, i))
                step_start = None
            if i > start:
                turns.append((start, i, steps))
            start, steps = i, []
        elif r == "assistant":
            if step_start is not None:
                steps.append((step_start, i))
            step_start = i
    if step_start is not None:
        steps.append((step_start, upto))
    turns.append((start, upto, steps))
    return turns


def simulate(b: Builder, window: int, summary_tokens: int = 3000) -> list[dict[str, Any]]:
    sizes = [len(message_text(m)) / 4 for m in b.msgs]
    prefix = [0.0]
    for s in sizes:
        prefix.append(prefix[-1] + s)
    sys_t = len(b.system) / 4
    kept_from, summary = 0, 0.0
    events = []
    for i, m in enumerate(b.msgs):
        if m["role"] != "assistant":
            continue
        est = sys_t + summary + prefix[i] - prefix[kept_from]
        if est < window - RESERVE:
            continue
        turns = [t for t in _turns(b.msgs, i) if t[1] > kept_from]
        tail = turns[-TAIL_TURNS:]
        size = lambda a, z: prefix[z] - prefix[a]
        while len(tail) > 1 and size(tail[0][0], i) > TAIL_CAP:
            tail = tail[1:]
        start = tail[0][0]
        one_step = False
        if size(start, i) > TAIL_CAP and tail[0][2]:
            start = tail[0][2][-1][0]
            one_step = True
        start = max(start, kept_from)
        events.append({"send": i, "before": round(est), "tail_from": start, "one_step": one_step,
                       "after": round(sys_t + summary_tokens + size(start, i))})
        kept_from, summary = start, summary_tokens
    return events


# ------------------------------------------------------------------------------------------------
# case.toml


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _toml_val(v: Any) -> str:
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_val(x) for x in v) + "]"
    raise TypeError(v)


def case_toml(case_id: str, title: str, pool: str, window: int, max_out: int, script: str, seed: int,
              probes: list[Probe], notes: str = "") -> str:
    out = ["[case]", f"id = {_toml_str(case_id)}", f"title = {_toml_str(title)}", f"pool = {_toml_str(pool)}",
           'session = "session.jsonl"']
    if notes:
        out.append(f"notes = {_toml_str(notes)}")
    out += ["", "[model]", f"context_window = {window}", f"max_output_tokens = {max_out}", "",
            "[generator]", f"script = {_toml_str(script)}", f"seed = {seed}"]
    for p in probes:
        out += ["", "[[probe]]", f"id = {_toml_str(p.id)}", f"kind = {_toml_str(p.kind)}",
                f"question = {_toml_str(p.question)}", f"all = {_toml_val(p.all)}"]
        if p.none:
            out.append(f"none = {_toml_val(p.none)}")
        if p.regex:
            out.append(f"regex = {_toml_str(p.regex)}")
        out.append(f"planted_at = {p.planted_at}")
        if p.rubric:
            out.append(f"rubric = {_toml_str(p.rubric)}")
    return "\n".join(out) + "\n"
