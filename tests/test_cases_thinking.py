"""`cases validate` reports a probe whose fact only thinking (meta.thinking) holds (issue 21)."""

import json

from harness.cli import main

SESSION = [
    {"role": "user", "content": "Pick a port for the dev server."},
    {"role": "assistant", "content": "Done: the dev server is configured.",
     "meta": {"thinking": "Port 8443 is free; I will use it. The log level stays debug."}},
    {"role": "user", "content": "Keep the log level at debug."},
]
PROBE = ('[[probe]]\nid = "{id}"\nkind = "recall"\nquestion = "{id}?"\nall = ["{fact}"]\nanchor = ["{id}"]\nplanted_at = 2\n'
         'accept = ["{fact}"]\nreject = ["nothing"]\n')


def write_case(tmp_path, probes: str):
    case = tmp_path / "c"
    case.mkdir()
    (case / "session.jsonl").write_text("".join(json.dumps(m) + "\n" for m in SESSION), encoding="utf-8")
    toml = case / "case.toml"
    toml.write_text('[case]\nid = "c"\ntitle = "t"\npool = "edge"\nsession = "session.jsonl"\n[model]\n'
                    'context_window = 1000\nmax_output_tokens = 100\n' + probes, encoding="utf-8")
    return toml


def test_a_fact_only_in_thinking_is_reported_as_such(tmp_path, capsys):
    toml = write_case(tmp_path, PROBE.format(id="port", fact="8443") + PROBE.format(id="level", fact="debug"))
    assert main(["cases", "validate", "--cases-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert (f"{toml}: probe port: '8443' appears only in thinking (meta.thinking of message 1), which no context "
            f"shows") in err
    assert "probe level" not in err  # "debug" is also in the user's own words


def test_a_case_without_thinking_only_facts_validates(tmp_path, capsys):
    write_case(tmp_path, PROBE.format(id="level", fact="debug"))
    assert main(["cases", "validate", "--cases-dir", str(tmp_path)]) == 0
