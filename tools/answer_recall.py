"""How far the builtin answerer's ranking is from its answers: recall@K on the full history of a pool's probes.

    .venv/bin/python tools/answer_recall.py [--pool real] [--cases-dir cases] [--json]

For every probe, the full-history request `run` grades (`full` at the probe's point) is analysed the way the
builtin answerer reads it (context units, scores). A probe counts at K when the text of the K best-scored units
(unit level) or of the K best-scored messages (message level, a message scored by its best unit) holds every
expected item (`none` is not checked: a reader of the K units could still leave the old value out). Beside it:
how many the answerer's own short answer passes. The answerer cannot pass more probes than a reader of its
best units could, so the unit curve bounds what better answer assembly alone can win; the message curve, what
reading whole messages could.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cases import discover  # noqa: E402
from harness.cases.draft_check import point_end  # noqa: E402
from harness.models.builtin import BuiltinClient  # noqa: E402
from harness.models.builtin.context import ContextCache  # noqa: E402
from harness.models.builtin.question import ask_of, question_words  # noqa: E402
from harness.models.builtin.scoring import score_units  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.probes import Condition, answer_request, match  # noqa: E402

UNIT_KS = (1, 3, 10, 50)
MESSAGE_KS = (1, 3, 10)


def probe_recall(context, scored, probe) -> tuple[dict[int, bool], dict[int, bool]]:
    """(unit level, message level): K -> the K best hold every expected item."""
    def holds(text: str) -> bool:
        return match(text, probe, check_none=False, check_regex=False).passed

    units = {k: holds("\n".join(context.units[p] for _, p in scored[:k])) for k in UNIT_KS}
    best: dict[tuple[int, bool], float] = {}
    for score, position in scored:
        key = (context.messages[position], context.said[position])
        best[key] = max(best.get(key, 0.0), score)
    order = sorted(best, key=lambda key: (-best[key], -key[0]))
    texts = ["\n".join(context.units[p] for p in context.by_message[m] if context.said[p] == said)
             for m, said in order[:max(MESSAGE_KS)]]
    messages = {k: holds("\n".join(texts[:k])) for k in MESSAGE_KS}
    return units, messages


def measure(cases) -> dict:
    client, contexts = BuiltinClient(), ContextCache()
    totals = {"probes": 0, "answer": 0, "units": dict.fromkeys(UNIT_KS, 0), "messages": dict.fromkeys(MESSAGE_KS, 0)}
    for case in cases:
        session = case.session
        for probe in case.probes:
            end = point_end(session, probe.at)
            if end is None:
                continue
            condition = Condition("full", session.system, tuple(session.messages[:end]), None)
            request = answer_request(condition, probe, "builtin")
            context = contexts.get(request)
            scored = score_units(context, question_words(probe.question), ask_of(probe.question))
            units, messages = probe_recall(context, scored, probe)
            totals["probes"] += 1
            totals["answer"] += match(client.complete(request).text, probe).passed
            for k, ok in units.items():
                totals["units"][k] += ok
            for k, ok in messages.items():
                totals["messages"][k] += ok
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", default="real")
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        cases = [c for c in discover(args.cases_dir) if c.pool == args.pool]
        if not cases:
            raise HarnessError(f"no case of pool {args.pool!r} under {args.cases_dir}")
        totals = measure(cases)  # reads each case's session: a malformed one is named here
    except HarnessError as error:
        print(error, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(totals))
        return 0
    n = totals["probes"]
    print(f"{n} probes of pool {args.pool}, full history; the builtin's answer passes {totals['answer']}")
    print("best units hold the facts:    " + ", ".join(f"top {k}: {v}" for k, v in totals["units"].items()))
    print("best messages hold the facts: " + ", ".join(f"top {k}: {v}" for k, v in totals["messages"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
