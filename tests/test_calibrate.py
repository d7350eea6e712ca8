"""Calibration on a hand-made transcript whose billing is known: the runtime sends an unseen prefix of H
tokens ahead of every request, with a breakpoint on it and on the last message (5-minute entries), and
bills in a tokenizer that counts twice what o200k counts. Each recorded usage below is worked out by hand
from Anthropic's rules; calibrate must recover the prefix, the ratio and every share."""

import json

import pytest

from harness.cli import main
from harness.errors import InputError
from harness.models import _tokens
from harness.studies.calibrate import calibrate, recorded

H = 1500  # the unseen runtime prefix, o200k tokens
SCALE = 2  # recorded tokens per o200k token
U1, A1, U2, A2, U3, A3 = ("Please read the config loader and tell me what it does.", "It reads TOML files.",
                          "Now add YAML support to it.", "Added a YAML branch.",
                          "I am back: run the tests please.", "All 41 tests pass.")
SUMMARY, U4, A4 = "Summary: the loader now reads TOML and YAML.", "Commit it.", "Committed."


def c(text: str) -> int:
    return _tokens.count(text)


def usage(read: int, write: int, rest: int = 0) -> dict:
    return {"input_tokens": SCALE * rest, "cache_read_input_tokens": SCALE * read,
            "cache_creation_input_tokens": SCALE * write, "output_tokens": 5}


def transcript(tmp_path):
    # A1 at t=10: cold, the whole prompt written. A2 at t=20: H+U1 read, A1+U2 written. A3 after a 10-minute
    # gap: every 5-minute entry expired, all written. The compaction call shares nothing with the session;
    # A4 (summary + U4) 10 s after A3: H is read (A3 wrote it), summary and U4 written.
    lines = [
        {"role": "user", "content": U1, "ts": "2026-01-01T00:00:00Z"},
        {"role": "assistant", "content": A1, "ts": "2026-01-01T00:00:10Z", "usage": usage(0, H + c(U1))},
        {"role": "user", "content": U2, "ts": "2026-01-01T00:00:20Z"},
        {"role": "assistant", "content": A2, "ts": "2026-01-01T00:00:30Z",
         "usage": usage(H + c(U1), c(A1) + c(U2))},
        {"role": "user", "content": U3, "ts": "2026-01-01T00:10:30Z"},
        {"role": "assistant", "content": A3, "ts": "2026-01-01T00:10:40Z",
         "usage": usage(0, H + c(U1) + c(A1) + c(U2) + c(A2) + c(U3))},
        {"role": "compaction", "content": SUMMARY, "covers": 6, "origin": "claude-code"},
        {"role": "user", "content": U4, "ts": "2026-01-01T00:10:50Z"},
        {"role": "assistant", "content": A4, "ts": "2026-01-01T00:11:00Z", "usage": usage(H, c(SUMMARY) + c(U4))},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_calibration_recovers_a_known_billing(tmp_path):
    result = calibrate([transcript(tmp_path)], ttl="5m")
    run = result["transcripts"][0]
    assert run["scale"] == pytest.approx(SCALE)
    assert run["hidden_prefix_tokens"] == pytest.approx(SCALE * H, abs=2)
    assert [row["read_share_error"] for row in run["rows"]] == [0.0, 0.0, 0.0, 0.0]
    assert run["rows"][2]["predicted"]["read_share"] == 0.0  # the idle gap expired every entry
    (first,) = run["first_after_compaction"]
    assert first["predicted"]["cache_write"] == pytest.approx(first["recorded"]["cache_write"], abs=2)
    assert result["total"]["median_first_after_write_error"] == pytest.approx(0.0, abs=1e-3)


def test_a_longer_ttl_keeps_the_entries_across_the_gap_and_misses_the_recorded_billing(tmp_path):
    run = calibrate([transcript(tmp_path)], ttl="1h")["transcripts"][0]
    assert run["rows"][2]["predicted"]["read_share"] > 0.5
    assert run["rows"][2]["read_share_error"] > 0.5


def test_only_a_compaction_after_an_idle_gap_tells_the_compaction_calls_apart(tmp_path):
    """The user comes back after 16 minutes and the compaction fires at that send. A runtime whose
    compaction call shares the session's prefix writes H there, so A4 would read it; the recorded A4 read
    nothing, which is what a separate call predicts."""
    lines = [json.loads(line) for line in open(transcript(tmp_path))]
    lines[7]["ts"], lines[8]["ts"] = "2026-01-01T00:27:00Z", "2026-01-01T00:27:10Z"
    lines[8]["usage"] = usage(0, H + c(SUMMARY) + c(U4))
    path = tmp_path / "gap.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    separate = calibrate([str(path)], ttl="5m")["transcripts"][0]
    prefix = calibrate([str(path)], ttl="5m", compaction_call="prefix")["transcripts"][0]
    assert separate["rows"][3]["read_share_error"] == 0.0
    assert prefix["rows"][3]["read_share_error"] > 0.5


def test_cli_prints_the_totals_and_json(tmp_path, capsys):
    path = transcript(tmp_path)
    assert main(["calibrate", path, "--ttl", "5m", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["total"]["requests"] == 4 and result["total"]["median_read_share_error"] == 0.0
    assert main(["calibrate", path, "--ttl", "5m"]) == 0
    assert "median absolute error of the cache-read share 0.00 points" in capsys.readouterr().out


def test_a_transcript_without_usage_is_a_one_line_input_error(tmp_path, capsys):
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n"
                    + json.dumps({"role": "assistant", "content": "hello"}) + "\n")
    with pytest.raises(InputError, match="calibration needs recorded usage"):
        calibrate([str(path)])
    assert main(["calibrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "calibration needs recorded usage" in err


def test_compaction_iterations_never_count_toward_the_prompt_size():
    """Anthropic reports server-side compaction's own tokens in usage.iterations, not in the top-level
    fields: the prompt (the context the window holds) is the top level alone."""
    top = {"input_tokens": 10, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 90,
           "output_tokens": 20,
           "iterations": [{"type": "compaction", "input_tokens": 150_000, "output_tokens": 3000,
                           "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}]}
    rec = recorded(top)
    assert (rec.total, rec.read, rec.write) == (1000, 900, 90)


def test_calibrate_imports_no_sdk_it_does_not_call(tmp_path):
    """calibrate only shapes requests and simulates the cache: importing the SDKs cost it a third of its time."""
    import subprocess
    import sys

    path = transcript(tmp_path)
    code = ("import sys; from harness.cli import main; assert main(['calibrate', sys.argv[1], '--json']) == 0; "
            "print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
