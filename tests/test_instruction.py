"""Your own summary prompt (issue 29 item 2): `--instruction FILE` (repeatable, `default` the shipped one) and
a case's `[summary] instruction` replace the shipped instruction in the summarizer request; the instruction is
part of the configuration (run.json, the cassette key, gate's configuration check)."""

import json

import pytest

from harness.cases import load_case
from harness.cli import main
from harness.compaction.summarizer import INSTRUCTION_FILE, SUMMARY_INSTRUCTION, SummaryInput, instruction, summary_request
from harness.session import Message

from test_runner import make_case

MINE = "MY-OWN-PROMPT: summarize tersely, keep {sections} as headings, braces {like this} stay, under {budget}."
EMULATED = "openai:gpt-5@emulator"


def test_the_shipped_instruction_is_a_file_users_can_copy():
    assert INSTRUCTION_FILE.name == "instruction.md" and INSTRUCTION_FILE.is_file()
    assert SUMMARY_INSTRUCTION == INSTRUCTION_FILE.read_text().rstrip("\n")
    assert "## Goal" in instruction(300) and "Stay within 300 tokens." in instruction(300)


def test_a_template_fills_its_placeholders_and_keeps_other_braces():
    text = instruction(120, ("Goal", "Files"), MINE)
    assert text == "MY-OWN-PROMPT: summarize tersely, keep ## Goal\n## Files as headings, braces {like this} stay, under 120."
    request = summary_request(SummaryInput(None, None, (Message("user", "hi"),), 120, 1, 0), "m", template=MINE)
    assert request.messages[-1].content == instruction(120, template=MINE)


def cassette_texts(folder):
    return "".join(p.read_text() for p in folder.rglob("*.json"))


def test_two_instructions_run_side_by_side_and_are_compared(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    mine = tmp_path / "my.md"
    mine.write_text(MINE + "\n")
    out = tmp_path / "out"
    code = main(["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", EMULATED, "--record-mode", "new",
                 "--cassettes", str(tmp_path / "cassettes"), "--instruction", str(mine), "--instruction", "default",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    runs = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/run.json")}
    assert len(runs) == 2 and (out / "comparison.json").is_file()
    (mine_run,) = [r for name, r in runs.items() if name.endswith("-instruction-my")]
    (default_run,) = [r for name, r in runs.items() if name.endswith("-instruction-default")]
    assert mine_run["configuration"]["instruction_file"] == str(mine)
    assert len(mine_run["configuration"]["instruction_sha256"]) == 16
    assert "instruction_sha256" not in default_run["configuration"]  # the shipped one: as a run without the flag
    recorded = json.loads(next((tmp_path / "cassettes").rglob("*.json")).read_text())["interactions"]
    assert len({i["hash"] for i in recorded}) >= 2  # the request text changed, so its cassette key did
    assert "MY-OWN-PROMPT" in cassette_texts(tmp_path / "cassettes")
    comparison = json.loads((out / "comparison.json").read_text())
    assert len(comparison["runs"]) == 2


def test_a_changed_instruction_is_named_a_configuration_change_by_gate(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    mine = tmp_path / "my.md"
    mine.write_text(MINE)
    base = ["run", "--cases-dir", str(tmp_path / "cases")]
    assert main([*base, "--out", str(tmp_path / "base")]) == 0
    assert main(["gate", str(tmp_path / "base"), "--baseline", str(tmp_path / "b.json"), "--update-baseline"]) == 0
    assert main([*base, "--instruction", "default", "--out", str(tmp_path / "same")]) == 0
    assert main(["gate", str(tmp_path / "same"), "--baseline", str(tmp_path / "b.json")]) == 0
    assert main([*base, "--instruction", str(mine), "--out", str(tmp_path / "mine")]) == 0
    capsys.readouterr()
    assert main(["gate", str(tmp_path / "mine"), "--baseline", str(tmp_path / "b.json")]) == 3
    error = capsys.readouterr().err
    assert "configuration change" in error and "instruction_sha256: baseline unset, run " in error
    assert main(["gate", str(tmp_path / "mine"), "--baseline", str(tmp_path / "b.json"),
                 "--allow-config-change"]) in (0, 1)


def test_a_cases_summary_instruction_replaces_the_default_and_the_flag_replaces_it(tmp_path, capsys):
    folder = make_case(tmp_path / "cases", "a")
    with (folder / "case.toml").open("a") as toml:
        toml.write('\n[summary]\ninstruction = "CASE-PROMPT {sections} within {budget}"\n')
    assert load_case(folder).summary_instruction == "CASE-PROMPT {sections} within {budget}"
    argv = ["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", EMULATED, "--record-mode", "all"]
    assert main([*argv, "--cassettes", str(tmp_path / "c1"), "--out", str(tmp_path / "o1")]) == 0
    assert "CASE-PROMPT" in cassette_texts(tmp_path / "c1")
    assert main([*argv, "--cassettes", str(tmp_path / "c2"), "--out", str(tmp_path / "o2"),
                 "--instruction", "default"]) == 0
    assert "CASE-PROMPT" not in cassette_texts(tmp_path / "c2")


@pytest.mark.parametrize("toml, field", [('[summary]\ninstruction = ""\n', "summary.instruction"),
                                          ('[summary]\nprompt = "x"\n', "summary.prompt")])
def test_a_bad_summary_table_names_its_field(tmp_path, toml, field):
    folder = make_case(tmp_path / "cases", "a")
    with (folder / "case.toml").open("a") as handle:
        handle.write("\n" + toml)
    with pytest.raises(Exception, match=field):
        load_case(folder)


def test_a_missing_or_empty_instruction_file_is_one_line_exit_2(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    (tmp_path / "empty.md").write_text("\n")
    for path in (tmp_path / "nope.md", tmp_path / "empty.md"):
        assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--instruction", str(path),
                     "--out", str(tmp_path / "o")]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and str(path) in error


def test_validate_summarizer_takes_an_instruction(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    mine = tmp_path / "my.md"
    mine.write_text(MINE)
    assert main(["validate-summarizer", "--cases-dir", str(tmp_path / "cases"), "--model", "builtin",
                 "--alt-model", "control:empty", "--instruction", str(mine), "--out", str(tmp_path / "v")]) == 0
    for name in ("same", "alt"):
        configuration = json.loads((tmp_path / "v" / name / "run.json").read_text())["configuration"]
        assert configuration["instruction_file"] == str(mine) and configuration["instruction_sha256"]


PLAIN = "Summarize the conversation for your own continuation. Be terse and keep exact values."
HEADED = "Summarize the conversation for your own continuation.\n\n## Goal\n## Next steps\n\nStay within {budget} tokens."


def test_runs_with_two_instructions_are_told_apart_in_every_report_and_in_compare(tmp_path, capsys):
    """Issue 45: each run names its instruction (the file's stem) in the terminal, report.md, report.html, its
    folder and compare's columns, and keeps the instruction's text beside run.json."""
    make_case(tmp_path / "cases", "a")
    (tmp_path / "terse.md").write_text(PLAIN + "\n")
    (tmp_path / "headed.md").write_text(HEADED + "\n")
    out = tmp_path / "out"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--instruction", str(tmp_path / "terse.md"),
                 "--instruction", str(tmp_path / "headed.md"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name, text in (("terse", PLAIN), ("headed", HEADED)):
        (folder,) = out.glob(f"*-instruction-{name}")
        assert f"instruction {name} (its text: instruction.md in the run folder)" in " ".join(printed.split())
        assert f"instruction `{name}`" in (folder / "report.md").read_text()
        assert f"instruction {name} (its text" in (folder / "report.html").read_text()
        assert (folder / "instruction.md").read_text() == text + "\n"
        assert json.loads((folder / "run.json").read_text())["configuration"]["instruction_name"] == name
    runs = [str(p) for p in sorted(out.glob("*-instruction-*"))]
    capsys.readouterr()
    assert main(["compare", *runs, "--json"]) == 0
    columns = sorted(r["label"] for r in json.loads(capsys.readouterr().out)["runs"])
    assert "-instruction-headed" in columns[0] and "-instruction-terse" in columns[1]
    for name in ("terse", "headed"):  # runs made one at a time have no label: their column names the instruction
        assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--instruction", str(tmp_path / f"{name}.md"),
                     "--out", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "terse"), str(tmp_path / "headed"), "--json"]) == 0
    assert [r["label"] for r in json.loads(capsys.readouterr().out)["runs"]] == [
        "default / builtin / builtin / instruction terse", "default / builtin / builtin / instruction headed"]


def test_one_instruction_takes_the_runs_label_as_its_name(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    (tmp_path / "instruction.md").write_text(PLAIN)
    out = tmp_path / "out"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--instruction", str(tmp_path / "instruction.md"),
                 "--label", "terse-v2", "--out", str(out)]) == 0
    assert json.loads((out / "run.json").read_text())["configuration"]["instruction_name"] == "terse-v2"
    assert "instruction terse-v2 (its text" in " ".join(capsys.readouterr().out.split())


def test_the_builtin_warns_that_a_headingless_instruction_changes_nothing(tmp_path, capsys):
    """The builtin summarizer reads only an instruction's sections: without any, the run is the shipped
    instruction's (the same summaries), and the terminal says so before the run; with some, it names them."""
    make_case(tmp_path / "cases", "a")
    (tmp_path / "terse.md").write_text(PLAIN)
    (tmp_path / "headed.md").write_text(HEADED)
    out = tmp_path / "out"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--instruction", str(tmp_path / "terse.md"),
                 "--instruction", str(tmp_path / "headed.md"), "--instruction", "default", "--out", str(out)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "warning: instruction terse names no sections" in err and "the shipped instruction's" in err
    assert "from instruction headed it takes Goal, Next steps" in err
    assert err.count("warning:") == 2  # the shipped instruction warns of nothing
    contexts = {name: json.loads(next(out.glob(f"*-instruction-{name}/cases/a.json")).read_text())["contexts"]
                for name in ("terse", "headed", "default")}
    summaries = {name: [c["summary"] for c in found.values()] for name, found in contexts.items()}
    assert all(summaries["terse"]) and summaries["terse"] == summaries["default"]  # what the warning says
    assert summaries["headed"] != summaries["default"]


def test_a_model_that_reads_prose_gets_no_warning(tmp_path, capsys):
    from harness.run.config import RunConfig

    config = RunConfig(summarizer="openai:gpt-5", instruction=PLAIN, instruction_file="terse.md")
    assert config.instruction_warning() is None
    assert RunConfig(summarizer=EMULATED, instruction=PLAIN, instruction_file="t.md").instruction_warning()
