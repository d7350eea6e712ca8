"""A turn request's log line holds only the history the previous turn request did not have; `read_log` puts
every body back whole, scrubbed as before (a field re-sent as the same object too), across summarization requests,
retries and a history that shrinks after a compaction, on every wire's history key."""

from __future__ import annotations

import copy
import json
import random

import pytest

from harness.redact import scrub_value
from harness.scripted import RequestLog, read_log


def _bodies(seed: int, key: str) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    history: list = []
    out = []
    tools = [{"name": "bash", "description": f"run it; sk-{'a' * 20}"}]  # the same object, as the emulator keeps it
    for n in range(rng.randint(3, 25)):
        if rng.random() < 0.2:  # the runtime changed its tools
            tools = [{"name": f"tool{n}", "description": f"ghp_{'y' * 24}" if n % 2 else "plain"}]
        roll = rng.random()
        if roll < 0.15 and history:
            out.append(("compaction", {"model": "m", key: [{"role": "user", "content": "summarize all"}]}))
            history = [{"role": "user", "content": f"summary {n}"}] + history[-rng.randint(0, 2):]
        elif roll < 0.25 and out:
            out.append(copy.deepcopy(out[-1]))  # a retry
            continue
        content = f"message {n} ghp_{'x' * 24}" if roll > 0.9 else f"message {n} " * rng.randint(1, 50)
        history.append({"role": rng.choice(["user", "assistant", "tool"]), "content": content})
        out.append(("turn", {"model": "m", "stream": True, key: copy.deepcopy(history), "tools": tools}))
    return out


@pytest.mark.parametrize("key", ["messages", "input", "contents"])
@pytest.mark.parametrize("seed", range(15))
def test_every_body_reads_back_whole_and_scrubbed(seed, key, tmp_path):
    bodies = _bodies(seed, key)
    log = RequestLog(tmp_path / "requests.jsonl")
    for kind, body in bodies:
        log.write(path="/v1/x", headers={"authorization": "k"}, body=body, wire="openai", stream=True, kind=kind)
    log.close()
    read = read_log(tmp_path / "requests.jsonl")
    assert [r["body"] for r in read] == [scrub_value(body) for _, body in bodies]
    assert [r["kind"] for r in read] == [kind for kind, _ in bodies]
    text = (tmp_path / "requests.jsonl").read_text()
    assert "ghp_xxxx" not in text and "ghp_yyyy" not in text and "sk-aaaa" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    turns = [line for line in lines if line["kind"] == "turn"]
    if len(turns) > 1:  # later turn requests carry only what is new
        assert any("history_from" in line and len(line["body"][key]) < 3 for line in turns[1:])
