"""Runtime adapters: the shipped ones load, an adapter of one's own is read from its file alone, and every
malformed field is named (file and dotted field), never a traceback."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.errors import HarnessError, InputError
from harness.runtimes import adapter as A

SHIPPED = ("pi", "codex", "opencode", "gemini-cli", "claude-code", "qwen-code")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_adapters_load_with_their_pin_and_lockfile(name):
    adapter = A.load(name)
    assert adapter.name == name and adapter.signatures["compaction"]
    lock = Path(A.__file__).parent / "npm" / name / "package-lock.json"
    assert adapter.version in lock.read_text()  # the lockfile pins the adapter's version


INSPECT = ("inspect-summary", "inspect-edit", "inspect-trim", "inspect-auto", "inspect-native")


@pytest.mark.parametrize("name", INSPECT)
def test_inspect_adapters_share_one_pip_install_pinned_by_hashes(name):
    from harness.runtimes import install

    adapter = A.load(name)
    assert (adapter.pip, adapter.npm, adapter.mode) == ("inspect", None, "rpc")
    assert install.install_dir(adapter).name == f"inspect-{adapter.version}"  # one venv for the five
    lock = (Path(A.__file__).parent / "pip" / "inspect" / "requirements.txt").read_text()
    assert f"inspect-ai=={adapter.version} \\" in lock and "--hash=sha256:" in lock
    # edit and trim make no call; native's goes to the provider's /responses/compact, which the emulator answers
    assert adapter.edits_context == (name in ("inspect-edit", "inspect-trim", "inspect-native"))
    assert adapter.wire == ("responses" if name == "inspect-native" else "openai-chat")
    assert adapter.compaction_on == name.removeprefix("inspect-") and adapter.compaction_off == "none"


def test_npm_and_pip_together_are_refused(tmp_path):
    text = (A.ADAPTERS / "inspect-summary.toml").read_text().replace('pip = "inspect"', 'pip = "inspect"\nnpm = "x"')
    with pytest.raises(InputError, match="install: npm and pip"):
        A.load(str(_write(tmp_path, text)))


def test_another_release_of_a_pip_runtime_is_refused():
    with pytest.raises(InputError, match="installs with pip from its hashed lockfile"):
        A.load("inspect-summary@0.3.1")


def test_a_version_suffix_names_another_release_of_the_same_adapter():
    assert A.load("pi@0.73.1").version == "0.73.1" and A.load("pi@0.73.1").lockfile_shipped
    other = A.load("pi@0.70.2")
    assert (other.version, other.pinned, other.pin, other.lockfile_shipped) == ("0.70.2", "0.73.1", "pi@0.70.2", False)
    assert other.signatures == A.load("pi").signatures  # its requests are checked against the adapter's signatures
    with pytest.raises(InputError, match="'latest' is not a version"):
        A.load("pi@latest")


def test_unknown_runtime_names_the_shipped_ones():
    with pytest.raises(InputError, match="shipped: claude-code, codex, codex-remote, gemini-cli, inspect-auto, "
                                         "inspect-edit, inspect-native, inspect-summary, inspect-trim, opencode, pi, "
                                         "qwen-code"):
        A.load("nope")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


def _minimal() -> str:
    return (Path(A.ADAPTERS) / "opencode.toml").read_text()


def _without_rule() -> str:
    """opencode's adapter less its [compaction] trigger rule."""
    return "".join(line for line in _minimal().splitlines(keepends=True) if not line.startswith("trigger = "))


def test_own_adapter_from_a_path(tmp_path):
    path = _write(tmp_path, _minimal().replace('name = "opencode"', 'name = "mine"'))
    adapter = A.load(str(path))
    assert adapter.name == "mine" and adapter.mode == "http" and adapter.signatures["side"]
    assert adapter.http["prompt"] == "POST /session/${session}/message"


@pytest.mark.parametrize("old,new,field", [
    ('wire = "openai-chat"', 'wire = "carrier-pigeon"', "wire"),
    ('mode = "http"', 'mode = "telepathy"', "session.mode"),
    ("ready = ", "readiness = ", "session.readiness"),  # the misspelt key is named first
    ("ready = ", "# ready = ", "session.ready"),
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


@pytest.mark.parametrize("old,new,field", [
    ("turn_timeout_s = 600", "turn_timout_s = 600", "session.turn_timout_s"),  # the misspelling the issue met
    ('wire = "openai-chat"', 'wire = "openai-chat"\nwindow = 4', "window"),
    ("turn_timeout_s = 600", "turn_timeout_s = inf", "session.turn_timeout_s"),
    ("turn_timeout_s = 600", "turn_timeout_s = nan", "session.turn_timeout_s"),
    ("turn_timeout_s = 600", 'turn_timeout_s = "600"', "session.turn_timeout_s"),
    ('shell = ["bash"]', 'shell = ["bash"]\nedit = ["edit"]', "tools.edit"),
    ('side.user = ["Generate a title for this conversation"]', 'side.user = "Generate a title"', "signatures.side.user"),
    ('side.user = ["Generate a title for this conversation"]', 'side.usr = ["x"]', "signatures.side.usr"),
    ('side.user = ["Generate a title for this conversation"]',
     "side.headers = [{ name = \"x-kind\", pattern = '(title' }]", "signatures.side.headers"),
    ('side.user = ["Generate a title for this conversation"]', 'side.user = [{ contains = "" }]', "signatures.side.user"),
])
def test_every_key_is_checked_strictly(tmp_path, old, new, field):
    """Unknown keys, wrong types, non-finite numbers and bad patterns: one error naming the file and the key,
    when the file is read (before any case starts)."""
    text = _minimal().replace("turn_timeout_s = 300", "turn_timeout_s = 600")
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(InputError) as err:
        A.load(str(path))
    assert err.value.field == field and str(path) in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("rule,problem", [
    ("window - ", "not an arithmetic expression"),
    ("window - reserve", "unknown name 'reserve'"),
    ("__import__('os').getcwd()", "is not allowed"),
    ("window ** 2", "is not allowed"),
    ("trigger - 1", "unknown name 'trigger'"),  # the rule cannot read itself
])
def test_a_trigger_rule_is_arithmetic_over_known_names(tmp_path, rule, problem):
    text = _without_rule().replace("[compaction]", f"[compaction]\ntrigger = {rule!r}", 1)
    with pytest.raises(InputError, match=problem) as err:
        A.load(str(_write(tmp_path, text)))
    assert err.value.field == "compaction.trigger"


def test_derived_values_need_a_trigger_rule(tmp_path):
    text = _without_rule().replace("[compaction]", '[compaction]\nvalues.pct = "100 * window"', 1)
    with pytest.raises(InputError, match="add compaction.trigger") as err:
        A.load(str(_write(tmp_path, text)))
    assert err.value.field == "compaction.values"


def test_claude_code_is_told_the_percentage_that_is_its_rule_at_the_case_window():
    """Claude Code compacts at W - min(max output, 20000) - 13000 on a model of window W, but takes no window
    under 100,000: it is given 100,000 and the percentage of its 80,000 usable tokens that is the rule's
    threshold at the case's window (32768 - 8192 - 13000 = 11576 tokens: 14.47%). Off: DISABLE_AUTO_COMPACT=1."""
    from pathlib import Path as P

    from harness.runtimes.home import Settings, prepare, values

    adapter = A.load("claude-code")
    on = values(adapter, P("/b"), P("/h"), P("/w"), Settings("http://x", "m", 32768, 8192, True))
    assert (on["trigger"], on["autocompact_pct"], on["assumed_window"]) == ("11576", "14.47", "100000")
    assert 100 * 11576 / 80000 == pytest.approx(14.47)
    env = {k: A.fill(v, on, "t") for k, v in adapter.env.items()}
    assert env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] == "14.47" and env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] == "100000"
    assert env["DISABLE_AUTO_COMPACT"] == "0"
    off = values(adapter, P("/b"), P("/h"), P("/w"), Settings("http://x", "m", 32768, 8192, False))
    assert A.fill(adapter.env["DISABLE_AUTO_COMPACT"], off, "t") == "1"
    assert "--dangerously-skip-permissions" not in adapter.first + adapter.next  # refused as root
    assert adapter.manual_compact == "/compact"
    assert prepare  # the environment is built by home.prepare from these templates alone


def test_the_run_folder_is_named_after_the_adapter_name_and_a_release_by_its_version(tmp_path):
    from harness.run.config import RunConfig

    path = _write(tmp_path, _minimal().replace('name = "opencode"', 'name = "my-agent"'))
    assert RunConfig(policy="recorded", runtime=str(path)).system == "runtime-my-agent"  # not "runtime-mine"
    assert RunConfig(policy="recorded", runtime="pi@0.73.1").system == "runtime-pi"
    assert RunConfig(policy="recorded", runtime="pi@0.72.1").system == "runtime-pi@0.72.1"
    assert RunConfig(policy="recorded", runtime="pi@0.72.1").runtime_pin == "pi@0.72.1"


def test_an_adapter_may_say_what_its_shell_tool_runs(tmp_path):
    """Qwen Code settles a command on its exit, not its output's end: its adapter runs `cat` then a short sleep."""
    from harness.scripted.mapping import mapped_call
    from harness.scripted.steps import ScriptCall

    qwen = A.load("qwen-code")
    assert qwen.shell_command == "cat {fixture}; sleep 0.3" and A.load("pi").shell_command == "cat {fixture}"
    tool = {"name": "run_shell_command", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}
    call = mapped_call(ScriptCall("c1", ".replay/c1.txt", "out"), (tool,), None, qwen.shell_command)
    assert call.arguments == {"command": "cat .replay/c1.txt; sleep 0.3"}
    text = _minimal().replace('shell = ["bash"]', 'shell = ["bash"]\nshell_command = "cat {file}"')
    with pytest.raises(InputError, match="must hold {fixture}") as err:
        A.load(str(_write(tmp_path, text)))
    assert err.value.field == "tools.shell_command"


def test_codex_takes_a_prompt_that_starts_with_a_dash_as_its_prompt():
    """A real prompt began "- drop this ..."; codex's argument parser read it as an option and exited 2."""
    codex = A.load("codex")
    for argv in (codex.first, codex.next):
        assert argv[-2:] == ("--", "${prompt}")


def test_http_routes_are_read_only_in_mode_http(tmp_path):
    """opencode's server routes: read for mode http; an exec adapter that names one is told so."""
    assert A.load("opencode").http["create"] == "POST /session"
    text = (Path(A.ADAPTERS) / "codex.toml").read_text().replace('mode = "exec"', 'mode = "exec"\nready = "x (y)"')
    with pytest.raises(InputError, match="mode http") as err:
        A.load(str(_write(tmp_path, text)))
    assert err.value.field == "session.ready"
