"""How often `retained` agrees with a careful reading of the real pool's own summaries (issue 42).

    .venv/bin/python tools/statement_agreement.py [--labels tests/data/statement_labels.toml] [--cases-dir cases]

Grades every labelled (probe, recorded summary) pair with `retained` (the summary alone, as the summary block is
graded at a real compaction point) and prints the agreement with the reader's `kept`, overall, on the pairs at
the probe's own point and on those where every fact's words occur in the summary, then every disagreement with
the reader's reason. Offline, a few seconds.
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


@dataclass(frozen=True)
class Pair:
    case: str
    summary: int  # the recorded summary's number in its session
    probe: str
    kept: bool  # the reader's judgement
    reason: str
    own_point: bool  # the summary in effect at the probe's own point (the one the harness grades it against)
    words_present: bool  # every `all` item has an alternative somewhere in the summary
    graded: bool  # what `retained` says

    @property
    def agrees(self) -> bool:
        return self.kept == self.graded


def graded_pairs(labels: Path, cases_dir: Path) -> list[Pair]:
    pairs = tomllib.loads(labels.read_text())["pair"]
    cases = {c.id: c for c in discover(cases_dir) if c.id in {p["case"] for p in pairs}}
    points = {cid: recorded_points(case.session) for cid, case in cases.items()}
    out = []
    for label in pairs:
        probe = next(p for p in cases[label["case"]].probes if p.id == label["probe"])
        summary = Haystack(points[label["case"]][label["summary"] - 1].summary)
        out.append(Pair(label["case"], label["summary"], label["probe"], label["kept"], label["reason"],
                        probe.at == f"compaction:{label['summary']}",
                        all(any(contains(summary, a) for a in item) for item in probe.all),
                        retained(ContextText(Haystack(""), summary), probe).passed))
    return out


def _share(pairs: list[Pair]) -> str:
    agree = sum(p.agrees for p in pairs)
    return f"{agree}/{len(pairs)} ({agree / len(pairs):.1%})" if pairs else "no pairs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=str(ROOT / "tests/data/statement_labels.toml"))
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    args = parser.parse_args(argv)
    pairs = graded_pairs(Path(args.labels), Path(args.cases_dir))
    print(f"{len(pairs)} labelled pairs ({sum(p.kept for p in pairs)} kept by the reader); agreement {_share(pairs)}")
    print(f"  at the probe's own point: {_share([p for p in pairs if p.own_point])}")
    print(f"  every fact's words in the summary: {_share([p for p in pairs if p.words_present])}")
    for p in pairs:
        if not p.agrees:
            verdict = "reader kept, grade lost" if p.kept else "reader lost, grade kept"
            print(f"- {p.case} summary {p.summary} {p.probe}: {verdict}. {p.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
