"""opencode 1.18.33 (opt-in: `pytest -m runtime`, about 5 minutes a run here): driven on a real case, and a
runtime setting gated like any configuration: compaction.prune on against off names the change and lists the
probes that flipped."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from runtime_helpers import require

pytestmark = pytest.mark.runtime


def _run(out, *extra) -> int:
    return main(["run", "--runtime", "opencode", "--policy", "truncate", "--cases", "edge-32k-window",
                 "--out", str(out), *extra])


def test_prune_on_and_off_are_gated_as_a_configuration_change(tmp_path, capsys):
    require("opencode")
    off, on = tmp_path / "off", tmp_path / "on"
    assert _run(off) == 0
    assert _run(on, "--runtime-set", "prune=true") == 0
    runs = {name: next(p for p in folder.iterdir() if p.name.startswith("runtime-opencode"))
            for name, folder in (("off", off), ("on", on))}
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(runs["off"]), "--baseline", str(baseline), "--update-baseline"]) == 0
    assert main(["gate", str(runs["on"]), "--baseline", str(baseline)]) == 3  # a configuration change
    capsys.readouterr()
    code = main(["gate", str(runs["on"]), "--baseline", str(baseline), "--allow-config-change", "--json"])
    verdict = capsys.readouterr().out
    assert code in (0, 1) and '"lost"' in verdict and '"gained"' in verdict  # the probes that flipped, counted
    run = json.loads((runs["on"] / "run.json").read_text())
    assert run["configuration"]["runtime_settings"] == {"prune": "true"}
