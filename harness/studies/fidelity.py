"""Peer fidelity: a harness peer (harness/policy/peers/) beside the real runtime it re-implements, on the same
case with the same summarizer: where each compacts (the first case message after the compaction) and where
its verbatim tail starts. A peer that differs is either wrong about the pinned version or says in its
docstring why it differs (docs/runtimes.md keeps the table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.cases.schema import Case
from harness.compaction import Compactor
from harness.compaction.summarizer import ModelSummarizer
from harness.models.builtin import BuiltinClient
from harness.policy import make_policy
from harness.run.config import RunConfig, policy_config
from harness.runtimes.driver import drive
from harness.runtimes.install import Installed

# the harness peer of each runtime (codex-remote: Codex's trigger and kept user messages, whoever summarizes)
PEERS = {"pi": "pi", "codex": "codex", "codex-remote": "codex", "opencode": "opencode", "gemini-cli": "gemini-cli",
         "claude-code": "claude-code"}


@dataclass(frozen=True)
class Points:
    positions: tuple[int, ...]  # the first message after each compaction
    tails: tuple[int, ...]  # the first message kept verbatim after each


@dataclass(frozen=True)
class Fidelity:
    case: str
    runtime: str
    runtime_points: Points
    peer_points: Points
    failure: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "runtime": self.runtime, "failure": self.failure,
                "runtime_points": {"positions": list(self.runtime_points.positions),
                                   "tails": list(self.runtime_points.tails)},
                "peer_points": {"positions": list(self.peer_points.positions), "tails": list(self.peer_points.tails)}}


def peer_points(case: Case, peer: str) -> Points:
    summarizer = ModelSummarizer(BuiltinClient(), "builtin")
    config = policy_config(case, RunConfig(policy=peer))
    replay = Compactor(case.session, make_policy(peer, config), summarizer).run()
    return Points(tuple(e.send_index for e in replay.events), tuple(e.tail_start for e in replay.events))


def runtime_points(case: Case, runtime: Installed, log_dir) -> tuple[Points, str | None]:
    done = drive(case, runtime.adapter, runtime.binary, runtime.version, BuiltinClient(), log_dir)
    found = done.compactions
    return Points(tuple(c.position for c in found), tuple(c.covers for c in found)), done.failure


def fidelity(case: Case, runtime: Installed, log_dir) -> Fidelity:
    points, failure = runtime_points(case, runtime, log_dir)
    return Fidelity(case.id, runtime.adapter.pin, points, peer_points(case, PEERS[runtime.adapter.name]), failure)
