"""`retained` against a careful reading of summaries (tools/statement_agreement.py): the real pool's own summaries
(tests/data/statement_labels.toml) and a held-out set of the builtin's and line-picker's summaries at the same
points (tests/data/statement_labels_heldout.toml, labelled before the grade ran on them). Every disagreement is listed
here and in docs/evaluation.md with its reason: a change to the grade that moves any of them must say so in both."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("statement_agreement", ROOT / "tools" / "statement_agreement.py")
agreement = sys.modules["statement_agreement"] = importlib.util.module_from_spec(_spec)  # for its dataclass
_spec.loader.exec_module(agreement)

ANCHORS = "anchors: the summary names the subject in words the probe's anchors do not list"
TOKEN = "token: the referent stands only inside the fact's own token (a path's folder, a name's own words)"
SIBLING = "sibling: the referent stands in another bullet, line or table row, above or beside the fact"
OTHER = "other: the words stand beside the referent, but the reader finds them said of another thing or moment"
NO_REFERENT = "no referent: the statement names nothing the question asks about ('Pushed.', 'that')"

# (case, summary, probe): the cause (docs/evaluation.md, "Agreement with a careful reader")
RECORDED = {
    # the repository's path only as the start of file paths; a child bullet's "guide" binds it (word forms)
    ("real-agentstuff-22", 1, "repo-path"): TOKEN,
    ("real-chkit-fa", 1, "unknown-flags"): TOKEN,  # `UnknownFlagError` holds its own anchor
    ("real-entireio-432b", 2, "test-assumption"): OTHER,
    ("real-entireio-432b", 2, "in-flight-c1"): ANCHORS,  # "was being updated"
    ("real-entireio-432b", 2, "plan-doc"): ANCHORS,  # "design", not "design doc"
    ("real-entireio-720c", 1, "merge-by-user"): NO_REFERENT,  # "I'll do that manually"
    ("real-entireio-720c", 1, "skipped-comment"): ANCHORS,  # "acceptable as-is"
    ("real-entireio-cd95", 3, "store-in-metadata"): OTHER,
    ("real-entireio-cd95", 2, "in-flight-c1"): OTHER,
    ("real-entireio-cd95", 3, "remaining-c1"): OTHER,
    ("real-entireio-cd95", 2, "checkpoint-id-format"): OTHER,
    ("real-entireio-cd95", 3, "count-fix"): OTHER,
    ("real-entireio-f5da", 1, "branch-view"): ANCHORS,  # "Main branch: ... (limit to 20)"
    ("real-entireio-f5da", 2, "commit"): SIBLING,
    ("real-fittoday-63", 2, "c1-translation"): ANCHORS,
    ("real-fittoday-63", 2, "c1-sourcekit"): OTHER,
    ("real-fittoday-63", 2, "c2-translation"): ANCHORS,
}

# (arm, case, summary, probe): the cause
HELDOUT = {
    ("builtin", "real-agentstuff-22", 1, "next-step"): OTHER,
    ("builtin", "real-apollo-bd", 1, "migration-file"): TOKEN,
    ("builtin", "real-apollo-bd", 1, "pii-kept"): OTHER,
    ("builtin", "real-chkit-fa", 1, "in-flight"): ANCHORS,  # "Last step started before this summary"
    ("builtin", "real-entireio-432b", 1, "third-arg"): NO_REFERENT,  # "the third argument here"
    ("builtin", "real-entireio-432b", 1, "pr-author"): TOKEN,  # `pr_author="khaong"`
    ("builtin", "real-entireio-432b", 1, "in-flight-c1"): OTHER,
    ("builtin", "real-entireio-432b", 2, "plan-doc"): TOKEN,
    ("builtin", "real-entireio-432b", 2, "task2-fix"): OTHER,
    ("builtin", "real-entireio-432b", 2, "worktree-test"): TOKEN,
    ("builtin", "real-entireio-720c", 1, "merge-by-user"): NO_REFERENT,
    ("builtin", "real-entireio-8ea9", 1, "from-main"): OTHER,  # `none`: the branch they were on, not the start
    ("builtin", "real-entireio-cd95", 1, "webfetch-404"): OTHER,
    ("builtin", "real-entireio-cd95", 2, "countlines-clash"): ANCHORS,  # "conflict"
    ("builtin", "real-entireio-cd95", 2, "countlines-rename"): SIBLING,
    ("builtin", "real-entireio-cd95", 2, "goconst"): OTHER,
    ("builtin", "real-entireio-cd95", 2, "checkpoint-id-format"): OTHER,
    ("builtin", "real-entireio-cd95", 2, "latest-checkpoint"): OTHER,
    ("builtin", "real-entireio-cd95", 3, "commit-1887972"): OTHER,
    ("builtin", "real-entireio-cd95", 3, "in-flight-c3"): ANCHORS,
    ("builtin", "real-entireio-f5da", 1, "nolint"): OTHER,  # "was removed" still counts as present for `all`
    ("builtin", "real-entireio-f5da", 2, "checkpoint-limit"): ANCHORS,  # "Limit is now 100"
    ("builtin", "real-entireio-f5da", 2, "pushed"): NO_REFERENT,
    ("builtin", "real-fittoday-4a", 1, "mock"): TOKEN,
    ("builtin", "real-fittoday-4a", 1, "feed-entry"): OTHER,
    ("builtin", "real-fittoday-63", 1, "c1-identity"): ANCHORS,
    ("builtin", "real-fittoday-63", 1, "c1-plan-file"): TOKEN,
    ("builtin", "real-fittoday-63", 2, "c2-charts"): TOKEN,  # "ActivityStatsView"
    ("builtin", "real-fittoday-63", 2, "c2-docs"): TOKEN,
    ("builtin", "real-fittoday-63", 2, "c2-cms-endpoint"): OTHER,
    ("line-picker", "real-agentstuff-22", 1, "last-written"): ANCHORS,  # "security.md를 ... 마지막 가이드"
    ("line-picker", "real-agentstuff-22", 1, "next-step"): OTHER,
    ("line-picker", "real-apollo-bd", 1, "pii-sanitiser"): SIBLING,  # a second header row inside one table
    ("line-picker", "real-chkit-fa", 1, "pending-phase"): ANCHORS,  # "before updating plugin packages"
    ("line-picker", "real-entireio-432b", 1, "reset-task"): OTHER,
    ("line-picker", "real-entireio-720c", 1, "merge-by-user"): NO_REFERENT,
    ("line-picker", "real-entireio-8ea9", 1, "from-main"): OTHER,
    ("line-picker", "real-entireio-cd95", 1, "attribution-key"): SIBLING,  # the request above its JSON example
    ("line-picker", "real-entireio-cd95", 2, "countlines-clash"): ANCHORS,
    ("line-picker", "real-entireio-f5da", 1, "follow-up-issue"): SIBLING,
    ("line-picker", "real-entireio-f5da", 2, "consecutive-limit"): ANCHORS,
    ("line-picker", "real-entireio-f5da", 2, "checkpoint-limit"): ANCHORS,
    ("line-picker", "real-entireio-f5da", 2, "pushed"): NO_REFERENT,
    ("line-picker", "real-fittoday-63", 1, "c1-where"): ANCHORS,  # "aba de personal"
}


def _differ(pairs, key):
    return {key(p) for p in pairs if not p.agrees}


def test_the_grade_agrees_with_the_reader_on_the_recorded_summaries_except_where_listed():
    pairs = agreement.graded_pairs(ROOT / "tests/data/statement_labels.toml", ROOT / "cases")
    assert len(pairs) == 284 and sum(p.kept for p in pairs) == 190
    differ = _differ(pairs, lambda p: (p.case, p.summary, p.probe))
    assert differ == set(RECORDED), (sorted(differ - set(RECORDED)), sorted(set(RECORDED) - differ))
    own = [p for p in pairs if p.own_point]
    assert (len(own), sum(p.agrees for p in own)) == (202, 193)


def test_the_grade_agrees_with_the_reader_on_the_held_out_summaries_except_where_listed():
    pairs = agreement.graded_pairs(ROOT / "tests/data/statement_labels_heldout.toml", ROOT / "cases")
    assert len(pairs) == 404 and sum(p.kept for p in pairs) == 275 and all(p.own_point for p in pairs)
    differ = _differ(pairs, lambda p: (p.arm, p.case, p.summary, p.probe))
    assert differ == set(HELDOUT), (sorted(differ - set(HELDOUT)), sorted(set(HELDOUT) - differ))
    assert sum(p.agrees for p in pairs) == 360
