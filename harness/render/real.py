"""The report on real ground for a reader: per real compaction point, per kind and overall, each arm's passes
beside the floor and the full history, and the probes the real summary and the summarizer under test lose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.atomic import write_atomic
from harness.render.margins import margins_markdown
from harness.render.console import stderr
from harness.render.run import RunProgress, write_markdown

if TYPE_CHECKING:
    from harness.studies.compare import FinishedRun

WHAT = {
    "retained": "the expected facts are in what the compaction produced (no model)",
    "answered": "the builtin answerer, reading the compacted context, answers correctly",
}


class ArmProgress(RunProgress):
    """A progress bar per arm and its report.md; the arms' own summaries stay in their folders."""

    def finished(self, finished: FinishedRun) -> None:
        write_markdown(finished.run, finished.folder.path / "report.md")
        if not self.as_json:
            stderr().print(f"{finished.run.get('label')}: {finished.folder.path}/run.json")


def cell(passed: int, of: int) -> str:
    return f"{passed}/{of}" + (f" ({round(100 * passed / of)}%)" if of else "")


def table(rows: list[dict[str, Any]], arms: list[str], first: str, lost: bool = False,
          under_test: str = "") -> list[str]:
    head = [first, "probes", "full", "floor", *arms]
    if lost:
        head += ["lost by the real summary", f"lost by {under_test}"]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1 - (2 if lost else 0))
             + (" --- | --- |" if lost else "")]
    for row in rows:
        cells = [row["name"], str(row["probes"]), str(row["full"]), cell(row["floor"], row["full"]),
                 *(cell(row["arms"][arm], row["full"]) for arm in arms)]
        if lost:
            losses = row.get("lost", {})
            cells += [", ".join(losses.get(name, [])) or "-" for name in ("real summary", under_test)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown_real(study: dict[str, Any], command: str = "") -> str:
    arms, under_test = study["arms"], study["under_test"]
    lines = ["# Scores on real ground", ""]
    if command:
        lines += [f"Made with `{command}`.", ""]
    lines += ["Every arm compacts at the real compaction points of the recorded sessions: `real summary` is the "
              "session's own summary (`--policy recorded`), the others compact there with the recorded tail and the "
              "recorded summary's size as budget (`--at-recorded-points`); the controls are sized as the summarizer's "
              "summary for the same request. Counts are over the probes that pass on the full history; `floor` is "
              "the same tail with no summary. Exact values: probes of kind "
              + ", ".join(study["exact_kinds"]) + ".", ""]
    if study.get("over_budget"):
        lines += ["Over budget (graded cut to the recorded size, compared with --allow-over-budget): "
                  + ", ".join(f"{name} {n}" for name, n in study["over_budget"].items()) + ".", ""]
    lines += compactions_markdown(study.get("compactions") or {})
    for grade, found in study["grades"].items():
        lines += [f"## {grade}: {WHAT.get(grade, grade)}", ""]
        lines += side_by_side_markdown(found.get("side_by_side") or [], found.get("margins") or {})
        lines += ["### Per compaction point", ""]
        lines += table(found["points"], arms, "case and point", lost=True, under_test=under_test)
        lines += ["", "### By kind", ""]
        lines += table([*found["kinds"], found["exact"], found["total"]], arms, "kind")
        lines.append("")
        for summarizer, margin in found.get("margins", {}).items():
            lines += margins_markdown(summarizer, margin)
    return "\n".join(lines)


def compactions_markdown(found: dict[str, dict[str, list[int]]]) -> list[str]:
    """Where the real session and each runtime compacted, per case (case messages the compactions came before)."""
    arms = sorted({arm for by_arm in found.values() for arm in by_arm if arm != "real summary"})
    if not arms:
        return []
    lines = ["## Where each compacted", "", "Each runtime is driven with `--window recorded`: its window set so its own "
             "trigger fires at the context it carried where the recorded session first compacted.", "",
             "| case | real summary | " + " | ".join(arms) + " |", "| --- |" + " --- |" * (len(arms) + 1)]
    for case, by_arm in found.items():
        cells = [", ".join(map(str, by_arm.get(arm) or [])) or "none" for arm in ("real summary", *arms)]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return lines + [""]


def side_by_side_markdown(rows: list[dict[str, Any]], margins: dict[str, Any]) -> list[str]:
    """Each arm beside the real summary over the probes that test the summary in both, with its margin over
    the strongest control."""
    if not rows:
        return []
    lines = ["### Beside the real summaries, over the probes that test the summary", "",
             "| arm | probes | real summary | arm | only real / only arm | McNemar p | margin over the strongest "
             "control (p) |", "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in rows:
        found = (margins.get(row["arm"]) or {}).get("overall")
        over = "-" if not found else f"{found['margin']:+d} vs {found['control']} ({found['p_value']:.2g})"
        lines.append(f"| {row['arm']} | {row['probes']} | {cell(row['real'], row['probes'])} | "
                     f"{cell(row['arm_passes'], row['probes'])} | {row['only_real']} / {row['only_arm']} | "
                     f"{row['p_value']:.2g} | {over} |")
    return lines + ["", "Probes that test the summary: graded after a compaction, passing on the full history and "
                    "failing on the floor in the real summary's run and in the arm's own (a runtime's point is its own "
                    "compaction). Margins are over every probe that passes on the full history; a runtime's over those "
                    "that also test the summary in its own run (it keeps a verbatim tail of its own).", ""]


def show_real(study: dict[str, Any], *, as_json: bool, markdown: Path | None, command: str) -> None:
    text = markdown_real(study, command)
    if markdown:
        write_atomic(markdown, text)
    if as_json:
        print(json.dumps(study, indent=2))
        return
    print(text)  # markdown as is: rich would wrap its wide tables
