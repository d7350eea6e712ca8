"""Policy what-ifs without a model: replay with the placeholder summarizer and list the risks."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.cases import load_case
from harness.compaction import RISK_KINDS, Compactor, Replay
from harness.errors import HarnessError
from harness.policy import PolicyConfig, make_policy
from harness.run.config import settings_for
from harness.session import Session, read_session
from harness.compaction.summarizer import PlaceholderSummarizer, Summarizer
from harness.tokens import MessageTokens, counter


@dataclass(frozen=True)
class Target:
    """A session to simulate, with the window and max output its case assumes (if any)."""

    name: str
    session: Session
    context_window: int | None = None
    max_output_tokens: int | None = None
    settings: tuple[tuple[str, Any], ...] = ()  # the case's [policy] table


@dataclass
class Simulation:
    target: str
    policy: str
    estimator: str
    config: PolicyConfig
    replay: Replay
    elapsed_s: float
    messages: int = 0
    total_tokens_true: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "policy": self.policy,
            "estimator": self.estimator,
            "configuration": asdict(self.config),
            "messages": self.messages,
            "sends": self.replay.sends,
            "elapsed_s": round(self.elapsed_s, 4),
            "events": [asdict(e) for e in self.replay.events],
            "risks": [asdict(r) for r in self.replay.risks],
            "risk_counts": self.replay.risk_counts(),
        }


@dataclass
class Simulator:
    """Shares per-message token counts between the replays of one target (sweeps)."""

    target: Target
    estimator: str = "chars4"
    tokenizer: str = "o200k"
    summarizer: Summarizer = field(default_factory=PlaceholderSummarizer)

    def __post_init__(self):
        messages = self.target.session.messages
        self.estimate = MessageTokens(counter(self.estimator), messages)
        self.true = MessageTokens(counter(self.tokenizer), messages)

    def run(self, policy_name: str, config: PolicyConfig) -> Simulation:
        started = time.perf_counter()
        replay = Compactor(self.target.session, make_policy(policy_name, config), self.summarizer,
                           estimate=self.estimate, true=self.true).run()
        elapsed = time.perf_counter() - started
        return Simulation(self.target.name, policy_name, self.estimator, config, replay, elapsed,
                          len(self.target.session.messages))

    def sweep(self, policy_name: str, base: PolicyConfig, windows: list[int], reserves: list[int]) -> list[dict]:
        rows = []
        for window in windows:
            for reserve in reserves:
                if reserve >= window:
                    continue  # listed by skipped_combinations: a policy cannot run with no room below the reserve
                result = self.run(policy_name, base.with_settings(context_window=window, reserve_tokens=reserve))
                rows.append({"policy": policy_name, "context_window": window, "reserve_tokens": reserve,
                             "compactions": len(result.replay.events), **result.replay.risk_counts()})
        return rows


def skipped_combinations(windows: list[int], reserves: list[int]) -> list[dict[str, Any]]:
    """The window x reserve combinations a sweep cannot run (reserve >= window), each with its reason."""
    return [{"context_window": window, "reserve_tokens": reserve,
             "reason": f"reserve {reserve} >= window {window}: no room to trigger below the reserve"}
            for window in windows for reserve in reserves if reserve >= window]


def load_target(path: str | Path, cases_dir: str | Path = "cases") -> Target:
    """A session file, a case folder, or (as `run` takes it) the id of a case in `cases_dir`."""
    path = Path(path)
    if not path.exists() and (Path(cases_dir) / path).is_dir() and len(path.parts) == 1:
        path = Path(cases_dir) / path
    if path.is_dir():
        case = load_case(path)
        return Target(case.id, case.session, case.context_window, case.max_output_tokens,
                      tuple(case.settings.items()))
    if not path.exists():
        raise HarnessError(f"{path}: no such session file, case folder or case id in {cases_dir}")
    return Target(path.name, read_session(path))


def config_for(target: Target, settings: dict[str, Any]) -> PolicyConfig:
    """The case's window, max output and [policy] table, overridden by explicit settings (None: not given),
    built by the same function as a run's."""
    return settings_for(target.context_window, target.max_output_tokens, dict(target.settings), settings,
                        where=target.name)


def parse_int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise HarnessError(f"{option} takes comma-separated integers, not {text!r}") from None
    if not values:
        raise HarnessError(f"{option} needs at least one value")
    return values


__all__ = ["RISK_KINDS", "Simulation", "Simulator", "Target", "config_for", "load_target", "parse_int_list",
           "skipped_combinations"]
