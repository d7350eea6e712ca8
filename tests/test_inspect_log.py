"""`run --inspect-log DIR`: the run as an Inspect AI log written through inspect_ai's own API. Read back with
`read_eval_log`, every probe is a sample whose scores, target, metadata and input match run.json and the case
file; the log's results are run.json's headline and pass rates. `inspect view bundle` (what `inspect view`
serves, without a browser) lists it with the headline as its primary metric. An unwritable folder is one line,
exit 2, before the run, and nothing is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

pytest.importorskip("inspect_ai", reason="the inspect extra: pip install -e '.[inspect]'")
from inspect_ai.log import read_eval_log  # noqa: E402

CASE = "edge-32k-window"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect-log")
    out, logs = root / "run", root / "logs"
    assert main(["run", "--cases", CASE, "--out", str(out), "--inspect-log", str(logs)]) == 0
    [log_file] = list(logs.glob("*.eval"))
    return json.loads((out / "run.json").read_text()), out, log_file


def test_every_probe_is_a_sample_with_run_json_s_scores(written):
    run, out, log_file = written
    log = read_eval_log(str(log_file))
    probes = run["cases"][CASE]["probes"]
    assert log.status == "success" and len(log.samples) == len(probes) > 0
    samples = {s.id: s for s in log.samples}
    contexts = json.loads((out / "cases" / f"{CASE}.json").read_text())["contexts"]
    for probe in probes:
        sample = samples[f"{CASE}/{probe['id']}@{probe['at']}"]
        assert sample.target == probe["expected"]
        wanted = {"case": CASE, "pool": "edge", "kind": probe["kind"], "point": probe["at"], "valid": probe["valid"],
                  "configuration": "default-builtin"}
        assert {k: sample.metadata.get(k) for k in wanted} == wanted
        graded = {f"{c}/{g}": int(r[g]) for c, r in probe["conditions"].items() for g in ("answered", "retained")}
        assert {name: score.value for name, score in sample.scores.items()} == graded
        assert sample.scores["compacted/answered"].answer == probe["conditions"]["compacted"]["answer"]
        context = contexts[probe["at"]]
        if context["summary"]:  # the compacted context: the summary, then the tail the case file names
            texts = [m.text for m in sample.input]
            assert context["summary"] in texts
            assert len(sample.input) >= context["end"] - context["live_start"] + 1


def test_the_log_s_results_are_run_json_s_headline_and_rates(written):
    run, _, log_file = written
    log = read_eval_log(str(log_file), header_only=True)
    aggregates = run["aggregates"]
    scores = {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores}
    headline = aggregates["headline"][aggregates["grade"]]["tests_summary"]
    assert scores["headline"] == {"rate": headline["rate"], "passed": headline["passed"], "total": headline["total"],
                                  "wilson95_low": headline["wilson95"][0], "wilson95_high": headline["wilson95"][1]}
    assert log.results.headline.scorer == "headline"
    for grade in ("answered", "retained"):
        for condition in ("compacted", "full", "floor"):
            rate = aggregates["overall"][grade][condition]
            assert scores[f"{condition}/{grade}"]["rate"] == rate["rate"]
            assert (scores[f"{condition}/{grade}"]["passed"], scores[f"{condition}/{grade}"]["total"]) == \
                (rate["passed"], rate["total"])
    assert log.eval.run_id == run["run_id"] and log.eval.metadata["configuration"] == run["configuration"]


def test_inspect_view_bundle_lists_the_log_with_its_headline(written, tmp_path):
    run, _, log_file = written
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run([str(inspect), "view", "bundle", "--log-dir", str(log_file.parent), "--output-dir",
                           str(tmp_path / "bundle")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    listing = json.loads((tmp_path / "bundle" / "logs" / "listing.json").read_text())
    entry = listing[log_file.name]
    headline = run["aggregates"]["headline"][run["aggregates"]["grade"]]["tests_summary"]
    assert entry["status"] == "success" and entry["run_id"] == run["run_id"]
    assert entry["primary_metric"]["value"] == headline["rate"]
    assert (tmp_path / "bundle" / "logs" / log_file.name).read_bytes() == log_file.read_bytes()
    assert (tmp_path / "bundle" / "index.html").is_file()


def test_an_unwritable_log_folder_stops_the_run_before_it_starts(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code = main(["run", "--cases", CASE, "--out", str(tmp_path / "run"), "--inspect-log", str(blocker / "logs")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(blocker / "logs") in err[0] and "--inspect-log" in err[0]
    assert not (tmp_path / "run").exists()  # nothing run, nothing written
