"""Compaction policies: the interface (`base`), the built-in policies, and the names that select them."""

from harness.policy.base import (ContextView, ModelSummary, Plan, Policy, PolicyConfig, RecordedSummary, SendPoint,
                                 Tail)
from harness.policy.registry import BUILTIN, Registry, make_policy, policy_names, register

__all__ = ["BUILTIN", "ContextView", "ModelSummary", "Plan", "Policy", "PolicyConfig", "RecordedSummary",
           "Registry", "SendPoint", "Tail", "make_policy", "policy_names", "register"]
