"""Policy names: the built-in policies by name, and `cmd:` for a policy run as a subprocess.

The table is built from the implementations here, so `base` (the interface) imports none of them. It is an
immutable value: `register` returns a new registry instead of changing a shared one.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from harness.errors import HarnessError
from harness.policy.base import Policy, PolicyConfig
from harness.policy.default import DefaultPolicy
from harness.policy.external import ExternalPolicy
from harness.policy.peers import (ClaudeCodePolicy, CodexPolicy, GeminiCliPolicy, OpencodePolicy, PiPolicy,
                                  Ratio20Policy, TruncatePolicy)
from harness.policy.recorded import RecordedPolicy

PolicyFactory = Callable[[PolicyConfig], Policy]
COMMAND_PREFIX = "cmd:"  # a policy run as a subprocess: cmd:"node adapter.js"


@dataclass(frozen=True)
class Registry:
    factories: Mapping[str, PolicyFactory]

    def register(self, name: str, factory: PolicyFactory) -> Registry:
        return Registry(MappingProxyType({**self.factories, name: factory}))

    def names(self) -> list[str]:
        return sorted(self.factories)

    def make(self, name: str, config: PolicyConfig) -> Policy:
        if name.startswith(COMMAND_PREFIX):
            return ExternalPolicy.from_command(name[len(COMMAND_PREFIX):], config)
        factory = self.factories.get(name)
        if factory is None:
            raise HarnessError(f"unknown policy {name!r}: choose one of {', '.join(self.names())}")
        return factory(config)


BUILTIN = Registry(MappingProxyType({
    "default": DefaultPolicy, "pi": PiPolicy, "opencode": OpencodePolicy, "codex": CodexPolicy,
    "claude-code": ClaudeCodePolicy, "gemini-cli": GeminiCliPolicy, "ratio-20": Ratio20Policy,
    "truncate": TruncatePolicy, "recorded": RecordedPolicy,
}))


def register(name: str, factory: PolicyFactory, registry: Registry = BUILTIN) -> Registry:
    """A registry that also knows `name` (for a policy defined outside the harness)."""
    return registry.register(name, factory)


def policy_names(registry: Registry = BUILTIN) -> list[str]:
    return registry.names()


def make_policy(name: str, config: PolicyConfig, registry: Registry = BUILTIN) -> Policy:
    return registry.make(name, config)
