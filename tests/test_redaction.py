"""Secrets are removed where they enter (issue 29 item 1, issue 33 item 1): a run whose ids and texts merely
mention keys and headers writes every file byte for byte and reads it back equal; a key planted in a session
and in a provider's 200 reply reaches no file of the run folder, report.html included."""

import json
from http.server import BaseHTTPRequestHandler

import pytest

from harness.cases import discover
from harness.cli import main
from harness.redact import TOKEN_PATTERNS, redact, scrub, scrub_value
from harness.render.html import write_html
from harness.render.run import write_markdown
from harness.results.folder import RunFolder, read_case_file, read_run
from harness.run.config import RunConfig
from harness.run.matrix import run_cases

from test_runner import SESSION, make_case
from test_secrets import reply_json, serving

WORDY = "Send the request with Authorization: Bearer token and the x-api-key header; api-key: local-dev-only."
WORDY_SESSION = [SESSION[0], {"role": "user", "content": WORDY}, *SESSION[1:]]
WORDY_PROBES = """
[[probe]]
id = "c2-api-key"
kind = "constraint"
question = "Which x-api-key / Authorization: header did the user name, and what is the api-key: value?"
all = ["local-dev-only"]
planted_at = 0

[[probe]]
id = "authorization-bearer-token"
kind = "constraint"
question = "What did the user say to use instead of npm? (not the Bearer token)"
all = ["pnpm"]
planted_at = 1
"""


@pytest.mark.parametrize("text", [WORDY, 'x-api-key: "c2-api-key"', "the probe real-fittoday-63/c2-api-key",
                                  '{"c2-api-key": "value"}', "Bearer token", "Authorization: basic auth"])
def test_content_that_mentions_headers_and_tokens_is_kept_byte_for_byte(text):
    assert scrub(text) == text
    assert scrub_value({text: [text]}) == {text: [text]}


def test_content_loses_key_shaped_values_and_the_environments_keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-key-without-a-shape-42")
    text = "use sk-ant-api03-abcdefghijklmnopqrstuv or plain-key-without-a-shape-42 with Bearer token"
    assert scrub(text) == "use <redacted> or <redacted> with Bearer token"


@pytest.mark.parametrize("token", ["sk-ant-api03-abcdefghijklmnopqrstuv", "sk-proj-abcdefghijklmnopqrstuv",
                                   "AKIAABCDEFGHIJKLMNOP", "ghp_abcdefghijklmnopqrstuvwxyz",
                                   "github_pat_abcdefghijklmnopqrstuvwxyz", "Bearer abcdefghijklmnopqrstuv"])
def test_every_token_shape_is_removed_in_any_surroundings(token):
    """Each pattern is tried only when its literal is in the text: that shortcut must keep every shape caught."""
    for text in (token, f"x {token} y", f'{{"k": "{token}"}}', f"line\n{token}\n"):
        scrubbed = scrub(text)
        assert "abcdefghijklmnop" not in scrubbed and "<redacted>" in scrubbed
        assert scrubbed == _scrub_without_shortcut(text)


def _scrub_without_shortcut(text):
    for pattern in TOKEN_PATTERNS:
        text = pattern.sub("<redacted>", text)
    return text


def test_an_error_text_also_loses_a_quoted_header_but_not_a_probe_id():
    assert redact("HTTP 401: Authorization: Basic dXNlcjpwYXNz") == "HTTP 401: Authorization: <redacted>"
    assert redact("probe 'c2-api-key': unknown kind") == "probe 'c2-api-key': unknown kind"


def test_a_run_with_key_words_in_ids_and_texts_writes_every_file_and_reads_it_back_equal(tmp_path, capsys):
    make_case(tmp_path / "cases", "x-api-key", session=WORDY_SESSION, probes=WORDY_PROBES)
    make_case(tmp_path / "cases", "authorization", session=WORDY_SESSION, probes=WORDY_PROBES)
    folder = RunFolder(tmp_path / "out")
    written = run_cases(discover(tmp_path / "cases"), RunConfig(answerer_window=1_000_000), folder, run_id="r")
    assert json.loads((tmp_path / "out" / "run.json").read_text()) == written == read_run(tmp_path / "out")
    for record in folder.case_records():
        assert read_case_file(folder.case_file(record.case)).to_json() == record.to_json()
        on_disk = json.loads(folder.case_file(record.case).read_text())
        assert on_disk == record.to_json()
    probes = {p["id"]: p for p in written["cases"]["x-api-key"]["probes"]}
    assert set(probes) == {"c2-api-key", "authorization-bearer-token"}
    assert probes["c2-api-key"]["question"].startswith("Which x-api-key / Authorization: header")
    contexts = json.loads((tmp_path / "out" / "cases" / "x-api-key.json").read_text())["contexts"]
    assert any(WORDY in json.dumps(c, ensure_ascii=False).replace('\\"', '"') for c in contexts.values()) \
        or any(WORDY in (p["conditions"]["full"]["answer"] or "") for p in probes.values())
    baseline, junit = tmp_path / "baseline.json", tmp_path / "junit.xml"
    assert main(["gate", str(tmp_path / "out"), "--baseline", str(baseline), "--update-baseline"]) == 0
    assert "x-api-key/c2-api-key" in json.loads(baseline.read_text())["probes"]
    assert main(["gate", str(tmp_path / "out"), "--baseline", str(baseline), "--junit", str(junit)]) == 0
    assert '<testcase classname="x-api-key" name="c2-api-key"' in junit.read_text()
    write_markdown(written, tmp_path / "out" / "report.md")
    write_html(written, tmp_path / "out")
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()] + [baseline, junit]
    assert {"run.json", "report.md", "report.html", "x-api-key.json"} <= {p.name for p in files}
    assert [p.name for p in files if b"redacted" in p.read_bytes()] == []  # nothing was taken for a secret


KEY = "sk-proj-plantedEnvKey0123456789abcdef"  # the key of this process (OPENAI_API_KEY)
REPLY_KEY = "sk-ant-api03-replyQuotedKey0123456789"  # a key-shaped value a provider's 200 reply quotes
SESSION_KEY = "ghp_" + "S" * 36  # a token pasted into the session
PROSE = "The client sends a Bearer token in the Authorization: header."


class QuotingSummarizer(BaseHTTPRequestHandler):
    """An OpenAI-compatible server whose 200 summary quotes the process's key and another key-shaped value."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        text = f"## Goal\n- Use pnpm. {PROSE} Keys seen: {KEY} and {REPLY_KEY}.\n## Files\n- src/server/config.ts"
        reply_json(self, 200, {"id": "x", "object": "chat.completion", "model": "gpt-5", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140}})

    def log_message(self, *args):
        pass


@pytest.fixture
def quoting_server(loopback):
    with serving(QuotingSummarizer) as url:
        yield url


def test_a_key_in_a_session_and_in_a_200_reply_reaches_no_file_of_the_run(tmp_path, capsys, monkeypatch,
                                                                         quoting_server):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    planted = [SESSION[0], {"role": "user", "content": f"my token is {SESSION_KEY} and the key {KEY}"}, *SESSION[1:]]
    make_case(tmp_path / "cases", "a", session=planted)
    out, cassettes = tmp_path / "out", tmp_path / "cassettes"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", f"openai:gpt-5@{quoting_server}",
                 "--record-mode", "all", "--cassettes", str(cassettes), "--out", str(out)]) in (0, 1)
    assert main(["gate", str(out), "--baseline", str(out / "baseline.json"), "--update-baseline"]) == 0
    assert main(["gate", str(out), "--baseline", str(out / "baseline.json"), "--junit", str(out / "junit.xml"),
                 "--markdown", str(out / "gate.md")]) == 0
    printed = capsys.readouterr()
    files = [p for p in (*out.rglob("*"), *cassettes.rglob("*")) if p.is_file()]
    assert {"run.json", "report.md", "report.html", "junit.xml", "baseline.json", "gate.md"} <= {p.name for p in files}
    assert any(p.suffix == ".png" for p in files) and list(cassettes.rglob("*.json"))
    for secret in (KEY, REPLY_KEY, SESSION_KEY, KEY[8:24], REPLY_KEY[8:24], SESSION_KEY[4:20]):
        assert [p.name for p in files if secret.encode() in p.read_bytes()] == []
        assert secret not in printed.out + printed.err
    summary = json.loads((out / "cases" / "a.json").read_text())["summaries"]
    run = read_run(out)
    texts = json.dumps(run, ensure_ascii=False) + (out / "cases" / "a.json").read_text()
    assert summary and PROSE in texts  # the reply's prose is kept as given, only the keys are gone
