"""The terminal's summary reads in a minute: the lost probes that matter most (at most 10, two lines each, cut
to the console's width) after their count and where the rest are; the never-compacting cases on one line."""

from __future__ import annotations

import io

from rich.console import Console

from harness.render.lost import LostProbe, most_important
from harness.render.terminal import LOST_SHOWN, print_lost


def lost(case: str, probe: str, kind: str) -> LostProbe:
    return LostProbe(case, probe, kind, "end", f"What about {probe}? " * 8, ("x" * 20,), "an answer " * 30,
                     ("x" * 20,), (), None)


LOST = ([lost("big", f"p{i}", "recall") for i in range(30)] + [lost("big", "g", "goal")]
        + [lost(f"case{n}", f"q{n}", kind) for n, kind in enumerate(("artifact", "constraint", "error"))])


def test_the_most_important_take_the_cases_in_turn_goals_first():
    picked = most_important(LOST, 10)
    assert [p.key for p in picked[:4]] == ["big/g", "case0/q0", "case1/q1", "case2/q2"]
    assert len(picked) == 10 and len({p.key for p in picked}) == 10
    assert most_important(LOST[:2], 10) == sorted(LOST[:2], key=lambda p: p.probe)  # fewer than the limit: all


def test_at_most_ten_lost_probes_two_lines_each_within_the_width():
    out = io.StringIO()
    print_lost(LOST, "answered", Console(file=out, width=80), "results/x/report.md")
    head, rest = out.getvalue().split("\n- ", 1)
    header, lines = " ".join(head.split()), ("- " + rest).splitlines()  # the header wraps, the probes do not
    assert header == (f"lost probes (answered; the full history passes them): {len(LOST)}; the {LOST_SHOWN} "
                      f"that matter most, all in results/x/report.md")
    assert len(lines) == 2 * LOST_SHOWN and all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("- big/g (goal, at end): What about g?") and lines[0].endswith("…")
    assert lines[1].startswith("    expected xxx") and "missing" in lines[1]


def test_a_few_lost_probes_are_all_shown():
    out = io.StringIO()
    print_lost(LOST[-3:], "retained", Console(file=out, width=200), "report.md")
    lines = out.getvalue().splitlines()
    assert lines[0].endswith(": 3; also in report.md") and len(lines) == 7
