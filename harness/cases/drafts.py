"""Candidate probes for an imported case (`cases probe-draft CASE`), for a person to review.

Heuristics over the session: the task (goal), files touched (artifact), errors seen (error), user rules
(constraint) and the agent's last stated plan (continuation). Every candidate is marked `draft = true` and
carries `evidence` (the text it came from); `all` items are literal substrings of the session so the probe is
answerable on the full history. A person edits the question and expected facts and removes `draft`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.cases.schema import Case
from harness.cases.toml import session_file_of, toml_table
from harness.session import Message, Session, message_text, read_session

PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|c|h|cpp|rb|md|toml|json|yaml|yml|cfg|txt|sh))\b")
DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)
EDIT_WORDS = re.compile(r"(\bsed -i\b|^edit\b|^create\b|\bcat\s*>|>\s*\S+\.\w+|\bapply_patch\b|\bpatch -p|\bwrite\b|\btee\b)", re.M)
EDIT_TOOLS = {"edit", "write", "multiedit", "str_replace_based_edit_tool", "apply_patch", "edit_file", "write_file",
              "create_file", "str_replace_editor"}
ERROR_LINE = re.compile(r"^\s*((?:[\w.]+(?:Error|Exception)|E\d{3} \w+Error|error|fatal|FAILED)\b[:\s].{3,}?)\s*$", re.M)
RULE = re.compile(r"[^.\n]*\b(must|never|always|do not|don't|should not|shouldn't|make sure|only(?!\())\b[^.\n]*", re.I)
PLAN = re.compile(r"\b(next|now let me|now let's|let's|I will|I'll|plan)\b", re.I)


def draft_probes(case_dir: str | Path) -> list[dict[str, Any]]:
    """Candidate probes for the session of the case in `case_dir` (its case.toml may still have none)."""
    session = read_session(session_file_of(case_dir))
    probes: list[dict[str, Any]] = []
    probes += _goal(session)
    probes += _artifacts(session)
    probes += _errors(session)
    probes += _constraints(session)
    probes += _plan(session)
    return probes + at_recorded_compactions(session, probes)


def at_recorded_compactions(session: Session, probes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same candidates asked just after the recorded compaction that first folded their fact away
    (`at = "compaction:N"`, for `run --at-recorded-points`): what that summary had to carry."""
    out, previous = [], 0
    for number, record in enumerate(sorted(session.compactions, key=lambda c: c.position), start=1):
        for probe in probes:
            if previous <= probe["planted_at"] < record.covers:
                out.append({**probe, "id": f"{probe['id']}-at-c{number}", "at": f"compaction:{number}"})
        previous = max(previous, record.covers)
    return out


def without_drafts(cases: list[Case]) -> tuple[list[Case], int]:
    """The cases with their `draft = true` probes left out (a draft is unreviewed: its grade means nothing
    yet), and how many were left out."""
    kept, dropped = [], 0
    for case in cases:
        reviewed = tuple(p for p in case.probes if not p.draft)
        dropped += len(case.probes) - len(reviewed)
        kept.append(case if len(reviewed) == len(case.probes) else replace(case, probes=reviewed))
    return kept, dropped


def _probe(id: str, kind: str, question: str, all_items: list[Any], planted_at: int, evidence: str) -> dict[str, Any]:
    return {"id": id, "kind": kind, "question": question, "all": all_items, "planted_at": planted_at,
            "draft": True, "evidence": evidence[:300]}


def _is_task(message: Message) -> bool:
    meta = message.meta or {}
    return message.role == "user" and not meta.get("is_demo") and not meta.get("tag") and not meta.get("source_role")


def _goal(session: Session) -> list[dict[str, Any]]:
    for i, message in enumerate(session.messages):
        if _is_task(message):
            lines = [l.strip() for l in message.content.splitlines() if l.strip() and not l.strip().startswith("<")]
            informative = [l for l in lines if len(l) >= 20 and not l.endswith(":")] or lines
            if informative:
                return [_probe("goal", "goal", "What is the overall goal of this session?", [informative[0][:80]], i,
                               message.content)]
    return []


def _artifacts(session: Session) -> list[dict[str, Any]]:
    touched: dict[str, int] = {}  # path -> last message index where it was changed
    for i, message in enumerate(session.messages):
        for call in message.tool_calls:
            args = call.arguments
            if call.name.lower() in EDIT_TOOLS:
                for key in ("file_path", "path", "filename"):
                    if isinstance(args.get(key), str):
                        touched[args[key]] = i
            command = next((args[k] for k in ("command", "cmd", "input") if isinstance(args.get(k), str)), "")
            if command and EDIT_WORDS.search(command):
                for path in PATH.findall(command.splitlines()[0] if command.startswith(("edit", "create")) else command):
                    touched[path] = i
        for path in DIFF_FILE.findall(message.content):
            touched[path] = i
    probes = []
    for n, (path, i) in enumerate(sorted(touched.items(), key=lambda kv: kv[1])[-5:]):
        text = message_text(session.messages[i])
        probes.append(_probe(f"artifact-{n + 1}", "artifact", f"Which file was changed (draft: about {Path(path).name})?",
                             [path], i, text[max(0, text.find(path) - 100):text.find(path) + 200]))
    return probes


def _errors(session: Session) -> list[dict[str, Any]]:
    seen: dict[str, int] = {}
    for i, message in enumerate(session.messages):
        if message.role != "tool" and message.role != "user":
            continue
        for match in ERROR_LINE.finditer(message.content):
            line = match.group(1).strip()[:100]
            if message.is_error or "Error" in line or "Exception" in line:
                seen[line] = i
    chosen = sorted(seen.items(), key=lambda kv: kv[1])[-3:]
    return [_probe(f"error-{n + 1}", "error", "What exact error was raised, and how was it resolved?", [line], i, line)
            for n, (line, i) in enumerate(chosen)]


def _constraints(session: Session) -> list[dict[str, Any]]:
    probes = []
    for i, message in enumerate(session.messages):
        if not _is_task(message):
            continue
        for match in RULE.finditer(message.content):
            sentence = match.group(0).strip()
            if 15 <= len(sentence) <= 160 and len(probes) < 3:
                probes.append(_probe(f"constraint-{len(probes) + 1}", "constraint",
                                     "Which rule did the user set (draft: rephrase as a specific question)?",
                                     [sentence[:100]], i, sentence))
    return probes


def _plan(session: Session) -> list[dict[str, Any]]:
    for i in range(len(session.messages) - 1, -1, -1):
        message = session.messages[i]
        if message.role == "assistant" and message.content.strip() and PLAN.search(message.content):
            sentence = next((s.strip() for s in re.split(r"(?<=[.!?:])\s+", message.content) if PLAN.search(s)),
                            message.content.strip())
            return [_probe("last-plan", "continuation", "What did the agent say it would do next?",
                           [sentence[:100]], i, message.content)]
    return []


def render_probes(probes: list[dict[str, Any]]) -> str:
    """Probes as `[[probe]]` TOML tables (evidence as a comment), ready to append to case.toml."""
    out: list[str] = []
    for probe in probes:
        out.append("")
        evidence = probe.get("evidence")
        if evidence:
            out += ["# evidence: " + line for line in evidence.splitlines()[:3]]
        keys = ("id", "kind", "question", "all", "none", "planted_at", "at", "rubric", "draft")
        out.append(toml_table("probe", {key: probe[key] for key in keys if key in probe}, array=True))
    return "\n".join(out) + "\n"
