"""Candidate probes for an imported case (`cases probe-draft CASE`), for a person to review.

Heuristics over the session: the user's first request (goal), files changed (artifact), errors raised (error),
user rules (constraint) and the agent's last stated plan (continuation). Each candidate comes from one source
sentence in one message (`planted_at`): its question names the sentence's rarest term, its expected items are
other key terms of the same sentence, its accept example is the sentence and its reject example the sentence
without them. `draft_check` then tests every candidate (items in that message, examples graded right, the builtin
answerer passing on the full history) and drops the unsound ones. Every draft stays `draft = true`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.cases.draft_terms import Rarity, is_strong, key_terms, sentences, without
from harness.cases.schema import Case
from harness.cases.toml import session_file_of, toml_table
from harness.session import Message, Session, message_text, read_session

PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|c|h|cpp|rb|md|toml|json|yaml|yml|cfg|txt|sh))\b")
DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)
EDIT_WORDS = re.compile(r"(\bsed -i\b|^edit\b|^create\b|\bcat\s*>|>\s*\S+\.\w+|\bapply_patch\b|\bpatch -p|\bwrite\b|\btee\b)", re.M)
EDIT_TOOLS = {"edit", "write", "multiedit", "str_replace_based_edit_tool", "apply_patch", "edit_file", "write_file",
              "create_file", "str_replace_editor"}
# A raised error: its type opens the line, after at most a pytest `E` or a `FAILED test - ` prefix.
ERROR = re.compile(r"^(?:\s*E\s+|\s*FAILED \S+ - |\s*)((?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\b:\s*(.{3,})$", re.M)
RULE = re.compile(r"\b(must not|must|never|always|do not|don't|should not|shouldn't|make sure|only(?!\())\b", re.I)
NEGATIVE = ("must not", "never", "do not", "don't", "should not", "shouldn't")
PLAN = re.compile(r"\b(next|now let me|now let's|let's|I will|I'll|plan)\b(?!-)", re.I)
TAGGED = re.compile(r"<([\w-]+)[^>]*>.*?</\1>", re.S)
ERRORS, RULES, FILES = 3, 3, 5


def draft_probes(case_dir: str | Path) -> list[dict[str, Any]]:
    """The sound candidate probes for the session of the case in `case_dir` (its case.toml may have none)."""
    return review_drafts(case_dir)[0]


def review_drafts(case_dir: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(sound drafts, dropped drafts with the reason each failed its checks)."""
    # Imported here: the checks grade with harness.probes, which loads harness.cases (this package) first.
    from harness.cases.draft_check import sort_drafts
    from harness.models.builtin import BuiltinClient

    session = read_session(session_file_of(case_dir))
    candidates = candidate_probes(session)
    return sort_drafts(session, candidates + at_recorded_compactions(session, candidates), BuiltinClient())


def candidate_probes(session: Session) -> list[dict[str, Any]]:
    rarity = Rarity.of(session)
    return [*_goal(session, rarity), *_artifacts(session, rarity), *_errors(session, rarity),
            *_constraints(session, rarity), *_plan(session, rarity)]


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


def _probe(id: str, kind: str, question: str, items: list[Any], anchor: list[str], planted_at: int,
           accept: list[str], reject: list[str], evidence: str) -> dict[str, Any]:
    return {"id": id, "kind": kind, "question": question, "all": items, "anchor": anchor, "planted_at": planted_at,
            "accept": [a for a in accept if a.strip()], "reject": [r for r in reject if r.strip()],
            "draft": True, "evidence": evidence[:300]}


def _cloze(id: str, kind: str, ask: str, sentence: str, planted_at: int, rarity: Rarity,
           fixed: list[Any] = (), exclude: frozenset[str] = frozenset(), terms: int = 2,
           facts_from: str | None = None) -> list[dict[str, Any]]:
    """A probe on one sentence: its rarest key term names the subject in the question (`ask` has `{}` for it),
    the next rarest (of `facts_from`, a part of the sentence, when given) are the expected items after any
    `fixed` ones; none when the sentence has too few."""
    words = _rarest(sentence, rarity, exclude)
    if not words:
        return []
    anchor = words[0]  # the subject the question names is the referent a statement of the facts must name
    rest = [w for w in key_terms(facts_from or sentence, rarity, exclude) if w.lower() != anchor.lower()]
    facts = sorted(rest, key=lambda t: not is_strong(t))[:terms]  # identifiers and numbers first
    if not facts and not fixed:
        return []
    items = [*fixed, *facts]
    literal = [i if isinstance(i, str) else i[0] for i in items]
    short = sentence if len(sentence) <= 300 else sentence[:300].rsplit(" ", 1)[0]
    return [_probe(id, kind, ask.format(f"`{anchor}`"), items, [anchor], planted_at, [short, "; ".join(literal)],
                   [without(short, literal)], sentence)]


def _rarest(text: str, rarity: Rarity, exclude: frozenset[str] = frozenset()) -> list[str]:
    """The text's key terms, those in the fewest messages (and identifiers, numbers) first."""
    return sorted(key_terms(text, rarity, exclude), key=lambda t: (rarity.messages_with(t), not is_strong(t)))


def _is_task(message: Message) -> bool:
    meta = message.meta or {}
    return message.role == "user" and not meta.get("is_demo") and not meta.get("tag") and not meta.get("source_role")


def _goal(session: Session, rarity: Rarity) -> list[dict[str, Any]]:
    for i, message in enumerate(session.messages):
        if _is_task(message):
            text = TAGGED.sub("", message.content)  # an attached system block is not the user's request
            lines = [s for s in sentences(text) if not s.startswith("<") and not s.endswith(":")]
            for line in (l for l in lines if len(l) >= 20):
                probes = _cloze("goal", "goal", "In the user's first request, what did they ask for about {}?",
                                line, i, rarity)
                if probes:
                    return probes
            return []
    return []


def _touched(session: Session) -> dict[str, int]:
    """Each changed file's path, with the last message that changed it."""
    touched: dict[str, int] = {}
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
    return touched


def _artifacts(session: Session, rarity: Rarity) -> list[dict[str, Any]]:
    """The last files changed, asked for by name: the full path when the name is unique among them."""
    touched = _touched(session)
    names = [Path(p).name for p in touched]
    probes = []
    for n, (path, i) in enumerate(sorted(touched.items(), key=lambda kv: kv[1])[-FILES:]):
        name = Path(path).name
        others = [p for p in touched if p != path and Path(p).suffix == Path(path).suffix] or ["I don't know."]
        text = message_text(session.messages[i])
        evidence = text[max(0, text.find(path) - 100):text.find(path) + 200]
        # the edit's own rarest term is what the change was about (the name is part of the path: never its anchor)
        about = _rarest(text, rarity, frozenset({path.lower(), name.lower()}))[:1]
        if name != path and names.count(name) == 1 and about:
            probes.append(_probe(f"artifact-{n + 1}", "artifact",
                                 f"What is the full path of the file `{name}` that the agent changed?", [path], about,
                                 i, [f"`{path}`", f"The agent changed {path}."], [others[-1]], evidence))
        else:
            found = _cloze(f"artifact-{n + 1}", "artifact", "Which file did the agent change in the edit with {}?",
                           text, i, rarity, fixed=[path], exclude=frozenset({path.lower(), name.lower()}), terms=0)
            probes += [{**p, "accept": [f"`{path}`", f"The agent changed {path}."], "reject": [others[-1]]}
                       for p in found]
    return probes


def _errors(session: Session, rarity: Rarity) -> list[dict[str, Any]]:
    """The last distinct typed errors seen in tool results: the question names the error type and the
    rarest term of its line, the items are terms of its message."""
    seen: dict[str, tuple[int, str, str]] = {}
    for i, message in enumerate(session.messages):
        if message.role in ("tool", "user"):
            for match in ERROR.finditer(message.content):
                line = match.group(0).strip()[:300]
                seen[line] = (i, match.group(1), match.group(2))
    probes: list[dict[str, Any]] = []
    for line, (i, kind, message) in sorted(seen.items(), key=lambda kv: kv[1][0], reverse=True):
        ask = "What did the " + kind + " about {} say?"
        probes += _cloze(f"error-{len(probes) + 1}", "error", ask, line, i, rarity, exclude=frozenset({kind.lower()}),
                         facts_from=message)
        if len(probes) == ERRORS:
            break
    return probes


def _constraints(session: Session, rarity: Rarity) -> list[dict[str, Any]]:
    """User rules: the rule word (its polarity) and a key term are expected, the subject named."""
    probes: list[dict[str, Any]] = []
    for i, message in enumerate(session.messages):
        if not _is_task(message):
            continue
        for sentence in sentences(message.content):
            rule = RULE.search(sentence)
            if rule and 15 <= len(sentence) <= 200 and len(probes) < RULES:
                word = rule.group(1)
                same = [w for w in (NEGATIVE if word.lower() in NEGATIVE else ()) if w != word.lower()]
                probes += _cloze(f"constraint-{len(probes) + 1}", "constraint",
                                 "What rule did the user set about {}?", sentence, i, rarity,
                                 fixed=[[word, *same]], terms=1)
    return probes


def _plan(session: Session, rarity: Rarity) -> list[dict[str, Any]]:
    for i in range(len(session.messages) - 1, -1, -1):
        message = session.messages[i]
        if message.role == "assistant" and message.content.strip() and PLAN.search(message.content):
            sentence = next((s for s in sentences(message.content) if PLAN.search(s)), message.content.strip())
            return _cloze("last-plan", "continuation", "What did the agent say it would do next about {}?",
                          sentence, i, rarity)
    return []


def render_probes(probes: list[dict[str, Any]]) -> str:
    """Probes as `[[probe]]` TOML tables (evidence, and why a dropped one was dropped, as comments)."""
    out: list[str] = []
    for probe in probes:
        out.append("")
        if probe.get("dropped"):
            out.append("# dropped: " + " ".join(probe["dropped"].split()))
        evidence = probe.get("evidence")
        if evidence:
            out += ["# evidence: " + line for line in evidence.splitlines()[:3]]
        keys = ("id", "kind", "question", "all", "none", "anchor", "planted_at", "at", "rubric", "accept", "reject", "draft")
        out.append(toml_table("probe", {key: probe[key] for key in keys if key in probe}, array=True))
    return "\n".join(out) + "\n"
