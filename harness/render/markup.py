"""Small HTML builders for report.html: escaped cells and tables (sortable by the page's script)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence


@dataclass(frozen=True)
class Cell:
    """A table cell: its text (escaped here), a class, and the value the page sorts it by when not its text."""

    text: str
    cls: str = ""
    sort: str | float | None = None
    raw: bool = False  # the text is markup already (escaped by its builder)

    def html(self) -> str:
        attributes = _class(self.cls) + \
                     (f' data-sort="{escape(str(self.sort))}"' if self.sort is not None else "")
        return f"<td{attributes}>{self.text if self.raw else escape(self.text)}</td>"


def cell(value: str | Cell) -> Cell:
    return value if isinstance(value, Cell) else Cell(value)


def num(value: float | int | None, text: str | None = None) -> Cell:
    """A right-aligned number cell that sorts by its value (a dash when missing)."""
    return Cell("-" if value is None else (text if text is not None else str(value)), "num", value)


def verdict(passed: bool | None) -> Cell:
    if passed is None:
        return Cell("-")
    return Cell("pass" if passed else "fail", "pass" if passed else "fail", int(passed))


def table(headers: Sequence[str], rows: Sequence[Sequence[str | Cell]], *, id: str = "",
          row_attributes: Sequence[str] | None = None) -> str:
    """A sortable table; `row_attributes` adds markup (already escaped) to each <tr>."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    attributes = row_attributes or [""] * len(rows)
    body = "\n".join(f"<tr{extra}>" + "".join(cell(c).html() for c in row) + "</tr>"
                     for row, extra in zip(rows, attributes))
    ident = f' id="{escape(id)}"' if id else ""
    # the wrapper scrolls a table wider than the page inside it, so the page itself never scrolls sideways
    return (f'<div class="scroll"><table class="sortable"{ident}><thead><tr>{head}</tr></thead><tbody>\n{body}\n'
            f'</tbody></table></div>')


def _class(cls: str) -> str:
    return f' class="{cls}"' if cls else ""


def paragraph(text: str, cls: str = "") -> str:
    return f"<p{_class(cls)}>{escape(text)}</p>" if text else ""


def section(id: str, title: str, *parts: str, cls: str = "") -> str:
    return (f'<section id="{escape(id)}"{_class(cls)}><h2>{escape(title)}</h2>\n'
            + "\n".join(p for p in parts if p) + "</section>")
