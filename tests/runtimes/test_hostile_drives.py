"""A case that plants every attack (hostile_case.py) driven through the real pi and Codex (and opencode, opt-in):
nothing planted ran (no mark in the trap folder, no connection to the trap's port), nothing outside the workspace
was read (the secret behind the link, the planted instructions reach no request), every runtime process worked in
a network namespace with loopback alone, and the drive still grades.

pi's drive is also the resume half of the failure test: the case is first driven by a stand-in runtime killed by
a signal after its first request, which fails the case (named, its stderr kept, the key it printed redacted
everywhere); `--resume` with pi under the same adapter name then drives it to the end. That run is also the
baseline the drifted-version test gates against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from fake_runtime import KEY, write_fake
from hostile_case import CASE_ID, INSTRUCTIONS, PLANTED, SECRET, Watch, open_trap, write_case
from runtime_helpers import require


def _folder(out: Path, name: str) -> Path:
    return next(p for p in out.iterdir() if p.name.startswith(f"runtime-{name}"))


def _every_file(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


def _driven(tmp: Path, runtime: str, adapter: str | None = None):
    """The hostile case through `runtime` (or an adapter file of that name) with its processes watched."""
    trap = open_trap(tmp / "trap")
    case = write_case(tmp, trap)
    out = tmp / "run"
    with Watch(runtime) as watch:
        code = main(["run", "--runtime", adapter or runtime, "--cases", str(case), "--out", str(out)])
    trap.close()
    return code, _folder(out, runtime), trap, watch


def _pi_adapter(pi, path: Path, name: str, pinned: str | None = None) -> None:
    """The shipped pi adapter under another name (pinning another version), its bin the installed pi."""
    text = Path(pi.adapter.source).read_text().replace('name = "pi"', f'name = "{name}"', 1)
    text = text.replace(f'version = "{pi.version}"', f'version = "{pinned or pi.version}"', 1)
    text = text.replace('npm = "@mariozechner/pi-coding-agent"\nbin = "pi"', f'bin = "{pi.binary}"', 1)
    assert f'name = "{name}"' in text and str(pi.binary) in text
    path.write_text(text)


@pytest.fixture(scope="module")
def pi_killed_then_resumed(tmp_path_factory):
    pi = require("pi")
    tmp = tmp_path_factory.mktemp("hostile-pi")
    trap = open_trap(tmp / "trap")
    case = write_case(tmp, trap)
    adapter = write_fake(tmp / "adapter", "kill-after-request", name="pi-hostile", version=pi.version)
    out = tmp / "run"
    args = ["run", "--runtime", str(adapter), "--cases", str(case), "--out", str(out)]
    assert main(args) == 1  # the case failed
    folder = _folder(out, "pi-hostile")
    killed = json.loads((folder / "cases" / f"{CASE_ID}.json").read_text()), _every_file(folder)
    _pi_adapter(pi, adapter, "pi-hostile")
    with Watch("pi-hostile") as watch:
        assert main([*args, "--resume"]) == 0
    trap.close()
    return killed, folder, trap, watch, case


def test_a_runtime_killed_by_a_signal_fails_its_case_named_and_redacted(pi_killed_then_resumed):
    (record, everything), *_ = pi_killed_then_resumed
    assert record["status"] == "error"
    assert "killed by SIGKILL" in record["error"] and "prompt 1" in record["error"]
    assert "stderr says Authorization" in record["error"]  # its last stderr lines are kept ...
    assert KEY not in everything and "<redacted>" in everything  # ... and nothing it printed keeps the key


def _contained(folder: Path, trap, watch: Watch) -> None:
    record = json.loads((folder / "cases" / f"{CASE_ID}.json").read_text())
    assert record["status"] == "ok", record.get("error")
    runtime = record["runtime"]
    assert runtime["steps_used"] == runtime["steps"] and runtime["sandbox"].startswith("bubblewrap")
    assert {p["id"] for p in record["probes"]} == {"train", "port"}  # the drive still grades
    assert all(p["conditions"]["compacted"]["retained"] for p in record["probes"])
    for planted in PLANTED:  # each planted path was left out, and the drive says so
        assert any(entry.startswith(planted) for entry in runtime["left_out"]), (planted, runtime["left_out"])
    assert trap.sprung() == []  # nothing planted ran: no mark, no connection to the trap's port
    assert watch.loopback_only(), (watch.seen, watch.names)  # every process it ran had loopback and nothing else
    requests = (folder / "runtime-logs" / CASE_ID / "requests.jsonl").read_text()
    assert "FALCON-9" in requests
    assert SECRET not in requests and INSTRUCTIONS not in requests  # nothing outside the workspace was read


def test_pi_resumed_drives_the_hostile_case_and_nothing_planted_runs(pi_killed_then_resumed):
    _, folder, trap, watch, _ = pi_killed_then_resumed
    _contained(folder, trap, watch)


def test_codex_drives_the_hostile_case_and_nothing_planted_runs(tmp_path):
    require("codex")
    code, folder, trap, watch = _driven(tmp_path, "codex")
    _contained(folder, trap, watch)
    assert code == 0


@pytest.mark.runtime
def test_opencode_drives_the_hostile_case_and_nothing_planted_runs(tmp_path):
    require("opencode")
    code, folder, trap, watch = _driven(tmp_path, "opencode")
    _contained(folder, trap, watch)
    assert code == 0


def test_a_drifted_version_is_warned_recorded_and_named_by_gate(pi_killed_then_resumed, tmp_path, capsys):
    """The resumed pi run is the baseline; the same pi under an adapter pinning another version is the drift."""
    pi = require("pi")
    _, pinned_run, _, _, case = pi_killed_then_resumed
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(pinned_run), "--baseline", str(baseline), "--update-baseline"]) == 0
    adapter = tmp_path / "pi-hostile.toml"
    _pi_adapter(pi, adapter, "pi-hostile", pinned="0.0.1")
    capsys.readouterr()
    out = tmp_path / "run"
    assert main(["run", "--runtime", str(adapter), "--cases", str(case), "--out", str(out)]) == 2  # refused ...
    assert "pins 0.0.1" in capsys.readouterr().err and not out.exists()
    assert main(["run", "--runtime", str(adapter), "--allow-version-drift", "--cases", str(case), "--out",
                 str(out)]) == 0  # ... unless allowed, and then said
    assert f"warning: runtime pi-hostile is {pi.version}, not the pinned 0.0.1" in capsys.readouterr().err
    drifted = _folder(out, "pi-hostile")
    recorded = json.loads((drifted / "run.json").read_text())["configuration"]["runtime"]
    assert recorded == f"pi-hostile@{pi.version} (drifted from the pin 0.0.1)"
    assert main(["gate", str(drifted), "--baseline", str(baseline)]) == 3  # a configuration change ...
    assert "drifted from the pin 0.0.1" in capsys.readouterr().err  # ... naming the drift
