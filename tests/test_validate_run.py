"""validate-summarizer as a command that runs for a while: progress per run, writing case by case, --resume,
a refusal to mix a second study into the folder of a first, and a reference control as the alternative."""

import json
from contextlib import contextmanager

from harness.cases import discover
from harness.cli import main
from harness.studies.verdict import validate_summarizer

ONE = ["edge-32k-window"]
TWO = ["edge-32k-window", "desktop-cli-dry-run"]


def _args(out, cases, *extra):
    return ["validate-summarizer", "--model", "builtin", "--alt-model", "builtin", "--out", str(out),
            *(a for case in cases for a in ("--cases", case)), *extra]


class Watcher:
    """A RunObserver that records what it is shown."""

    def __init__(self):
        self.events = []

    @contextmanager
    def running(self, label, total):
        self.events.append(("running", label, total))
        yield lambda record: self.events.append(("case", label, record["case"]))

    def finished(self, finished):
        self.events.append(("finished", finished.run["label"], str(finished.folder.path)))


def test_progress_per_run_and_case(tmp_path):
    watcher = Watcher()
    validate_summarizer(discover("cases", TWO), "builtin", "builtin", tmp_path / "v", observer=watcher)
    same, alt = "summarizer same", "summarizer builtin"
    assert watcher.events[0] == ("running", same, 2) and watcher.events[3] == ("finished", same, str(tmp_path / "v/same"))
    assert sorted(e[2] for e in watcher.events[1:3]) == sorted(TWO)
    assert watcher.events[4] == ("running", alt, 2) and watcher.events[-1][:2] == ("finished", alt)
    assert len(watcher.events) == 8


def test_second_run_into_the_folder_needs_resume(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(_args(out, ONE)) == 0
    capsys.readouterr()
    assert main(_args(out, ONE)) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "--resume" in error and "--out" in error and str(out) in error


def test_resume_continues_both_runs(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(_args(out, ONE)) == 0
    first = {name: json.loads((out / name / "cases" / f"{ONE[0]}.json").read_text()) for name in ("same", "alt")}
    capsys.readouterr()
    # the resumed study keeps the finished case (its file untouched) and adds the new one in both runs
    assert main(_args(out, TWO, "--resume")) == 0
    printed = capsys.readouterr().out
    assert "summarizer same: 2 cases written" in printed and "summarizer builtin: 2 cases written" in printed
    for name in ("same", "alt"):
        run = json.loads((out / name / "run.json").read_text())
        assert sorted(run["cases"]) == sorted(TWO)
        assert json.loads((out / name / "cases" / f"{ONE[0]}.json").read_text()) == first[name]
    assert sorted(json.loads((out / "verdict.json").read_text())["cases"]) == sorted(TWO)


def test_unknown_control_is_one_line(capsys, tmp_path):
    assert main(["validate-summarizer", "--model", "builtin", "--alt-model", "control:nope", "--out",
                 str(tmp_path / "v"), "--cases", ONE[0]]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "control:NAME" in error and "keyword-bag" in error


def test_keyword_bag_control_is_a_known_significant_difference(tmp_path, capsys):
    """builtin against its own summaries replaced by a keyword bag of their size, on two cases that compact:
    the verdict names a significant quality difference, and its numbers are the lines printed beside it."""
    out = tmp_path / "v"
    cases = ["edge-32k-window", "long-auth-refactor"]
    args = ["validate-summarizer", "--model", "builtin", "--alt-model", "control:keyword-bag", "--out", str(out),
            *(a for case in cases for a in ("--cases", case))]
    assert main(args) == 0
    printed = capsys.readouterr().out
    verdict = json.loads((out / "verdict.json").read_text())
    q = verdict["quality"]
    alt_run = json.loads((out / "alt" / "run.json").read_text())
    assert alt_run["configuration"]["control"] == "keyword-bag" and alt_run["configuration"]["summarizer"] == "same"
    assert q["significant"] and q["p_value"] < 0.01 and q["difference"] < 0 and q["void"] is None
    assert verdict["decision"] == {"choice": "same", "by": "quality", "cheaper": None, "flip": "none"}
    same_rate, alt_rate = q["rates"]["summarizer same"], q["rates"]["summarizer control:keyword-bag"]
    # the difference is the two rates' (same probes in both) and the discordant pairs' balance
    assert same_rate["total"] == alt_rate["total"] == q["shared_probes"]
    assert round(alt_rate["rate"] - same_rate["rate"], 4) == round(q["difference"], 4)
    assert round((q["only_alt"] - q["only_same"]) / q["shared_probes"], 4) == round(q["difference"], 4)
    sentence = verdict["verdict"]
    assert sentence.startswith("The data supports the same-model summarizer (builtin) on quality: "
                               f"control:keyword-bag loses {abs(100 * q['difference']):.1f} points")
    assert "cost cannot decide" in sentence
    flat = " ".join(printed.split())  # the terminal wraps long lines
    for quoted in (f"{100 * same_rate['rate']:.1f}% ({same_rate['passed']}/{same_rate['total']})",
                   f"{100 * alt_rate['rate']:.1f}% ({alt_rate['passed']}/{alt_rate['total']})",
                   f"{100 * q['difference']:+.1f} points"):
        assert quoted in flat and quoted.lstrip("+-") in sentence
