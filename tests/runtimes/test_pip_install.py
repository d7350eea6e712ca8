"""A pip runtime (Inspect AI) installs into a venv of its own in the runtime cache from its hashed lockfile; it
counts as installed only once pip succeeded, and a failed install leaves nothing behind (offline here: the
lockfiles below fail before pip asks any index)."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.runtimes import adapter as A
from harness.runtimes import install, pip_install


def test_a_pip_runtime_is_not_installed_until_its_marker_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPACTION_HARNESS_RUNTIMES", str(tmp_path))
    runtime = A.load("inspect-summary")
    folder = install.install_dir(runtime)
    (folder / "venv" / "bin").mkdir(parents=True)
    (folder / "venv" / "bin" / "python").write_text("")  # a venv pip never finished
    with pytest.raises(HarnessError, match="inspect-summary@0.3.285 is not installed .* compaction-harness runtimes "
                                           "install inspect-summary"):
        install.executable(runtime)
    (folder / pip_install.MARKER).write_text("lock\n")
    assert install.executable(runtime) == folder / "venv" / "bin" / "python"


def test_a_failed_pip_install_is_one_line_and_leaves_no_folder(tmp_path, monkeypatch):
    locks = tmp_path / "locks"
    (locks / "broken").mkdir(parents=True)
    (locks / "broken" / "requirements.txt").write_text("this is not a requirement !!!\n")
    monkeypatch.setattr(pip_install, "LOCKS", locks)
    folder = tmp_path / "cache" / "broken-1.0"
    with pytest.raises(HarnessError) as raised:
        pip_install.install("broken", folder, "python")
    assert str(raised.value).startswith("pip install failed") and "\n" not in str(raised.value)
    assert not folder.exists()
    with pytest.raises(HarnessError, match="no lockfile"):
        pip_install.install("missing", folder, "python")
