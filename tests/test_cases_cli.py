"""`cases validate` runs every probe's self-tests; `cases grade` grades one answer against one probe."""

import json
from pathlib import Path

from harness.cli import main

SHIPPED = Path(__file__).resolve().parent.parent / "cases"


def test_validate_fails_naming_the_probe_and_the_example(tmp_path, capsys):
    case = tmp_path / "c"
    case.mkdir()
    (case / "session.jsonl").write_text('{"role": "user", "content": "The timeout is 7500 ms now, not 9000."}\n')
    toml = case / "case.toml"
    toml.write_text('[case]\nid = "c"\ntitle = "t"\npool = "edge"\nsession = "session.jsonl"\n[model]\n'
                    'context_window = 1000\nmax_output_tokens = 100\n[[probe]]\nid = "timeout"\nkind = "update"\n'
                    'question = "Timeout now?"\nall = ["7500"]\nnone = ["9000"]\nplanted_at = 0\n'
                    'accept = ["7500", "seventy-five hundred"]\nreject = ["9000 or 7500", "7500, previously 9000"]\n')
    assert main(["cases", "validate", "--cases-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert f"{toml}: probe timeout: accept example 'seventy-five hundred' fails (missing '7500')" in err
    assert "reject example '7500, previously 9000' passes" in err  # a secretly correct reject is caught too
    assert "reject example '9000 or 7500'" not in err


def test_grade_says_pass_or_fail_and_the_deciding_item(capsys):
    args = ["cases", "grade", "edge-superseded-facts", "timeout", "--cases-dir", str(SHIPPED)]
    assert main([*args, "7500 ms (changed from 9000)"]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main([*args, "9000 or 7500"]) == 1
    assert "FAIL: states '9000', which must not be stated" in capsys.readouterr().out
    assert main([*args, "4500", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is False and data["decided_by"] == "missing '7500'"
    assert data["all"][0]["found"] is None and {n["item"]: n["stated"] for n in data["none"]}["4500"] is True


def test_grade_names_an_unknown_probe_in_one_line(capsys):
    assert main(["cases", "grade", "edge-superseded-facts", "nope", "x", "--cases-dir", str(SHIPPED)]) == 2
    err = capsys.readouterr().err
    assert "no probe 'nope' in case 'edge-superseded-facts' (its probes: goal, timeout" in err
