"""Compaction policies. Importing the package registers every built-in policy by name."""

from harness.policy import default  # noqa: F401
from harness.policy import peers  # noqa: F401
from harness.policy import recorded  # noqa: F401
from harness.policy.base import (ContextView, Plan, Policy, PolicyConfig, SendPoint, make_policy,
                                 policy_names, register)

__all__ = ["ContextView", "Plan", "Policy", "PolicyConfig", "SendPoint", "make_policy", "policy_names",
           "register"]
