"""Record modes that fit each model (issue 18, item 1): the README's emulator and custom-server examples run
as written on a fresh folder; a provider without its key stops before any work; an explicit mode keeps the
committed cassettes as its folder."""

import json
import shlex
import socket
from pathlib import Path

import pytest

from harness.cli import main
from harness.models.emulator import EmulatorServer
from harness.run.config import COMMITTED_CASSETTES, RUN_CASSETTES, record_defaults

ROOT = Path(__file__).parents[1]
README_PORT = "8765"


def readme_commands() -> list[str]:
    """The documented model examples: the indented `compaction-harness` lines of docs/formats.md's model specs."""
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    section = text[text.index("## Model specs"):text.index("## A run folder")]
    return [line.strip() for line in section.splitlines() if line.startswith("    compaction-harness ")]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A folder with the case library and nothing else: no results, no cassettes."""
    (tmp_path / "cases").symlink_to(ROOT / "cases")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def only_run(folder: Path) -> dict:
    (run_file,) = folder.glob("results/*/run.json")
    return json.loads(run_file.read_text())


def check_nonempty(run: dict, folder: Path) -> None:
    assert [c["status"] for c in run["cases"].values()] == ["ok"]
    aggregates = run["aggregates"]
    assert aggregates["valid_probes"] > 0 and sum(aggregates["compactions"].values()) > 0
    assert aggregates["overall"]["answered"]["compacted"]["total"] > 0
    assert aggregates["summary"]["mean_tokens"]
    (cassettes,) = folder.glob("results/*/cassettes")  # recorded into the run's own folder
    assert list(cassettes.glob("*/*.json"))
    assert not (folder / "goldens").exists()


def test_the_readme_emulator_example_runs_as_written(fresh, capsys):
    (line,) = [c for c in readme_commands() if "@emulator" in c]
    assert main(shlex.split(line)[1:]) == 0
    run = only_run(fresh)
    assert run["configuration"]["record_mode"] == "new" and run["configuration"]["cassettes"] == RUN_CASSETTES
    check_nonempty(run, fresh)
    assert "None" not in capsys.readouterr().out.replace("hallucinated", "")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_readme_custom_server_example_runs_as_written(fresh, loopback):
    serve, run_line = [c for c in readme_commands() if "serve" in c or "@http" in c]
    assert shlex.split(serve)[1:4] == ["serve", "--port", README_PORT]
    port = _free_port()  # the README's port may be taken on a shared machine: the same command on a free one
    with EmulatorServer(port=port):
        assert main(shlex.split(run_line.replace(f":{README_PORT}/", f":{port}/"))[1:]) == 0
    run = only_run(fresh)
    assert run["configuration"]["record_mode"] == "new"
    check_nonempty(run, fresh)


def test_a_provider_without_its_key_stops_before_any_work(fresh, capsys):
    assert main(["run", "--model", "openai:gpt-5", "--cases", "edge-32k-window"]) == 2
    error = capsys.readouterr().err
    assert error.strip() == ("error: OPENAI_API_KEY is not set: export it to use openai:gpt-5, or replay a "
                             "cassette with --record-mode none")
    assert not (fresh / "results").exists()


def test_record_defaults_fit_each_model():
    assert record_defaults(["builtin"], None, None) == ("none", COMMITTED_CASSETTES)
    assert record_defaults(["builtin", "openai:gpt-5@emulator"], None, None) == ("new", RUN_CASSETTES)
    assert record_defaults(["openai:llama@http://127.0.0.1:9/v1"], None, None) == ("new", RUN_CASSETTES)
    assert record_defaults(["anthropic:claude-sonnet-4-6", "builtin"], None, None) == ("once", RUN_CASSETTES)
    assert record_defaults(["openai:gpt-5@emulator"], "none", None) == ("none", COMMITTED_CASSETTES)
    assert record_defaults(["openai:gpt-5"], None, "mine") == ("once", "mine")


def test_the_ci_replay_still_reads_the_committed_cassettes():
    reference = (ROOT / "tools" / "reference").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "--record-mode none" in reference and "tools/reference replay" in ci
