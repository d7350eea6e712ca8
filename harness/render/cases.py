"""The case library for a reader: the list, validation problems, an import's report, probe drafts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from rich.table import Table

from harness.cases.schema import Case
from harness.importers import FORMATS, ImportReport, render_probes
from harness.render.console import stderr, stdout


def show_cases(cases: Sequence[Case], cases_dir: str, as_json: bool = False) -> None:
    if as_json:
        print(json.dumps({"cases_dir": cases_dir, "cases": [
            {"id": case.id, "pool": case.pool, "window": case.context_window,
             "messages": len(case.session.messages), "probes": len(case.probes), "title": case.title,
             "directory": str(case.directory)} for case in cases]}, indent=2))
        return
    table = Table(title=f"cases in {cases_dir}")
    for column in ("id", "pool", "window", "messages", "probes", "title"):
        table.add_column(column)
    for case in cases:
        table.add_row(case.id, case.pool, str(case.context_window), str(len(case.session.messages)),
                      str(len(case.probes)), case.title)
    stdout().print(table)


def show_problems(cases: Sequence[Case], problems: Sequence[str], as_json: bool = False) -> None:
    """Each problem on stderr, then the count line (or one JSON document with both)."""
    if as_json:
        print(json.dumps({"cases": len(cases), "probes": sum(len(c.probes) for c in cases),
                          "problems": list(problems)}, indent=2))
        return
    err = stderr()
    for problem in problems:
        err.print(problem)
    probes = sum(len(c.probes) for c in cases)
    stdout().print(f"{len(cases)} cases, {probes} probes, {len(problems)} problems")


def show_import(toml_path: Path, report: ImportReport) -> None:
    """What `--from auto` chose (when it chose), the import report, and where the case went."""
    out = stdout()
    if report.detected:
        out.print(f"--from auto chose {report.format} ({FORMATS[report.format][0]})")
    for line in report.lines():
        print(line)  # as is: report lines hold brackets ("[no result recorded]") and must not wrap
    out.print(f"case written: {toml_path} and {toml_path.parent / 'session.jsonl'}; add probes to case.toml "
              f"(`compaction-harness cases probe-draft {toml_path.parent}` proposes drafts)", markup=False)


def show_probe_drafts(case: str, probes: list[dict[str, Any]], dropped: list[dict[str, Any]] | None = None,
                      dropped_count: int = 0) -> None:
    """The drafts as TOML to review and append, under a header that says so; `dropped` (--show-dropped) after
    them, each with the check it failed."""
    print(f"# {len(probes)} DRAFT probes for {case}: review each (question, expected facts, planted_at), "
          f"then remove `draft = true` and append it to case.toml")
    if dropped_count:
        print(f"# {dropped_count} more candidates failed the drafter's checks (expected items in the planted "
              f"message, accept/reject examples, the builtin answerer on the full history)"
              + ("; they follow the sound ones, each under `# dropped:`" if dropped else "; --show-dropped lists them"))
    if probes:
        print(render_probes(probes), end="")
    if dropped:
        print("\n# ---- dropped candidates (they fail a check; each still `draft = true`) ----")
        print(render_probes(dropped), end="")
