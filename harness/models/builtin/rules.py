"""Rules of the builtin summarizer that a leave-one-repository-out study can switch off one at a time (issue 31).

A rule counts only by its figure on the repositories it was not written from, so each names the repository
(and session) whose transcript motivated it; `tools/holdout.py` runs the real pool with and without it and
reports both figures. HARNESS_BUILTIN_RULES_OFF (names, comma-separated) switches rules off; it is read for
every summary, so one process can run the same pool both ways. Rules not listed here are always on."""

from __future__ import annotations

import os
from dataclasses import dataclass

OFF_VARIABLE = "HARNESS_BUILTIN_RULES_OFF"


@dataclass(frozen=True)
class Rule:
    name: str
    origin: str | None  # the repository whose session motivated the rule (None: no session of the pool did)
    source: str  # what the rule was written from
    what: str


_ISSUE = "issue 31's account of sessions outside the pool, and a hand-built session"
RULES = {rule.name: rule for rule in (
    Rule("previous-next-as-history", "entireio/cli", _ISSUE + "; made to drop the planned steps after "
         "real-entireio-cd95's second point lost an error to their lines",
         "once newer messages follow an earlier summary, its open tasks are history and its planned steps dropped"),
    Rule("refuted-as-history", None, _ISSUE,
         "a decision or finding a later sentence calls wrong is stated as superseded, the sentence kept"),
    Rule("declined-with-reason", "entireio/cli", "the rejection texts of the pool's entireio/cli sessions",
         "a declined call keeps the user's words typed with it or in the next turn, as a constraint"),
    Rule("lead-sentence", "entireio/cli", "the builtin's losses to the line extracts on the pool's entireio/cli "
         "sessions", "the first sentence of every reply, not only of replies without a step, is progress"),
    Rule("user-words-last", None, "issue 42 (a user's own words carry the goal and the constraints), and the "
         "generated long-billing-migration, whose goal the first form of lead-sentence pushed out of the budget",
         "when the summary is over budget, the user's requests and rules are dropped after the agent's items"),
)}


def switched_off() -> frozenset[str]:
    return frozenset(n.strip() for n in os.environ.get(OFF_VARIABLE, "").split(",") if n.strip())


def enabled(name: str) -> bool:
    return name not in switched_off()
