"""results.schema and results.folder: records round-trip, run.json is assembled exactly as json.dumps would
write it, the aggregates built case by case equal the aggregates of the whole list, and a run is planned once."""

import json

import pytest

from harness.cases import discover
from harness.results.aggregate import Aggregator, aggregate
from harness.results.folder import RunFolder, merge_runs, read_run
from harness.results.schema import CaseRecord, RunHeader
from harness.run import case as run_case
from harness.run import config as run_config
from harness.run.config import RunConfig, plan_run
from harness.run.matrix import run_cases

from test_runner import make_case


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("schema")
    for name in ("a", "b"):
        make_case(root / "cases", name)
    make_case(root / "cases", "broken", session='{"role": "user", "content": "x"}\n{"role": "robot"}\n')
    folder = RunFolder(root / "out")
    run = run_cases(discover(root / "cases"), RunConfig(), folder, run_id="r", repeat=2)
    return folder, run


def test_case_files_and_run_json_round_trip_through_the_records(run_folder):
    folder, run = run_folder
    for path in sorted((folder.path / "cases").glob("*.json")):
        document = json.loads(path.read_text())
        assert CaseRecord.from_json(document).to_json() == document
        assert json.dumps(CaseRecord.from_json(document).to_json()) == json.dumps(document)  # key order too
    on_disk = read_run(folder.path)
    assert RunHeader.from_json(on_disk).to_json() == {k: v for k, v in on_disk.items()
                                                      if k not in ("cases", "aggregates", "finished")}


def test_run_json_text_is_what_json_dumps_writes_and_equals_the_returned_run(run_folder):
    folder, run = run_folder
    text = folder.run_file.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=1, ensure_ascii=False) + "\n"
    assert json.loads(text) == run
    assert sorted(run["cases"]) == ["a", "a.r1", "b", "b.r1", "broken", "broken.r1"]


def test_incremental_aggregates_equal_the_aggregates_of_all_records_in_any_order(run_folder):
    folder, run = run_folder
    records = folder.case_records()
    assert aggregate(records) == run["aggregates"]
    backwards = Aggregator()
    for record in reversed(records):
        backwards.add(record)
    assert backwards.result() == run["aggregates"]
    again = Aggregator(records)
    again.add(records[0])  # a case run again (resume after an error) replaces its record
    assert again.result() == run["aggregates"]


def test_resume_reads_the_case_files_once_and_merge_writes_the_same_run(run_folder, tmp_path):
    folder, run = run_folder
    merged = merge_runs([folder.path], tmp_path / "merged")
    assert merged["cases"] == run["cases"] and merged["aggregates"] == run["aggregates"]
    assert merged["merged_from"] == ["r"] and list(merged)[-4:] == ["merged_from", "cases", "aggregates", "finished"]


def test_a_run_is_planned_once(tmp_path, monkeypatch):
    make_case(tmp_path / "cases", "a")
    make_case(tmp_path / "cases", "b")
    calls = {"validate": 0, "check_spec": 0, "load_prices": 0, "check_key": 0}
    validate, check_key = RunConfig.validate, run_config._check_key

    def counting_validate(self):
        calls["validate"] += 1
        return validate(self)

    def counting_key(spec, config):
        calls["check_key"] += 1
        return check_key(spec, config)

    import harness.models.pricing as pricing
    load_prices, check_spec = pricing.load_prices, run_config.check_spec
    monkeypatch.setattr(RunConfig, "validate", counting_validate)
    monkeypatch.setattr(run_config, "_check_key", counting_key)
    monkeypatch.setattr(pricing, "load_prices", lambda *a: calls.__setitem__("load_prices", calls["load_prices"] + 1)
                        or load_prices(*a))
    monkeypatch.setattr(run_config, "check_spec", lambda s: calls.__setitem__("check_spec", calls["check_spec"] + 1)
                        or check_spec(s))
    config = RunConfig(summarizer="openai:gpt-5@emulator", answerer="builtin", record_mode="all",
                       cassettes=str(tmp_path / "cassettes"))
    run = run_cases(discover(tmp_path / "cases"), config, RunFolder(tmp_path / "out"), run_id="r")
    assert run["aggregates"]["cases_ok"] == 2
    # two distinct specs (builtin, the emulator): each parsed once by validate and key-checked once (the key
    # check's body belongs to the models package), prices loaded once: not once per case
    assert {k: calls[k] for k in ("validate", "load_prices", "check_key")} == {"validate": 1, "load_prices": 1,
                                                                            "check_key": 2}
    assert calls["check_spec"] <= 4 and not hasattr(run_case, "check_spec")  # cases read the plan's specs
    plan = plan_run(config)
    assert plan_run(plan) is plan  # a plan is not planned again


def test_adding_a_case_reads_no_file(run_folder, tmp_path, monkeypatch):
    folder, _ = run_folder
    records = folder.case_records()
    target = RunFolder(tmp_path / "run")
    target.create(RunHeader.from_json(read_run(folder.path)), resume=False)
    reads = []
    path_type = type(folder.path)
    real_open = path_type.open

    def counting_open(self, mode="r", *args, **kwargs):
        if "r" in mode:
            reads.append(self)
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(path_type, "open", counting_open)  # read_text and read_bytes go through open
    for record in records:
        target.add(record)
    target.finish()  # the resampled intervals are computed once, at the end
    monkeypatch.undo()
    assert reads == []  # run.json is rebuilt from memory: no case file (nor run.json) is read back
    assert read_run(target.path)["aggregates"] == read_run(folder.path)["aggregates"]
