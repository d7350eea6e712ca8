"""tools/answer_recall.py: the recall of the builtin answerer's ranking, unit and message level."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from harness.cases.schema import Probe
from harness.models.base import ChatMessage, ModelRequest
from harness.models.builtin.context import ContextCache
from harness.models.builtin.question import ask_of, question_words
from harness.models.builtin.scoring import score_units

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("answer_recall", ROOT / "tools" / "answer_recall.py")
recall = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recall)

QUESTION = "Which port does the staging gateway listen on?"


def _ranked(messages: list[ChatMessage]):
    request = ModelRequest("builtin", None, (*messages, ChatMessage("user", f"Question: {QUESTION}")), 200)
    context = ContextCache().get(request)
    return context, score_units(context, question_words(QUESTION), ask_of(QUESTION))


def test_a_fact_split_over_two_messages_is_held_only_by_several():
    context, scored = _ranked([
        ChatMessage("user", "Set up the staging gateway."),
        ChatMessage("assistant", "The staging gateway config lives in gateway/staging.toml."),
        ChatMessage("assistant", "Unrelated: the docs build is green."),
        ChatMessage("assistant", "It will listen on port 8443 behind the load balancer."),
    ])
    probe = Probe("p", "recall", QUESTION, (("staging.toml",), ("8443",)))
    units, messages = recall.probe_recall(context, scored, probe)
    assert not units[1] and units[3]  # each message holds one item: no single unit holds both
    assert not messages[1] and messages[3]


def test_a_fact_nowhere_in_the_context_is_held_at_no_k():
    context, scored = _ranked([ChatMessage("user", "The staging gateway listens on port 8443.")])
    probe = Probe("p", "recall", QUESTION, (("9090",),))
    units, messages = recall.probe_recall(context, scored, probe)
    assert not any(units.values()) and not any(messages.values())


def test_a_pool_with_no_case_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "cases").mkdir()
    assert recall.main(["--pool", "real", "--cases-dir", str(tmp_path / "cases")]) == 2
    assert "no case of pool 'real'" in capsys.readouterr().err


def test_the_real_pool_counts_are_bounded_and_grow_with_k():
    cases = [c for c in recall.discover(ROOT / "cases") if c.id == "real-apollo-bd"]
    totals = recall.measure(cases)
    units, messages = list(totals["units"].values()), list(totals["messages"].values())
    assert totals["probes"] == sum(len(c.probes) for c in cases)
    assert units == sorted(units) and messages == sorted(messages)
    assert 0 < units[-1] <= totals["probes"] and messages[-1] <= totals["probes"]
