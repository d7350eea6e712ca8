"""A text's statements, each with what binds it to a referent (docs/evaluation.md, "Reading a summary").

A summary with structure (headings, lists, code blocks, tables) is read as the Markdown document it is
(markdown-it-py, CommonMark with tables): a statement is a clause of a paragraph, a code line or a table row,
and its context is what stands above it in the document, each part reaching no further than its own block:
the section headings it sits under, the list items it is nested in (their first paragraph), the label paragraph
(ending in `:`) that introduces its list or code block, the header of its table, and, within a paragraph (a
bullet's too), its first sentence for a later one and the rest of its line for the first (a paragraph's sentences
share one subject). Plain text with no structure (a
one-line summary, a run of words, lines without Markdown) keeps the line and clause rule: a statement is a
line, sentence or clause, headed by the latest heading or unindented label line above it and by its parent line;
a line's sentences share one subject as a paragraph's do.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode


@dataclass(frozen=True)
class Statement:
    text: str  # raw
    context: str = ""  # raw text of what binds it: headings, enclosing items, label, the bullet's subject
    code: bool = False  # a line of a code block: quoted code, not a statement of what is current


# A statement is a line, a sentence or a clause: split at line breaks, sentence ends, `;` and inline list marks
# (a one-line summary is read clause by clause; a quoted request of any length is one statement).
CLAUSE = re.compile(r"(?<=[.!?])\s+|;|\s[\u2022\u00b7]\s")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_LABEL_LINE = re.compile(r"^\s*(?:#+\s|.*:\W*$)")
_LABEL = re.compile(r":[\s*_`]*$")  # a paragraph ending in a colon (bold or code markers after it)
_LISTS = frozenset({"bullet_list", "ordered_list"})
_BLOCKS = frozenset({"heading", "fence", "code_block", "table"}) | _LISTS
_PARSER = MarkdownIt("commonmark").enable("table")
_JOINED = re.compile(r";\s*")
_SUBJECT_WORDS = 3  # a shorter first sentence ("Done.", "port.") names no subject for the rest to share


def statements(raw: str) -> tuple[Statement, ...]:
    """The statements of a text: read as a document where it has Markdown structure, line by line otherwise."""
    return _read(raw)


@lru_cache(maxsize=256)  # the same summary is graded against every probe of its point, in each condition
def _read(raw: str) -> tuple[Statement, ...]:
    lines = [line for line in raw.splitlines() if line.strip()]
    if not lines:
        return ()
    # a single line's `;` clauses are its lines (a document joined into one line keeps its blocks' order)
    document = "\n".join(_JOINED.split(lines[0])) if len(lines) == 1 else raw
    if document.count("\n"):
        root = SyntaxTreeNode(_PARSER.parse(document))
        if any(node.type in _BLOCKS for node in root.walk()):
            return tuple(_document(root, ()))
    return tuple(unit for line, heading in lines_with_headings(raw) for unit in _paragraph(line, heading))


# ---------------------------------------------------------------------------------------------
# plain text: lines, sentences and clauses


def clauses(line: str, heading: str, code: bool = False) -> list[Statement]:
    """A line's clauses; a label clause ("Pending tasks:", "## Next") heads the clauses after it in the line, as
    it would the lines under it (a summary joined into one line keeps its structure)."""
    if code:
        return [Statement(line, heading, True)] if line.strip() else []
    out, label = [], ""
    for clause in CLAUSE.split(line):
        if clause.strip():
            out.append(Statement(clause, f"{heading} {label}".strip()))
            if _LABEL_LINE.match(clause.strip()):
                label = clause
    return out


def lines_with_headings(raw: str) -> list[tuple[str, str]]:
    """Each non-blank line with its heading: the latest heading or unindented label line (ending in `:`), and
    the nearest less indented line above it (its parent item)."""
    out, heading, parents = [], "", []  # parents: (indent, line) of the open items above
    for line in raw.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if indent == 0 and _LABEL_LINE.match(line):
            out.append((line, heading if not line.lstrip().startswith("#") else ""))
            heading, parents = line, []
            continue
        out.append((line, " ".join(filter(None, (heading, parents[-1][1] if parents else "")))))
        parents.append((indent, line))
    return out


# ---------------------------------------------------------------------------------------------
# a Markdown document


def _document(node: SyntaxTreeNode, context: tuple[str, ...]) -> list[Statement]:
    """The statements under `node`, each with `context`: the texts above it that bind it."""
    out: list[Statement] = []
    sections: list[tuple[int, str]] = []  # the headings open in this container: (level, text)
    label = ""  # a label paragraph or item just above, for the next list, code block or table only
    for child in node.children:
        above = context + tuple(text for _, text in sections)
        if child.type == "heading":
            level = int(child.tag[1])
            sections = [(lvl, text) for lvl, text in sections if lvl < level] + [(level, _inline(child))]
            out += clauses(_inline(child), " ".join(above))
            label = ""
            continue
        if child.type in ("bullet_list", "ordered_list", "fence", "code_block", "table") and label:
            above += (label,)
        out += _block(child, above)
        label = _label_of(child)
    return out


def _block(node: SyntaxTreeNode, context: tuple[str, ...]) -> list[Statement]:
    if node.type == "paragraph":
        return _paragraph(_inline(node), " ".join(context))
    if node.type in ("fence", "code_block"):
        return [unit for line in node.content.splitlines() for unit in clauses(line, " ".join(context), code=True)]
    if node.type == "table":
        return _table(node, context)
    if node.type in ("bullet_list", "ordered_list"):
        return [unit for item in node.children for unit in _item(item, context)]
    return _document(node, context)  # a blockquote or other container


def _item(item: SyntaxTreeNode, context: tuple[str, ...]) -> list[Statement]:
    """A list item: its first paragraph heads everything else the item holds, and is bound by its own child items
    (a file's bullet is about what its sub-bullets say of it: "x.sql (NEW)" over "Prevents role escalation")."""
    children = item.children
    if not children or children[0].type != "paragraph":
        return _document(item, context)
    first = _inline(children[0])
    below = [_inline(grandchild.children[0]) for child in children[1:] if child.type in _LISTS
             for grandchild in child.children if grandchild.children and grandchild.children[0].type == "paragraph"]
    return (_paragraph(first, " ".join(context + tuple(below)))
            + _document_after(item, context + (first,)))


def _document_after(item: SyntaxTreeNode, context: tuple[str, ...]) -> list[Statement]:
    """The blocks of a list item after its first paragraph (which may label the first of them)."""
    out, label = [], ""  # the first paragraph, a label or not, is already in `context`
    for child in item.children[1:]:
        above = context + ((label,) if label and child.type != "paragraph" else ())
        out += _block(child, above)
        label = _label_of(child)
    return out


def _paragraph(text: str, context: str) -> list[Statement]:
    """A paragraph's lines and clauses; a label line heads the lines after it in the paragraph. A paragraph (a
    bullet's too) is about one thing: a later sentence shares the subject of the first ("The simulator was missing.
    Used `iPhone 17 Pro` instead."), and the first is bound by the rest of its line ("Two compilation errors in
    `FirebaseFeedService.swift`. Let me fix them:")."""
    out, subject, label = [], "", ""
    for line in text.splitlines():
        if not line.strip():
            continue
        units = clauses(line, " ".join(filter(None, (context, label))))
        first = _SENTENCE.split(line.strip())[0]
        if not subject and units and len(first.split()) >= _SUBJECT_WORDS:
            subject, rest = first, line.strip()[len(first):].strip()
            units = [Statement(units[0].text, f"{units[0].context} {rest}".strip())] + [
                Statement(u.text, f"{u.context} {subject}".strip()) for u in units[1:]]
        elif subject:
            units = [Statement(u.text, f"{u.context} {subject}".strip()) for u in units]
        out += units
        if _LABEL.search(line):
            label = line
    return out


def _table(node: SyntaxTreeNode, context: tuple[str, ...]) -> list[Statement]:
    """A table row is one statement, bound by its table's header row."""
    rows = [[_inline(cell) for cell in row.children] for row in node.walk() if row.type == "tr"]
    if not rows:
        return []
    header = " ".join(context + tuple(rows[0]))
    return [Statement(" | ".join(rows[0]), " ".join(context))] + [
        Statement(" | ".join(row), header) for row in rows[1:]]


def _inline(node: SyntaxTreeNode) -> str:
    """A block's text as written (inline markup kept): its inline child's source."""
    for child in node.children:
        if child.type == "inline":
            return child.content
    return node.content or ""


def _label_of(node: SyntaxTreeNode) -> str:
    """The label a block ends with, introducing the block after it: a paragraph ending in `:`, or the last item of
    a list when that item's text ends in `:` (a label written as a bullet above its code block)."""
    if node.type == "paragraph":
        text = _inline(node)
        return text if _LABEL.search(text) else ""
    if node.type in ("bullet_list", "ordered_list") and node.children:
        last = node.children[-1]
        if last.children and last.children[-1].type == "paragraph":
            text = _inline(last.children[-1])
            return text if _LABEL.search(text) else ""
        if last.children and last.children[-1].type in ("bullet_list", "ordered_list"):
            return _label_of(last.children[-1])
    return ""
