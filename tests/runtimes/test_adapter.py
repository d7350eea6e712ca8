"""Runtime adapters: the shipped ones load, an adapter of one's own is read from its file alone, and every
malformed field is named (file and dotted field), never a traceback."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.errors import HarnessError, InputError
from harness.runtimes import adapter as A

SHIPPED = ("pi", "codex", "opencode", "gemini-cli")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_adapters_load_with_their_pin_and_lockfile(name):
    adapter = A.load(name)
    assert adapter.name == name and adapter.signatures["compaction"]
    lock = Path(A.__file__).parent / "npm" / name / "package-lock.json"
    assert adapter.version in lock.read_text()  # the lockfile pins the adapter's version


def test_version_suffix_must_be_the_pin():
    assert A.load("pi@0.73.1").version == "0.73.1"
    with pytest.raises(InputError, match="pins 0.73.1"):
        A.load("pi@0.99.0")


def test_unknown_runtime_names_the_shipped_ones():
    with pytest.raises(InputError, match="shipped: codex, gemini-cli, opencode, pi"):
        A.load("nope")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


def _minimal() -> str:
    return (Path(A.ADAPTERS) / "opencode.toml").read_text()


def test_own_adapter_from_a_path(tmp_path):
    path = _write(tmp_path, _minimal().replace('name = "opencode"', 'name = "mine"'))
    adapter = A.load(str(path))
    assert adapter.name == "mine" and adapter.mode == "http" and adapter.signatures["side"]
    assert adapter.http["prompt"] == "POST /session/${session}/message"


@pytest.mark.parametrize("old,new,field", [
    ('wire = "openai-chat"', 'wire = "carrier-pigeon"', "wire"),
    ('mode = "http"', 'mode = "telepathy"', "session.mode"),
    ("ready = ", "readiness = ", "session.ready"),
    ('turn_timeout_s = 600', 'turn_timeout_s = -1', "session.turn_timeout_s"),
    ('shell = ["bash"]', 'shell = "bash"', "tools.shell"),
    ('compaction.system = ["You are a context summarization agent"]', 'compacton.system = ["x"]', "signatures"),
])
def test_malformed_fields_are_named(tmp_path, old, new, field):
    text = _minimal()
    assert old in text
    path = _write(tmp_path, text.replace(old, new))
    with pytest.raises(InputError) as err:
        A.load(str(path))
    assert err.value.field == field and str(path) in str(err.value)


def test_not_toml_is_one_line(tmp_path):
    with pytest.raises(InputError, match="not valid TOML"):
        A.load(str(_write(tmp_path, "name = [")))


def test_unknown_placeholder_is_named():
    with pytest.raises(HarnessError, match="placeholder"):
        A.fill("${nope}", {"home": "/x"}, "a.toml: files")


def test_templates_fill_json_without_escaping():
    adapter = A.load("pi")
    text = A.fill(adapter.files["${home}/pi-agent/models.json"],
                  {"base_url": "http://127.0.0.1:1/v1", "model": "m", "window": 32768, "max_output": 4096}, "t")
    assert '"contextWindow": 32768' in text and tomllib  # JSON braces survive the template


def test_settings_fill_templates_and_unknown_ones_are_named(tmp_path):
    from pathlib import Path as P

    from harness.runtimes.home import Settings, values

    adapter = A.load("opencode")
    chosen = Settings("http://x/v1", "m", 32768, 4096, True, tuple(A.with_settings(adapter, (("prune", "true"),)).items()))
    filled = values(adapter, P("/bin/opencode"), P("/h"), P("/w"), chosen)
    assert filled["compaction_setting"] == '{"auto": true, "prune": true}'
    off = Settings("http://x/v1", "m", 32768, 4096, False, tuple(A.with_settings(adapter, ()).items()))
    assert values(adapter, P("/b"), P("/h"), P("/w"), off)["compaction_setting"] == '{"auto": false, "prune": false}'
    with pytest.raises(InputError, match="no setting 'prnue'.*its settings: prune"):
        A.with_settings(adapter, (("prnue", "true"),))


def test_a_runtime_that_assumes_its_window_is_told_the_share_that_is_the_case_window():
    """Gemini CLI compacts at 0.5 of the 1048576 tokens it assumes for an unknown model: told 0.015625 at a
    32K window, it compacts at 16384 tokens, half the case's window; off, a threshold it never reaches."""
    import json
    from pathlib import Path as P

    from harness.runtimes.home import Settings, values

    adapter = A.load("gemini-cli")
    assert (adapter.assumed_window, adapter.trigger_at) == (1048576, 0.5)
    on = values(adapter, P("/b"), P("/h"), P("/w"), Settings("http://x", "m", 32768, 4096, True))
    assert on["trigger_share"] == "0.015625"
    settings = json.loads(A.fill(adapter.files["${home}/.gemini/settings.json"], on, "t"))
    assert settings["model"] == {"name": "m", "compressionThreshold": 0.015625}
    off = values(adapter, P("/b"), P("/h"), P("/w"), Settings("http://x", "m", 32768, 4096, False))
    assert json.loads(A.fill(adapter.files["${home}/.gemini/settings.json"], off, "t"))["model"]["compressionThreshold"] > 1
    assert "trigger_share" not in values(A.load("pi"), P("/b"), P("/h"), P("/w"), Settings("http://x/v1", "m", 32768, 4096))


def test_codex_takes_a_prompt_that_starts_with_a_dash_as_its_prompt():
    """A real prompt began "- drop this ..."; codex's argument parser read it as an option and exited 2."""
    codex = A.load("codex")
    for argv in (codex.first, codex.next):
        assert argv[-2:] == ("--", "${prompt}")
