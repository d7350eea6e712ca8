"""The headline over summary-testing probes, the groups beside it, the agreement figure and judged means."""

from harness.results.headline import agreement, headline, judged, never_compacted


def probe(pid, kind, compacted, full, floor, before=1, retained=None, judged_score=None):
    conditions = {c: {"answered": v} for c, v in (("compacted", compacted), ("full", full), ("floor", floor))}
    if retained is not None:
        for c, v in zip(("compacted", "full", "floor"), retained):
            conditions[c]["retained"] = v
    if judged_score is not None:
        conditions["compacted"]["judged"] = judged_score
    return {"id": pid, "kind": kind, "compactions_before": before, "conditions": conditions}


RECORDS = [
    {"case": "a", "status": "ok", "events": [{}], "probes": [
        probe("p1", "recall", True, True, False, retained=(True, True, False), judged_score=5),
        probe("p2", "recall", False, True, False, retained=(True, True, False), judged_score=1),
        probe("p3", "goal", True, True, True),  # the floor answers it
        probe("p4", "goal", False, False, False)]},  # invalid
    {"case": "b", "status": "ok", "events": [], "context_whole": True, "probes": [
        probe("q1", "recall", True, True, True, before=0)]},
]
ROWS = [(r, p) for r in RECORDS for p in r["probes"]]


def test_the_headline_counts_only_summary_testing_probes():
    h = headline(ROWS, "answered")
    assert h["groups"] == {"tests_summary": 2, "floor_answers": 1, "no_compaction": 1, "unreached": 0, "invalid": 1}
    assert h["tests_summary"]["passed"] == 1 and h["tests_summary"]["total"] == 2 and h["tests_summary"]["cases"] == 1
    assert h["tests_summary"]["cluster95"] == [0.5, 0.5]  # one case: resampling cannot move it
    assert h["by_kind"]["recall"]["total"] == 2 and "goal" not in h["by_kind"]
    assert h["invalid"] == {"a/p4": "fails on the full history"}
    assert h["floor_answers"]["floor"]["passed"] == 1
    assert headline(ROWS, "answered", cluster=False)["tests_summary"]["cluster95"] is None


def test_agreement_lists_the_disagreements():
    a = agreement(ROWS)
    assert a["passed"] == 1 and a["total"] == 2
    assert a["disagreements"] == [{"probe": "a/p2", "kind": "recall", "answered": False, "retained": True}]


def test_judged_means_and_cases_that_never_compact():
    j = judged(ROWS)
    assert j["tests_summary"]["compacted"] == 3.0 and j["errors"] == 0
    assert never_compacted(RECORDS) == {"b": {"compactions": 0, "context_whole": True}}
    assert judged([(RECORDS[1], RECORDS[1]["probes"][0])]) is None


def test_unreached_points_are_a_group_apart_from_invalid_probes_counted_by_pool():
    record = {"case": "r", "pool": "real", "status": "ok", "events": [{}], "probes": [
        {"id": "u1", "kind": "goal", "at": "compaction:2", "conditions": None},
        {"id": "u2", "kind": "goal", "at": "compaction:2", "conditions": None},
        {"id": "f1", "kind": "goal", "at": "end", "conditions": None, "failure": {"kind": "timeout"}}]}
    rows = ROWS + [(record, p) for p in record["probes"]]
    h = headline(rows, "answered")
    assert h["groups"]["unreached"] == 2 and h["unreached_by_pool"] == {"real": 2}
    assert h["groups"]["invalid"] == 2  # p4 fails on the full history; f1 was lost to a failed request
    assert "r/u1" not in h["invalid"] and "r/f1" in h["invalid"]
