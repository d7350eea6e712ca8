"""Leave one repository out (harness.studies.holdout, tools/holdout.py): per repository, in pool and held out,
over the probes the full history passes, with the rule's paired test and the builtin against the real summaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases import discover
from harness.errors import HarnessError
from harness.models.builtin.rules import OFF_VARIABLE, RULES, enabled
from harness.studies.holdout import WITH, WITHOUT, holdout_study, repository_of
from harness.studies.real import REAL

ROOT = Path(__file__).parents[1]


def _run(outcomes: dict[tuple[str, str, str], bool], full: frozenset[str] = frozenset()) -> dict:
    cases: dict[str, dict] = {}
    for (case, pid, kind), passed in outcomes.items():
        grades = lambda v: {"retained": v, "answered": v}  # noqa: E731
        record = cases.setdefault(case, {"case": case, "status": "ok", "probes": []})
        record["probes"].append({"id": pid, "kind": kind, "at": "compaction:1", "conditions": {
            "compacted": grades(passed), "full": grades(pid not in full), "floor": grades(False)}})
    return {"cases": {f"{c}#0": r for c, r in cases.items()}}


PROBES = [("a1", "x", "recall"), ("a1", "y", "update"), ("a2", "z", "update"), ("b1", "w", "goal"),
          ("b1", "bad", "recall")]
REPOS = {"a1": "own/a", "a2": "own/a", "b1": "own/b"}


def _runs() -> dict[str, dict]:
    real = dict.fromkeys(PROBES, True) | {("a2", "z", "update"): False}
    with_rule = dict.fromkeys(PROBES, True) | {("b1", "w", "goal"): False}
    without = dict.fromkeys(PROBES, False) | {("b1", "w", "goal"): True}
    invalid = frozenset({"bad"})
    return {REAL: _run(real, invalid), WITH: _run(with_rule, invalid), WITHOUT: _run(without, invalid)}


def test_each_repository_in_pool_and_held_out_count_what_the_full_history_passes():
    study = holdout_study(_runs(), REPOS, origins=frozenset({"own/a"}))
    by_name = {row["name"]: row for row in study["repositories"]}
    assert by_name["own/a"]["arms"] == {REAL: 2, WITH: 3, WITHOUT: 0}
    assert by_name["own/a"]["update"] == {"full": 2, REAL: 1, WITH: 2, WITHOUT: 0}
    assert by_name["own/b"]["full"] == 1 and by_name["own/b"]["arms"] == {REAL: 1, WITH: 0, WITHOUT: 1}
    assert study["in_pool"]["arms"] == {REAL: 3, WITH: 3, WITHOUT: 1}
    held = study["held_out"]  # only own/b: the rule was written from own/a, where it wins; held out it loses
    assert held["full"] == 1 and held["arms"] == {REAL: 1, WITH: 0, WITHOUT: 1}
    assert held["rule"]["only_a"] == 1 and held["rule"]["only_b"] == 0 and held["rule"]["p"] == 1.0
    assert held["rule"]["difference"][0] == -1.0
    assert study["in_pool"]["rule"]["only_b"] == 3 and study["in_pool"]["rule"]["p"] == pytest.approx(0.625)


def test_the_builtin_is_judged_against_the_strongest_control_arm_of_each_row():
    runs = _runs()
    runs["line-picker"] = _run(dict.fromkeys(PROBES, False) | {("a1", "x", "recall"): True}, frozenset({"bad"}))
    runs["last-lines"] = _run(dict.fromkeys(PROBES, False) | {("b1", "w", "goal"): True}, frozenset({"bad"}))
    study = holdout_study(runs, REPOS, origins=frozenset({"own/a"}))
    pool = study["in_pool"]["against_strongest"]  # a tie (1 each): the later name, alphabetically
    assert pool["control"] == "line-picker" and (pool["only_a"], pool["only_b"]) == (0, 2)
    held = study["held_out"]["against_strongest"]  # own/b: last-lines keeps its one probe, the builtin not
    assert held["control"] == "last-lines" and (held["only_a"], held["only_b"]) == (1, 0)
    assert _runs() and holdout_study(_runs(), REPOS)["in_pool"]["against_strongest"] is None


def test_a_rule_from_outside_the_pool_holds_the_whole_pool_out():
    study = holdout_study(_runs(), REPOS, origins=frozenset())
    assert study["held_out"]["arms"] == study["in_pool"]["arms"]


def test_a_case_without_a_repository_is_an_error():
    with pytest.raises(HarnessError, match="repository is unknown"):
        holdout_study(_runs(), {"a1": "own/a"}, origins=frozenset({"own/a"}))


def test_the_shipped_real_cases_name_their_repository():
    repos = {c.id: repository_of(c) for c in discover(ROOT / "cases") if c.pool == "real"}
    assert len(repos) == 10 and len(set(repos.values())) == 5
    assert repos["real-chkit-fa"] == "obsessiondb/chkit"


def test_rules_switch_off_by_name(monkeypatch):
    name = next(iter(RULES))
    assert enabled(name)
    monkeypatch.setenv(OFF_VARIABLE, f"other, {name}")
    assert not enabled(name)
