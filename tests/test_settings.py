"""One settings builder for `run` and `simulate`: a case's [policy] table counts in both (issue 12, bug 1)."""

import json

import pytest

from harness.cases import load_case
from harness.cli import main
from harness.errors import HarnessError
from harness.run.config import RunConfig, policy_config, settings_for

from test_runner import make_case


def case_with_reserve(root, reserve: int):
    folder = make_case(root, "small")
    toml = folder / "case.toml"
    toml.write_text(toml.read_text().replace("reserve_tokens = 400", f"reserve_tokens = {reserve}"))
    return folder


def test_simulate_applies_the_case_policy_table(tmp_path, capsys):
    folder = case_with_reserve(tmp_path, 10)
    assert main(["simulate", str(folder), "--json"]) == 0
    simulated = json.loads(capsys.readouterr().out)["configuration"]
    assert simulated["reserve_tokens"] == 10  # was 16384: simulate ignored the [policy] table


def test_run_and_simulate_build_the_same_settings(tmp_path, capsys):
    folder = case_with_reserve(tmp_path, 10)
    run_settings = policy_config(load_case(folder), RunConfig())
    assert main(["simulate", str(folder), "--json"]) == 0
    simulated = json.loads(capsys.readouterr().out)["configuration"]
    assert simulated == {k: getattr(run_settings, k) for k in simulated}
    assert run_settings.reserve_tokens == 10


def test_explicit_settings_override_the_case_table():
    config = settings_for(2000, 256, {"reserve_tokens": 10}, {"reserve_tokens": 400, "tail_turns": None}, where="c")
    assert (config.reserve_tokens, config.tail_turns, config.max_output_tokens) == (400, 3, 256)


@pytest.mark.parametrize("window,settings,message", [
    (None, {}, "c: a bare session has no window; pass --window N"),
    (2000, {"colour": 3}, "unknown policy setting"),
])
def test_settings_errors_are_one_line(window, settings, message):
    with pytest.raises(HarnessError, match=message):
        settings_for(window, None, {}, settings, where="c")
