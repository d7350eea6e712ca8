"""Does `retained` grade what a summary says, not how it is laid out or how long it runs? Over the real pool's
recorded summaries (each probe at its compaction point), `retained` for each summary as written, joined into one
`; ` line, and padded with a value dump of its head to 1.7x its size: graded as written, and graded cut to its
budget (its own size) as the harness grades a summary over its budget. Offline, a few seconds:

    .venv/bin/python tools/layout_and_padding.py [--cases-dir cases]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.cases import discover  # noqa: E402
from harness.compaction.controls import value_dump  # noqa: E402
from harness.compaction.summarizer import SummaryResult, within_budget  # noqa: E402
from harness.matching import Haystack  # noqa: E402
from harness.metrics import mcnemar_exact  # noqa: E402
from harness.policy.recorded import recorded_points  # noqa: E402
from harness.probes import ContextText, evidence_text, retained  # noqa: E402
from harness.tokens import counter  # noqa: E402

PADDED = 1.7


def variants(summary: str, head: list, tokens) -> dict[str, str]:
    size = tokens.count_text(summary)
    docs = [(m.role in ("user", "assistant"), evidence_text(m)) for m in head]
    padded = summary + "\n" + value_dump(docs, int((PADDED - 1) * size), tokens)
    return {"as written": summary, "one line": "; ".join(line.strip() for line in summary.splitlines() if line.strip()),
            "padded": padded, "padded, graded at the budget": within_budget(SummaryResult(padded), size, tokens).text}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases-dir", default="cases")
    args = parser.parse_args()
    tokens, passes = counter("o200k"), {}
    for case in (c for c in discover(args.cases_dir) if c.pool == "real"):
        points, made = recorded_points(case.session), {}
        for probe in case.probes:
            number = int(probe.at.split(":")[1])
            point = points[number - 1]
            if number not in made:
                made[number] = variants(point.summary, list(case.session.messages[:point.position]), tokens)
            for name, text in made[number].items():
                passes.setdefault(name, []).append(retained(ContextText(Haystack(""), Haystack(text)), probe).passed)
    written = passes["as written"]
    print(f"{len(written)} probes; retained as written: {sum(written)}")
    for name, found in passes.items():
        if name != "as written":
            only_written = sum(a and not b for a, b in zip(written, found))
            only_this = sum(b and not a for a, b in zip(written, found))
            print(f"{name}: {sum(found)} (only as written {only_written}, only {name} {only_this}, "
                  f"McNemar p = {mcnemar_exact(only_written, only_this):.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
