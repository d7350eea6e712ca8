"""The command line's gaps (issue 18, item 9): --version, --json where a table is printed, --pool, merge of an
incomplete shard set and the merged report, --repeat on the deterministic builtin, --prices on a custom server."""

import json
import socket

import pytest

from harness.cli import main
from harness.models.emulator import EmulatorServer

from test_runner import make_case

ROOT_CASES = "cases"


@pytest.fixture
def cases(tmp_path):
    root = tmp_path / "cases"
    for name in ("one", "two", "three"):
        make_case(root, name)
    return root


def run(cases, out, *extra, code=0):
    assert main(["run", "--cases-dir", str(cases), "--out", str(out), "--json", *extra]) == code
    return out


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    name, version = capsys.readouterr().out.split()
    assert name == "compaction-harness" and version[0].isdigit()


def test_cases_list_json_and_pool(capsys):
    assert main(["cases", "list", "--cases-dir", ROOT_CASES, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["cases"]
    assert len(listed) >= 19 and {"id", "pool", "window", "messages", "probes", "title"} <= set(listed[0])
    assert main(["cases", "list", "--cases-dir", ROOT_CASES, "--pool", "edge", "--json"]) == 0
    edge = json.loads(capsys.readouterr().out)["cases"]
    assert edge and {case["pool"] for case in edge} == {"edge"}
    assert {case["id"] for case in edge} == {case["id"] for case in listed if case["pool"] == "edge"}


def test_cases_validate_json(capsys):
    assert main(["cases", "validate", "--cases-dir", ROOT_CASES, "--pool", "desktop", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["cases"] == 4 and found["problems"] == []


def test_run_pool_selects_and_an_empty_pool_is_one_line(tmp_path, capsys):
    root = tmp_path / "cases"
    make_case(root, "small")
    done = json.loads((run(root, tmp_path / "r", "--pool", "edge") / "run.json").read_text())
    assert list(done["cases"]) == ["small"]
    capsys.readouterr()
    assert main(["run", "--cases-dir", str(root), "--pool", "long", "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: ") and "long" in error and len(error.splitlines()) == 1


def test_merge_refuses_an_incomplete_shard_set_and_writes_the_report(cases, tmp_path, capsys):
    shards = [run(cases, tmp_path / f"s{i}", "--shard", f"{i}/3") for i in (1, 2, 3)]
    capsys.readouterr()
    assert main(["merge", str(shards[0]), str(shards[2]), "--out", str(tmp_path / "partial")]) == 2
    assert capsys.readouterr().err.strip() == ("error: shard 2/3 missing: merge needs all 3 shards of the run "
                                               "(got 1/3, 3/3)")
    assert not (tmp_path / "partial").exists()
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged"), "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["aggregates"]["valid_probes"] == 6
    report = (tmp_path / "merged" / "report.md").read_text()
    assert report.startswith("#") and "one" in report and "three" in report


def test_repeat_on_the_builtin_runs_once_with_a_note(cases, tmp_path, capsys):
    done = json.loads((run(cases, tmp_path / "r", "--repeat", "3") / "run.json").read_text())
    assert len(done["cases"]) == 3 and done["aggregates"]["valid_probes"] == 6
    assert "--repeat 3 ignored: the builtin model is deterministic" in capsys.readouterr().err


def test_repeat_beside_a_live_configuration_refuses_the_builtin_one(cases, tmp_path, capsys):
    assert main(["run", "--cases-dir", str(cases), "--out", str(tmp_path / "r"), "--repeat", "2",
                 "--model", "builtin", "--model", "openai:gpt-5"]) == 2
    assert "deterministic builtin model" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_prices_apply_to_a_custom_server(tmp_path, loopback, capsys):
    root = tmp_path / "cases"
    make_case(root, "small")
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."local-llama"]\ninput = 1.0\ncache_read = 0.1\noutput = 2.0\n')
    port = _free_port()
    spec = f"openai:local-llama@http://127.0.0.1:{port}/v1"
    with EmulatorServer(port=port):
        plain = run(root, tmp_path / "plain", "--summarizer", spec, "--answerer", "builtin")
        priced = run(root, tmp_path / "priced", "--summarizer", spec, "--answerer", "builtin", "--prices", str(prices))
    cost = json.loads((priced / "run.json").read_text())["aggregates"]["cost"]
    assert cost["usd"] is not None and cost["usd"] > 0
    assert json.loads((plain / "run.json").read_text())["aggregates"]["cost"]["usd"] is None
    capsys.readouterr()
    other = tmp_path / "other.toml"
    other.write_text('[models."another"]\ninput = 1.0\ncache_read = 0.1\noutput = 2.0\n')
    assert main(["run", "--cases-dir", str(root), "--summarizer", spec, "--prices", str(other),
                 "--out", str(tmp_path / "x")]) == 2
    assert "no price for model" in capsys.readouterr().err
