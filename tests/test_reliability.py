"""Issue 17: each traceback cause, silent acceptance, path escape and race found by trying the harness as a
careful user would. Every test here failed before the fix it names."""

import json
import threading
from pathlib import Path

import pytest

from harness.cases import discover, load_case
from harness.cli import main
from harness.errors import HarnessError
from harness.results.folder import RunFolder

from test_runner import PROBES, SESSION, make_case


def one_line_exit_2(capsys, argv, *, code=2):
    try:
        result = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        result = exc.code
    err = capsys.readouterr().err
    assert result == code, err
    assert "Traceback" not in err and err.strip().count("\n") == 0 or err.startswith("usage:"), err
    return err


def built_run(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    out = tmp_path / "run"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    return out


# -- the 9 traceback causes ----------------------------------------------------------------------


@pytest.mark.parametrize("target", ["session.jsonl", "case.toml"])
def test_non_utf8_case_files_are_one_line_errors(tmp_path, capsys, target):
    folder = make_case(tmp_path / "cases", "a")
    (folder / target).write_bytes(b"\xff\xfe" + (folder / target).read_bytes())
    err = one_line_exit_2(capsys, ["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "o")])
    assert target in err and "UTF-8" in err


def test_non_utf8_run_baseline_and_prices_are_one_line_errors(tmp_path, capsys):
    out = built_run(tmp_path, capsys)
    baseline = tmp_path / "b.json"
    assert main(["gate", str(out), "--baseline", str(baseline), "--update-baseline"]) == 0
    capsys.readouterr()
    baseline.write_bytes(b"\xff" + baseline.read_bytes())
    assert "UTF-8" in one_line_exit_2(capsys, ["gate", str(out), "--baseline", str(baseline)])
    (out / "run.json").write_bytes(b"\xff" + (out / "run.json").read_bytes())
    assert "UTF-8" in one_line_exit_2(capsys, ["compare", str(out), str(out)])
    prices = tmp_path / "p.toml"
    prices.write_bytes(b"\xff\xfe")
    assert "UTF-8" in one_line_exit_2(capsys, ["run", "--cases-dir", str(tmp_path / "cases"), "--prices",
                                                str(prices), "--out", str(tmp_path / "o2")])


@pytest.mark.parametrize("damage", [lambda d: d.pop("cases"), lambda d: d.update(aggregates=[]),
                                    lambda d: d["aggregates"].pop("by_kind"), lambda d: d.update(configuration=5),
                                    lambda d: d["cases"]["a"].pop("probes")])
def test_run_json_missing_keys_or_of_the_wrong_shape(tmp_path, capsys, damage):
    out = built_run(tmp_path, capsys)
    document = json.loads((out / "run.json").read_text())
    damage(document)
    (out / "run.json").write_text(json.dumps(document))
    err = one_line_exit_2(capsys, ["gate", str(out), "--baseline", str(tmp_path / "b.json"), "--update-baseline"])
    assert "run.json" in err


@pytest.mark.parametrize("damage", [lambda d: d.update(probes=[1]), lambda d: d.update(cases=5),
                                    lambda d: d["probes"].update(x=5), lambda d: d.update(grade="best")])
def test_baseline_of_the_wrong_shape(tmp_path, capsys, damage):
    out = built_run(tmp_path, capsys)
    baseline = tmp_path / "b.json"
    main(["gate", str(out), "--baseline", str(baseline), "--update-baseline"])
    document = json.loads(baseline.read_text())
    damage(document)
    baseline.write_text(json.dumps(document))
    capsys.readouterr()
    assert "b.json" in one_line_exit_2(capsys, ["gate", str(out), "--baseline", str(baseline)])


def test_output_targets_that_are_folders_files_or_in_missing_folders(tmp_path, capsys):
    out = built_run(tmp_path, capsys)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    cases = ["--cases-dir", str(tmp_path / "cases")]
    assert "is a file" in one_line_exit_2(capsys, ["run", *cases, "--out", str(a_file)])
    one_line_exit_2(capsys, ["gate", str(out), "--baseline", str(tmp_path / "b.json"), "--junit", str(tmp_path)])
    one_line_exit_2(capsys, ["compare", str(out), str(out), "--markdown", str(tmp_path)])
    one_line_exit_2(capsys, ["cost", *cases, "--markdown", str(a_file / "x.md")])
    assert "is a folder" in one_line_exit_2(capsys, ["gate", str(out), "--baseline", str(tmp_path),
                                                     "--update-baseline"])
    missing = tmp_path / "new" / "deeper" / "compare.md"  # a missing folder is made
    assert main(["compare", str(out), str(out), "--markdown", str(missing)]) == 0 and missing.exists()


def test_truncated_case_files_on_resume_and_merge(tmp_path, capsys):
    out = built_run(tmp_path, capsys)
    case_file = out / "cases" / "a.json"
    case_file.write_text(case_file.read_text()[:200])
    err = one_line_exit_2(capsys, ["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out), "--resume"])
    assert "a.json" in err
    assert "a.json" in one_line_exit_2(capsys, ["merge", str(out), "--out", str(tmp_path / "merged")])


@pytest.mark.parametrize("edit, key", [
    (lambda t: t.replace('title = "t"', "session = 5"), "case.session"),
    (lambda t: t.replace('title = "t"', "title = 5"), "case.title"),
    (lambda t: t.replace("max_output_tokens = 256", 'max_output_tokens = "lots"'), "model.max_output_tokens"),
    (lambda t: t.split("[[probe]]")[0] + '[probe]\nid = "x"\n', "probe"),
])
def test_wrong_types_in_case_toml(tmp_path, capsys, edit, key):
    folder = make_case(tmp_path / "cases", "a")
    (folder / "case.toml").write_text(edit((folder / "case.toml").read_text()))
    err = one_line_exit_2(capsys, ["cases", "validate", "--cases-dir", str(tmp_path / "cases")])
    assert key in err


@pytest.mark.parametrize("line, field", [
    ({"role": "assistant", "content": "x", "tool_calls": 5}, "tool_calls"),
])
def test_bad_session_lines(tmp_path, capsys, line, field):
    make_case(tmp_path / "cases", "a", session=[SESSION[1], line])
    assert field in one_line_exit_2(capsys, ["cases", "validate", "--cases-dir", str(tmp_path / "cases")])


def test_very_deep_nesting_in_a_session(tmp_path, capsys):
    deep = '{"role": "user", "content": "x", "meta": {"a": ' + "[" * 100000 + "]" * 100000 + "}}\n"
    make_case(tmp_path / "cases", "a", session=deep)
    assert "deeper" in one_line_exit_2(capsys, ["cases", "validate", "--cases-dir", str(tmp_path / "cases")])


def test_a_lone_surrogate_never_stops_the_run(tmp_path, capsys):
    session = [dict(m) for m in SESSION]
    for number in (1, 5, 8):  # the head (summarized) and the kept tail
        session[number]["content"] += " half an emoji \ud83d here"
    lines = "\n".join(json.dumps(m) for m in session) + "\n"  # json.dumps writes it as the escape \ud83d
    make_case(tmp_path / "cases", "a", session=lines)
    make_case(tmp_path / "cases", "b")
    out = tmp_path / "out"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out), "--json"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert {c["status"] for c in run["cases"].values()} == {"ok"} and run["cases"]["a"]["events"]
    assert not list(out.rglob("*.tmp"))


def test_importing_a_lone_surrogate_writes_a_whole_case(tmp_path, capsys):
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps({"messages": [{"role": "user", "content": "fix it \ud83d please"},
                                                   {"role": "assistant", "content": "done"}]}))
    out = tmp_path / "imported"
    code = main(["cases", "import", str(transcript), "--from", "openai", "--out", str(out), "--window", "8000",
                 "--model", "gpt-5"])
    assert code == 0, capsys.readouterr().err
    assert "\\ud83d" in (out / "session.jsonl").read_text() and load_case(out).session.messages


def test_long_context_of_the_wrong_type_in_prices(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    prices = tmp_path / "p.toml"
    for row in ("long_context = 5", "input = -1", "input = nan", "cache_read = inf"):
        prices.write_text(f'[models."gpt-5"]\n{row}\n')
        err = one_line_exit_2(capsys, ["cost", "--cases-dir", str(tmp_path / "cases"), "--prices", str(prices)])
        assert row.split(" ")[0] in err


def test_an_unbounded_repeat_is_a_usage_error(tmp_path, capsys):
    one_line_exit_2(capsys, ["run", "--repeat", "100000000000", "--cases-dir", str(tmp_path)])


# -- silent acceptance ----------------------------------------------------------------------------


@pytest.mark.parametrize("edit, key", [
    (lambda t: t.replace("[[probe]]", "[[probes]]"), "probes"),
    (lambda t: t.replace('pool = "edge"', 'pool = "edge"\ntitel = "x"'), "case.titel"),
    (lambda t: t.replace("context_window", "context_windw = 5\ncontext_window"), "model.context_windw"),
    (lambda t: t.replace('all = ["pnpm"]', 'all = ["pnpm"]\nregex = ""'), "regex"),
    (lambda t: t.replace('all = ["pnpm"]', 'all = ["pnpm"]\nregex = "x*"'), "regex"),
    (lambda t: t.replace('all = ["pnpm"]', 'all = ["pnpm"]\ndraft = "no"'), "draft"),
])
def test_silent_acceptances_in_case_toml(tmp_path, capsys, edit, key):
    folder = make_case(tmp_path / "cases", "a")
    (folder / "case.toml").write_text(edit((folder / "case.toml").read_text()))
    assert key in one_line_exit_2(capsys, ["cases", "validate", "--cases-dir", str(tmp_path / "cases")])


@pytest.mark.parametrize("session, probes", [("", PROBES), (SESSION, PROBES.replace("planted_at = 2", "planted_at = 99"))])
def test_run_refuses_an_empty_session_or_a_fact_past_its_end(tmp_path, capsys, session, probes):
    make_case(tmp_path / "cases", "a", session=session, probes=probes)
    out = tmp_path / "out"
    one_line_exit_2(capsys, ["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out)])
    assert not out.exists()


def test_cassette_version_and_case_are_checked(tmp_path):
    from harness.models.cassette import CassetteTransport

    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 7, "case": "a", "interactions": []}))
    with pytest.raises(HarnessError, match="version"):
        CassetteTransport(path, inner=None, case_id="a")
    path.write_text(json.dumps({"version": 1, "case": "b", "interactions": []}))
    with pytest.raises(HarnessError, match="another case"):
        CassetteTransport(path, inner=None, case_id="a")


# -- paths escape their folders -------------------------------------------------------------------


@pytest.mark.parametrize("session", ["../../secret.jsonl", "/etc/passwd"])
def test_a_case_session_must_live_in_its_folder(tmp_path, capsys, session):
    folder = make_case(tmp_path / "cases", "a")
    (folder / "case.toml").write_text((folder / "case.toml").read_text().replace(
        'title = "t"', f'title = "t"\nsession = "{session}"'))
    assert "outside" in one_line_exit_2(capsys, ["cases", "validate", "--cases-dir", str(tmp_path / "cases")])


def test_a_case_id_of_dot_dot_is_refused(tmp_path):
    folder = tmp_path / "x" / ".."
    (tmp_path / "x").mkdir()
    (tmp_path / "case.toml").write_text('[case]\nid = ".."\npool = "edge"\n[model]\ncontext_window = 100\n')
    with pytest.raises(HarnessError, match="case.id"):
        load_case(folder)


def test_a_label_is_a_safe_folder_name(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    one_line_exit_2(capsys, ["run", "--cases-dir", str(tmp_path / "cases"), "--label", "../escape"])
    assert not (tmp_path / "escape").exists()


# -- usage errors found late ----------------------------------------------------------------------


@pytest.mark.parametrize("option", [["--policy", "bogus"], ["--set", "window=-5"], ["--cassettes", "FILE"]])
def test_bad_run_options_fail_before_any_case(tmp_path, capsys, option):
    make_case(tmp_path / "cases", "a")
    (tmp_path / "FILE").write_text("x")
    if option[0] == "--cassettes":
        option = ["--cassettes", str(tmp_path / "FILE"), "--summarizer", "openai:gpt-5@emulator"]
    out = tmp_path / "out"
    one_line_exit_2(capsys, ["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out), *option])
    assert not (out / "cases").exists() or not list((out / "cases").iterdir())


# -- races ----------------------------------------------------------------------------------------


def test_two_new_runs_into_one_folder_one_wins(tmp_path):
    make_case(tmp_path / "cases", "a")
    from harness.run.config import RunConfig
    from harness.run.matrix import run_header

    header = run_header(RunConfig(), "r", None)
    first, second = RunFolder(tmp_path / "out"), RunFolder(tmp_path / "out")
    first.create(header, resume=False)  # claimed, run.json written
    (tmp_path / "out" / "run.json").unlink()  # the window the old check left open: no run.json yet
    with pytest.raises(HarnessError, match="claimed"):
        second.create(header, resume=False)
    with pytest.raises(HarnessError, match="another process"):
        RunFolder(tmp_path / "out").create(header, resume=True)  # first still holds the lock
    first.release()


def test_two_recordings_of_one_cassette_never_share_a_temporary_file(tmp_path):
    from harness.models.cassette import CassetteTransport

    path = tmp_path / "c.json"
    writers = [CassetteTransport(path, inner=None, mode="all", case_id="a") for _ in range(4)]
    failures = []

    def save(writer):
        try:
            for _ in range(50):
                writer._save()
        except OSError as exc:  # before: one writer's rename took the other's temporary file away
            failures.append(exc)

    threads = [threading.Thread(target=save, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and json.loads(path.read_text())["case"] == "a"
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


# -- the last boundary ----------------------------------------------------------------------------


def test_an_unexpected_exception_is_one_line_with_a_hint(tmp_path, capsys, monkeypatch):
    import harness.cli.cases as cases_cli

    def broken(args):
        raise RuntimeError("something deep\nbroke")

    monkeypatch.setattr(cases_cli, "list_command", broken)
    parser_func = ["cases", "list", "--cases-dir", str(tmp_path)]
    from harness.cli import build_parser

    args = build_parser().parse_args(parser_func)
    assert args.func is not None
    monkeypatch.setattr("harness.cli.build_parser", lambda: _parser_with(build_parser(), broken))
    err = one_line_exit_2(capsys, parser_func)
    assert "RuntimeError: something deep broke" in err and "--debug" in err
    with pytest.raises(RuntimeError):
        main([*parser_func, "--debug"])


def _parser_with(parser, func):
    parser.set_defaults(func=func)
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            for sub in action.choices.values():
                _parser_with(sub, func)
    return parser


def test_discover_still_reads_the_shipped_library():
    assert len(discover(Path(__file__).parents[1] / "cases")) >= 1
