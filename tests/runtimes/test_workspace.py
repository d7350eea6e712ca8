"""The workspace is data: a case's files at a path a runtime reads as configuration or code are left out at any
depth, in any case of letters; a link is never followed out of the case; only plain files are copied, without
their modes; what was left out is said. Each shipped adapter's [workspace] paths are among those refused."""

from __future__ import annotations

import os
from pathlib import Path

from harness.runtimes.adapter import ADAPTERS, load
from harness.scripted.fixtures import RUNTIME_CONFIG, prepare_workspace
from harness.scripted.steps import script_from_session
from harness.session import Message, Session


def _script():
    return script_from_session(Session((Message("user", "go"), Message("assistant", "done"))))


def _case(tmp_path: Path) -> Path:
    files = tmp_path / "case" / "files"
    for name, text in {"src/main.go": "package main\n", ".pi/extensions/x.ts": "run()", "sub/.Codex/config.toml": "x",
                       "docs/agents.md": "rules", "opencode.json": "{}", "tool.sh": "echo hi"}.items():
        (files / name).parent.mkdir(parents=True, exist_ok=True)
        (files / name).write_text(text)
    (files / "tool.sh").chmod(0o755)
    (tmp_path / "secret").write_text("SECRET")
    (files / "leak").symlink_to(tmp_path / "secret")
    (files / "src" / "same.go").symlink_to("main.go")
    (files / "up").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(files / "pipe")
    return tmp_path / "case"


def test_configuration_links_and_special_files_are_left_out_and_said(tmp_path):
    root, left_out = prepare_workspace(_script(), tmp_path / "ws", _case(tmp_path))
    copied = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert copied == ["src/main.go", "src/same.go", "tool.sh"], copied
    assert (root / "src" / "same.go").read_text() == "package main\n" and not (root / "src" / "same.go").is_symlink()
    assert not os.access(root / "tool.sh", os.X_OK)
    said = dict(entry.split(": ", 1) for entry in left_out)
    assert set(said) == {".pi/", "sub/.Codex/", "docs/agents.md", "opencode.json", "leak", "up/", "pipe"}, said
    assert said["leak"].startswith("a link out of the case") and said["up/"] == "a link to a folder, not followed"
    assert said["pipe"] == "not a plain file"
    assert "SECRET" not in "".join(p.read_text() for p in root.rglob("*") if p.is_file())


def test_a_files_folder_that_is_a_link_is_not_followed(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.txt").write_text("x")
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "files").symlink_to(tmp_path / "elsewhere")
    root, left_out = prepare_workspace(_script(), tmp_path / "ws", tmp_path / "case")
    assert not (root / "a.txt").exists() and left_out[0].startswith("files/: a link")


def test_every_shipped_adapter_declares_what_its_runtime_reads_and_all_of_it_is_refused():
    refused = {name.rstrip("/").lower() for name in RUNTIME_CONFIG}
    for path in sorted(ADAPTERS.glob("*.toml")):
        adapter = load(str(path))
        assert adapter.workspace_config, f"{path.name} declares no [workspace] config"
        assert {name.rstrip("/").lower() for name in adapter.workspace_config} <= refused, path.name
