"""pi through cassettes and on the cost study's terms: `run --runtime pi --summarizer openai:gpt-5@emulator
--record-mode all` then `--record-mode none` give the same graded results (the runtime's compaction requests carry
its scratch paths, which the cassette keys normalise), and each of pi's compactions is priced as a hand
computation from its request log gives: the prefix an OpenAI cache would read, the new input, the summary's output,
the first request after it, at gpt-5's listed rates, cache on and off.

A short case (desktop-go-env-config, 4 prompts) at a 24K window and 4K output, where pi compacts twice."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cli import main
from harness.models import _tokens
from harness.models.emulator.chat import request_from_openai
from harness.scripted import read_log
from runtime_helpers import require

CASE = "desktop-go-env-config"
ARGS = ["--runtime", "pi", "--cases", CASE, "--window", "24576", "--max-output", "4096",
        "--summarizer", "openai:gpt-5@emulator"]
GPT5 = {"input": 1.25, "cache_read": 0.125, "output": 10.0}  # USD per million, pricing.toml's gpt-5 row


def _folder(out: Path) -> Path:
    return next(p for p in out.iterdir() if p.name.startswith("runtime-pi"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    require("pi")
    root = tmp_path_factory.mktemp("pi-cassettes")
    cassettes = root / "cassettes"
    for name, mode in (("record", "all"), ("replay", "none")):
        assert main(["run", *ARGS, "--record-mode", mode, "--cassettes", str(cassettes),
                     "--out", str(root / name)]) == 0
    return _folder(root / "record"), _folder(root / "replay")


def _case(folder: Path) -> dict:
    return json.loads((folder / "cases" / f"{CASE}.json").read_text())


def _graded(record: dict) -> dict:
    """What grading reads and writes: the compactions, summaries, probes and the drive, less wall and CPU times."""
    drive = {k: v for k, v in record["runtime"].items() if k not in ("seconds", "cpu_seconds")}
    return {"events": record["events"], "summaries": record["summaries"], "probes": record["probes"],
            "runtime": drive, "status": record["status"]}


def test_a_replay_from_the_cassette_grades_as_the_recording(runs):
    recorded, replayed = (_case(folder) for folder in runs)
    assert recorded["status"] == "ok" and recorded["runtime"]["compactions"]
    assert _graded(replayed) == _graded(recorded)
    assert {s["latency_source"] for s in replayed["summaries"]} <= {"recorded"}


def _logged(folder: Path) -> list[dict]:
    return read_log(folder / "runtime-logs" / CASE / "requests.jsonl")


def _shared(tokens: list[int], other: list[int]) -> int:
    shared = 0
    while shared < min(len(tokens), len(other)) and tokens[shared] == other[shared]:
        shared += 1
    return shared


def _hand_cached(tokens: list[int], earlier: list[list[int]]) -> int:
    """OpenAI's rule by hand: the longest prefix shared with an earlier prompt, in whole 128-token steps, from 1024."""
    best = max((_shared(tokens, other) // 128 * 128 for other in earlier), default=0)
    return best if best >= 1024 else 0


def _usd(uncached: int, cached: int, output: int) -> float:
    return round((uncached * GPT5["input"] + cached * GPT5["cache_read"] + output * GPT5["output"]) / 1e6, 6)


def _summaries(cassettes: Path) -> list[str]:
    """pi's summaries as the cassette recorded them, in order (the default policy's calls are there too)."""
    document = json.loads((cassettes / CASE / "openai-gpt-5-emulator.json").read_text())
    return [i["response"]["body"]["choices"][0]["message"]["content"] for i in document["interactions"]
            if "You are a context summarization" in json.dumps(i["request"]["body"]["messages"][0])]


def content_tokens(request) -> list[int]:
    """The request's content tokens as the price counts them: each part (tool, system, message) encoded alone."""
    parts = [json.dumps(t, sort_keys=True) for t in request.tools] + [request.system or ""]
    for m in request.messages:
        parts.append(f"<|{m.role}|>{m.content}" + "".join(f"{c.name}{json.dumps(c.arguments, sort_keys=True)}"
                                                          for c in m.tool_calls))
    return [t for i, part in enumerate(parts) for t in _tokens.encode(part if i == 0 else "\n" + part)]


def test_a_compaction_is_priced_as_its_request_log_computes_by_hand(runs):
    folder = runs[0]
    entries = _logged(folder)
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    tokens = [content_tokens(request_from_openai(e["body"], 4096)) for e in entries]
    runtime = _case(folder)["runtime"]
    entry = next(c for c in runtime["compactions"] if c.get("price", {}).get("first_request"))
    assert entry["calls"] == 1
    at = entry["request_seqs"][0] - 1  # the summarization call, in the log's order
    assert entries[at]["kind"] == "compaction"
    after = next(i for i in range(at + 1, len(entries)) if entries[i]["kind"] == "turn")
    call_cached = _hand_cached(tokens[at], tokens[:at])
    first_cached = _hand_cached(tokens[after], tokens[:after])
    calls = [i for i, e in enumerate(entries) if e["kind"] == "compaction"]
    output = _tokens.count(_summaries(folder.parent.parent / "cassettes")[calls.index(at)])
    price = entry["price"]
    assert (price["input_tokens"], price["cached_tokens"], price["output_tokens"]) == (len(tokens[at]), call_cached,
                                                                                      output)
    assert price["new_tokens"] == len(tokens[at]) - call_cached
    previous = max(i for i in range(at) if entries[i]["kind"] == "turn")
    assert price["shared_prefix_tokens"] == _shared(tokens[at], tokens[previous])
    untooled = [content_tokens(replace(request_from_openai(entries[i]["body"], 4096), tools=())) for i in (at, previous)]
    assert price["shared_history_tokens"] == _shared(*untooled)
    assert price["first_request"]["input_tokens"] == len(tokens[after])
    assert price["first_request"]["cached_tokens"] == first_cached > 0  # pi's system prompt and tools
    assert price["call_usd"] == {"on": _usd(len(tokens[at]) - call_cached, call_cached, output),
                                 "off": _usd(len(tokens[at]), 0, output)}
    assert price["first_request"]["usd"] == {"on": _usd(len(tokens[after]) - first_cached, first_cached, 0),
                                             "off": _usd(len(tokens[after]), 0, 0)}
    assert price["whole_usd"]["on"] == pytest.approx(price["call_usd"]["on"] + price["first_request"]["usd"]["on"])
    assert runtime["price"]["model"] == "openai:gpt-5@emulator" and runtime["price"]["price_row"] == "gpt-5"
    assert runtime["price"]["whole_usd"]["on"] == pytest.approx(
        sum(c["price"]["whole_usd"]["on"] for c in runtime["compactions"]))


def test_the_report_shows_each_compaction_priced(runs):
    report = (runs[0] / "report.md").read_text()
    assert "### Runtime compactions" in report and "Priced as openai:gpt-5@emulator" in report
    assert "Runtime compactions" in (runs[0] / "report.html").read_text()
