"""case.toml: loading, and validation errors that name the file and the probe (exit 2)."""

from pathlib import Path

import pytest

from harness.cases import discover, load_case
from harness.cli import main
from harness.errors import HarnessError

from test_runner import make_case

GOOD_PROBE = """
[[probe]]
id = "p1"
kind = "recall"
question = "Which port?"
all = ["9090", ["port 9090", "nine thousand ninety"]]
none = ["8080"]
planted_at = 5
at = "compaction:1"
"""


def test_loads_probes_with_alternatives_and_points(tmp_path):
    case = load_case(make_case(tmp_path, "c", probes=GOOD_PROBE))
    probe = case.probes[0]
    assert probe.all == (("9090",), ("port 9090", "nine thousand ninety"))
    assert probe.none == ("8080",) and probe.at == "compaction:1"
    assert case.points == ("compaction:1",) and case.settings["reserve_tokens"] == 400


BAD = [
    ('kind = "recall"', 'kind = "trivia"', "probe p1: kind 'trivia' is not one of"),
    ('all = ["9090", ["port 9090", "nine thousand ninety"]]', "all = [3]", "probe p1: `all` must be a list"),
    ("planted_at = 5", "planted_at = -1", "probe p1: planted_at must be a message index"),
    ('at = "compaction:1"', 'at = "later"', "probe p1: at 'later' must be"),
    ('none = ["8080"]', 'regex = "("', "probe p1: bad regex"),
    ('question = "Which port?"', 'question = "Which port?"\ncolour = "red"', "probe p1: unknown field 'colour'"),
]


@pytest.mark.parametrize("good,bad,message", BAD)
def test_probe_errors_name_the_file_and_the_probe(tmp_path, capsys, good, bad, message):
    folder = make_case(tmp_path / "cases", "c", probes=GOOD_PROBE.replace(good, bad))
    with pytest.raises(HarnessError) as caught:
        load_case(folder)
    assert str(caught.value).startswith(f"{folder / 'case.toml'}: ") and message in str(caught.value)
    assert main(["cases", "validate", "--cases-dir", str(tmp_path / "cases")]) == 2
    assert message in capsys.readouterr().err


def test_case_level_errors(tmp_path):
    folder = make_case(tmp_path, "c")
    toml = folder / "case.toml"
    text = toml.read_text()
    for broken, message in ((text.replace('id = "c"', 'id = "other"'), "must equal the folder name"),
                            (text.replace('pool = "edge"', 'pool = "huge"'), "case.pool"),
                            (text.replace("context_window = 2000", ""), "model.context_window"),
                            ("[case\n", "bad TOML")):
        toml.write_text(broken)
        with pytest.raises(HarnessError, match=message):
            load_case(folder)


def test_validate_checks_planted_at_against_the_session(tmp_path, capsys):
    make_case(tmp_path / "cases", "c", probes=GOOD_PROBE.replace("planted_at = 5", "planted_at = 500"))
    assert main(["cases", "validate", "--cases-dir", str(tmp_path / "cases")]) == 2
    assert "planted_at 500 is outside the session's 8 messages" in capsys.readouterr().err


def test_validate_requires_every_probe_to_name_its_referent(tmp_path, capsys):
    make_case(tmp_path / "bare", "c", probes=GOOD_PROBE)
    assert main(["cases", "validate", "--cases-dir", str(tmp_path / "bare")]) == 2
    assert "probe p1: no `anchor`: give the words naming what its fact is about" in " ".join(capsys.readouterr().err.split())
    named = GOOD_PROBE.replace("planted_at = 5", 'anchor = ["port"]\nplanted_at = 5')
    make_case(tmp_path / "named", "c", probes=named)
    assert main(["cases", "validate", "--cases-dir", str(tmp_path / "named")]) == 0
    make_case(tmp_path / "elsewhere", "c", probes=named.replace('["port"]', '["staging"]'))
    assert main(["cases", "validate", "--cases-dir", str(tmp_path / "elsewhere")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "its anchor (staging) stands within 40 words of none of its facts in message 5" in err


def test_the_shipped_library_validates(capsys):
    """The schema and every probe's self-tests (its accept and reject examples graded by its matchers); the
    one run of them in CI (.ci/run does not validate again)."""
    root = Path(__file__).parents[1] / "cases"
    assert main(["cases", "validate", "--cases-dir", str(root)]) == 0
    assert "0 problems" in capsys.readouterr().out
    cases = discover(root)
    assert len(cases) >= 19 and sum(len(c.probes) for c in cases) >= 200
    # a real case holds at least 10 probes per recorded compaction (tests/test_real_pool.py), so it may hold more
    assert all(8 <= len(c.probes) <= 20 for c in cases if c.pool != "real")


def test_casegen_regenerates_every_generated_case_byte_for_byte():
    """tools/casegen builds on the harness's session writer, case writer and policy; --check compares what it
    would write with the shipped case folders."""
    import json
    import subprocess
    import sys

    root = Path(__file__).parents[1]
    done = subprocess.run([sys.executable, str(root / "tools/casegen/generate.py"), "--check"], cwd=root,
                          capture_output=True, text=True, timeout=300)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    generated = {p.parent.name for p in (root / "cases").glob("*/case.toml") if "[generator]" in p.read_text()}
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["id"] for r in rows} == generated and all(r["files"] == "unchanged" for r in rows)


def test_the_case_writer_writes_what_the_reader_loads(tmp_path):
    from harness.cases import case_toml, session_file_of, write_case_files
    from harness.session import Message, Session

    text = case_toml(case_id="w", title="Written", pool="edge", context_window=32768, max_output_tokens=4096,
                     tables={"generator": {"script": "gen.py", "seed": 7}},
                     probes=[{"id": "p1", "kind": "recall", "question": "Which port?", "all": ["9090", ["a", "b"]],
                              "none": None, "planted_at": 0, "rubric": None}],
                     comments=["made by a test"], trailer="# more probes go here\n")
    assert text.startswith("# made by a test\n\n[case]\nid = \"w\"\n") and text.endswith("\n\n# more probes go here\n")
    assert "none" not in text and "rubric" not in text and "[generator]\nscript = \"gen.py\"\nseed = 7" in text
    session = Session((Message("user", "the port is 9090"), Message("assistant", "ok")))
    toml_path = write_case_files(tmp_path / "w", session, text)
    case = load_case(toml_path.parent)
    assert case.probes[0].all == (("9090",), ("a", "b")) and case.context_window == 32768
    assert case.session.messages == session.messages
    with pytest.raises(HarnessError, match="already exists"):
        write_case_files(tmp_path / "w", session, text)
    assert session_file_of(tmp_path / "new") == tmp_path / "new" / "session.jsonl"


def test_bad_self_test_examples_and_empty_items_are_one_line_errors(tmp_path):
    import pytest

    from harness.cases import load_case
    from harness.errors import InputError

    tmp_path = tmp_path / "c"
    tmp_path.mkdir()
    session = '{"role": "user", "content": "port 9090"}\n'
    base = '[case]\nid = "c"\ntitle = "t"\npool = "edge"\nsession = "session.jsonl"\n[model]\ncontext_window = 1000\n' \
           'max_output_tokens = 100\n[[probe]]\nid = "p"\nkind = "recall"\nquestion = "port?"\nplanted_at = 0\n'
    (tmp_path / "session.jsonl").write_text(session)
    for extra, problem in (('all = ["9090"]\naccept = ["9090", ""]', "`accept` must be a list of non-empty"),
                           ('all = ["9090"]\nreject = [7]', "`reject` must be a list of non-empty"),
                           ('all = ["9090", "\'."]', "is empty once normalised"),
                           ('all = ["9090"]\nnone = ["``"]', "is empty once normalised")):
        (tmp_path / "case.toml").write_text(base + extra + "\n")
        with pytest.raises(InputError) as error:
            load_case(tmp_path)
        assert str(error.value).startswith(f"{tmp_path / 'case.toml'}: probe p: ") and problem in str(error.value)
    (tmp_path / "case.toml").write_text(base + 'all = ["9090"]\naccept = ["9090", "port 9090"]\nreject = ["8080"]\n')
    assert load_case(tmp_path).probes[0].accept == ("9090", "port 9090")


def test_every_shipped_probe_has_self_tests():
    """Enough examples to test itself with; that they pass is `cases validate` (the shipped library test)."""
    from harness.cases import discover

    thin = [f"{case.id}/{probe.id}" for case in discover("cases") for probe in case.probes
            if len(probe.accept) < 2 or len(probe.reject) < 1]
    assert not thin, f"probes with fewer than 2 accept or 1 reject examples: {thin}"
