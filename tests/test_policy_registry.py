"""The policy interface and its registry: declared hooks, names, and a registry that is a value."""

import pytest

from harness.errors import HarnessError
from harness.policy import BUILTIN, Plan, Policy, PolicyConfig, Tail, make_policy, policy_names, register
from harness.policy.external import ExternalPolicy
from harness.policy.recorded import at_recorded_points

CONFIG = PolicyConfig(context_window=100_000)


@pytest.mark.parametrize("name", policy_names())
def test_every_builtin_policy_derives_from_the_base(name):
    policy = make_policy(name, CONFIG)
    assert isinstance(policy, Policy) and policy.name == name


def test_external_and_recorded_points_policies_derive_from_the_base():
    assert issubclass(ExternalPolicy, Policy)
    assert isinstance(at_recorded_points(make_policy("pi", CONFIG)), Policy)


class Minimal(Policy):
    """Only the two required methods: every hook falls back to its declared no-op."""

    name = "minimal"

    def __init__(self, config: PolicyConfig):
        self.config = config

    def should_compact(self, send):
        return False

    def plan(self, view):
        return Plan(Tail(view.end, 0, 0, False))


def test_the_hooks_have_no_op_defaults():
    policy = Minimal(CONFIG)
    assert not policy.would_trigger(10**9) and not policy.prunes and policy.compaction_points == frozenset()
    assert policy.prune(None) == () and policy.forced_plans(None) == ()
    assert policy.begin(None, len, 0) is None and policy.folded(0, (), None, 0) is None and policy.end() is None


def test_a_policy_without_a_trigger_cannot_be_made():
    class NoTrigger(Policy):
        def plan(self, view):
            return Plan(Tail(view.end, 0, 0, False))

    with pytest.raises(TypeError):
        NoTrigger()


def test_register_returns_a_new_registry_and_leaves_the_builtins_alone():
    extended = register("minimal", Minimal)
    assert isinstance(extended.make("minimal", CONFIG), Minimal)
    assert "minimal" in extended.names() and "minimal" not in policy_names()
    assert BUILTIN.names() == policy_names()


def test_an_unknown_name_is_a_one_line_error():
    with pytest.raises(HarnessError, match="unknown policy 'nope': choose one of claude-code, codex, default"):
        make_policy("nope", CONFIG)
