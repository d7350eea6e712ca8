"""How often `retained` agrees with a careful reading of summaries (issue 42).

    .venv/bin/python tools/statement_agreement.py [--labels FILE ...] [--cases-dir cases]

Grades every labelled (probe, summary) pair with `retained` (the summary alone, as the summary block is graded at a
real compaction point) and prints, per labelled set, the agreement with the reader's `kept`, overall, on the pairs at
the probe's own point and on those where every fact's words occur in the summary, then every disagreement with the
reader's reason. Two sets by default: tests/data/statement_labels.toml (the real pool's own recorded summaries) and
tests/data/statement_labels_heldout.toml (the builtin's and line-picker's summaries at the same points, stored in
tests/data/heldout_summaries/, labelled before the grade ran on them). Offline, a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cases import discover  # noqa: E402
from harness.matching import Haystack, contains  # noqa: E402
from harness.policy.recorded import recorded_points  # noqa: E402
from harness.probes import ContextText, retained  # noqa: E402

LABELS = (ROOT / "tests/data/statement_labels.toml", ROOT / "tests/data/statement_labels_heldout.toml")


@dataclass(frozen=True)
class Pair:
    case: str
    summary: int  # the summary's number in its session (the compaction point)
    probe: str
    kept: bool  # the reader's judgement
    reason: str
    own_point: bool  # the summary in effect at the probe's own point (the one the harness grades it against)
    words_present: bool  # every `all` item has an alternative somewhere in the summary
    graded: bool  # what `retained` says
    arm: str = "recorded"  # who wrote the summary: the session itself, or a summarizer of the held-out set

    @property
    def agrees(self) -> bool:
        return self.kept == self.graded


def summary_text(label: dict, labels: Path, recorded: dict[str, list]) -> str:
    """The labelled summary: a stored one (`arm`: tests/data/heldout_summaries/ARM--CASE--N.md) or the case's own
    recorded summary N."""
    if "arm" in label:
        name = f"{label['arm']}--{label['case']}--{label['summary']}.md"
        return (labels.parent / "heldout_summaries" / name).read_text()
    return recorded[label["case"]][label["summary"] - 1].summary


def graded_pairs(labels: Path, cases_dir: Path) -> list[Pair]:
    pairs = tomllib.loads(labels.read_text())["pair"]
    cases = {c.id: c for c in discover(cases_dir) if c.id in {p["case"] for p in pairs}}
    recorded = {cid: recorded_points(case.session) for cid, case in cases.items()}
    out = []
    for label in pairs:
        probe = next(p for p in cases[label["case"]].probes if p.id == label["probe"])
        summary = Haystack(summary_text(label, labels, recorded))
        out.append(Pair(label["case"], label["summary"], label["probe"], label["kept"], label["reason"],
                        probe.at == f"compaction:{label['summary']}",
                        all(any(contains(summary, a) for a in item) for item in probe.all),
                        retained(ContextText(Haystack(""), summary), probe).passed, label.get("arm", "recorded")))
    return out


def share(pairs: list[Pair]) -> str:
    agree = sum(p.agrees for p in pairs)
    return f"{agree}/{len(pairs)} ({agree / len(pairs):.1%})" if pairs else "no pairs"


def report(name: str, pairs: list[Pair]) -> list[str]:
    lines = [f"{name}: {len(pairs)} labelled pairs ({sum(p.kept for p in pairs)} kept by the reader); "
             f"agreement {share(pairs)}",
             f"  at the probe's own point: {share([p for p in pairs if p.own_point])}",
             f"  every fact's words in the summary: {share([p for p in pairs if p.words_present])}"]
    for arm in sorted({p.arm for p in pairs}) if len({p.arm for p in pairs}) > 1 else ():
        lines.append(f"  {arm}: {share([p for p in pairs if p.arm == arm])}")
    for p in pairs:
        if not p.agrees:
            verdict = "reader kept, grade lost" if p.kept else "reader lost, grade kept"
            lines.append(f"- {p.arm} {p.case} summary {p.summary} {p.probe}: {verdict}. {p.reason}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", nargs="+", default=[str(path) for path in LABELS])
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    args = parser.parse_args(argv)
    for labels in map(Path, args.labels):
        print("\n".join(report(labels.name, graded_pairs(labels, Path(args.cases_dir)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
