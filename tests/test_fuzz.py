"""A seeded, bounded fuzz test over every reader (issue 17): sessions, case files, run folders, baselines,
cassettes, price files and each transcript format. Each valid document is damaged at random (truncated,
bytes flipped, non-UTF-8 bytes, a value swapped for one of another type, deep nesting); every reader must
answer with a HarnessError (one line, exit 2 at the CLI) or a result, never another exception, and must
leave the files it reads as they were."""

import hashlib
import json
import random
import signal
import tomllib
from pathlib import Path
from typing import Any, Callable

import pytest

from harness.cases import load_case
from harness.cases.toml import validate_case
from harness.cli import main
from harness.errors import HarnessError
from harness.importers import FORMATS, import_transcript
from harness.models.cassette import CassetteTransport
from harness.models.pricing import load_prices
from harness.results.folder import RunFolder, read_run
from harness.run.config import RunConfig
from harness.run.matrix import run_cases
from harness.session import read_session
from harness.studies.gate import make_baseline, read_baseline

from test_runner import make_case

ROOT = Path(__file__).parents[1]
SAMPLES = Path(__file__).parent / "importers" / "data"
SEED = 17
PER_READER = 260  # x 7 readers = 1,820, plus 50 per transcript format x 7 = 350: 2,170 inputs
PER_FORMAT = 40
TOML_VALUES = ["5", "-3", "nan", "inf", '"x"', "[]", "{}", "true", "[[1]]", '""', '"../x"']
WRONG_VALUES: list[Any] = [5, -1, 1e308, "x", "", [], {}, None, True, [[[[]]]], {"a": {"b": 1}}, "\ud800"]


def mutations(original: bytes, rng: random.Random, count: int) -> list[bytes]:
    """`count` damaged copies of a document, each from one of the damage kinds."""
    kinds: list[Callable[[bytes, random.Random], bytes]] = [truncate, flip, non_utf8, swap_value, swap_value,
                                                            nest, duplicate_line]
    return [kinds[i % len(kinds)](original, rng) for i in range(count)]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data))]


def flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def non_utf8(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + data[at:]


def nest(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([50, 1000, 100000])
    deep = b"[" * depth + b"]" * depth
    text = data.decode("utf-8", "replace")
    at = text.find(":", rng.randrange(len(text)))
    if at < 0:
        return deep
    return (text[:at + 1] + " " + deep.decode() + ", " + text[at + 1:]).encode()


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    at = rng.randrange(len(lines))
    return b"".join(lines[:at] + [lines[at]] * 2 + lines[at:])


def swap_value(data: bytes, rng: random.Random) -> bytes:
    """A JSON value (in a JSON or JSONL document) or a TOML value replaced by one of another type."""
    text = data.decode("utf-8")
    try:
        document = json.loads(text)
        return json.dumps(_swap_in(document, rng)).encode()
    except json.JSONDecodeError:
        pass
    lines = text.splitlines()
    if all(_is_json(line) for line in lines if line.strip()) and lines:
        at = rng.randrange(len(lines))
        if lines[at].strip():
            lines[at] = json.dumps(_swap_in(json.loads(lines[at]), rng))
        return ("\n".join(lines) + "\n").encode()
    assignments = [i for i, line in enumerate(lines) if " = " in line and not line.startswith("#")]
    if not assignments:
        return data
    at = rng.choice(assignments)
    key = lines[at].split(" = ", 1)[0]
    lines[at] = f"{key} = {rng.choice(TOML_VALUES)}"
    return ("\n".join(lines) + "\n").encode()


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
        return True
    except json.JSONDecodeError:
        return False


def _swap_in(value: Any, rng: random.Random) -> Any:
    """`value` with one node (found by a random walk) replaced."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        if rng.random() < 0.15:
            return {k: v for k, v in value.items() if k != key}  # a missing key
        return {**value, key: _swap_in(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        at = rng.randrange(len(value))
        return value[:at] + [_swap_in(value[at], rng)] + value[at + 1:]
    return rng.choice(WRONG_VALUES)


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def fuzz(target: Path, folder: Path, read: Callable[[], Any], count: int, seed: int) -> list[str]:
    """Damage `target` `count` times, calling `read` on each; returns what went wrong (empty: nothing)."""
    rng = random.Random(seed)
    original = target.read_bytes()
    problems = []
    for number, damaged in enumerate(mutations(original, rng, count)):
        target.write_bytes(damaged)
        before = snapshot(folder)
        try:
            read()
        except HarnessError as exc:
            if "\n" in str(exc):
                problems.append(f"#{number}: a multi-line error: {str(exc)[:200]!r}")
        except Exception as exc:  # the finding: a traceback a user would see
            problems.append(f"#{number}: {type(exc).__name__}: {str(exc)[:200]} on {damaged[:120]!r}")
        if snapshot(folder) != before:
            problems.append(f"#{number}: reading changed the files in {folder}")
    target.write_bytes(original)
    return problems


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-run")
    make_case(root / "cases", "a")
    from harness.cases import discover

    run_cases(discover(root / "cases"), RunConfig(), RunFolder(root / "run"), run_id="r")
    return root / "run"


def _case_reader(folder: Path) -> Callable[[], Any]:
    def read():
        validate_case(load_case(folder))
    return read


def test_sessions_and_case_files(tmp_path):
    folder = make_case(tmp_path, "a")
    problems = fuzz(folder / "session.jsonl", folder, lambda: read_session(folder / "session.jsonl"), PER_READER, SEED)
    problems += fuzz(folder / "case.toml", folder, _case_reader(folder), PER_READER, SEED + 1)
    assert not problems, "\n".join(problems[:10])


def test_run_folders_and_baselines(run_folder, tmp_path):
    run_file, case_file = run_folder / "run.json", run_folder / "cases" / "a.json"
    problems = fuzz(run_file, run_folder, lambda: read_run(run_folder), PER_READER, SEED + 2)
    problems += fuzz(case_file, run_folder, lambda: RunFolder(run_folder).case_records(), PER_READER, SEED + 3)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(make_baseline(read_run(run_folder)), indent=1))
    problems += fuzz(baseline, tmp_path, lambda: read_baseline(baseline), PER_READER, SEED + 4)
    assert not problems, "\n".join(problems[:10])


def test_cassettes_and_prices(tmp_path):
    smallest = min((ROOT / "goldens" / "cassettes").rglob("*.json"), key=lambda p: p.stat().st_size)
    cassette = tmp_path / "cassette.json"
    cassette.write_bytes(smallest.read_bytes())
    case_id = json.loads(cassette.read_text())["case"]
    problems = fuzz(cassette, tmp_path, lambda: CassetteTransport(cassette, inner=None, case_id=case_id),
                    PER_READER, SEED + 5)
    prices = tmp_path / "prices.toml"
    shipped = (ROOT / "harness" / "models" / "pricing.toml").read_text()
    first = next(iter(tomllib.loads(shipped)["models"]))
    prices.write_text(shipped)
    problems += fuzz(prices, tmp_path, lambda: load_prices(prices)[first], PER_READER, SEED + 6)
    assert not problems, "\n".join(problems[:10])


SAMPLE_OF = {"claude-code": "claude_code.jsonl", "claude-code-openai": "claude_code_openai.json",
             "codex": "codex.jsonl", "openai": "openai.json", "anthropic": "anthropic.json",
             "mini-swe-agent": "mini_swe_agent.traj.json", "swe-agent": "swe_agent.traj", "atif": "atif.json"}


def test_every_transcript_format_has_a_sample():
    assert set(SAMPLE_OF) == set(FORMATS)


@pytest.mark.parametrize("fmt", sorted(SAMPLE_OF))
def test_transcripts(tmp_path, fmt):
    transcript = tmp_path / SAMPLE_OF[fmt]
    transcript.write_bytes((SAMPLES / SAMPLE_OF[fmt]).read_bytes())
    problems = fuzz(transcript, tmp_path, lambda: import_transcript(transcript, fmt, window=8000), PER_FORMAT,
                    SEED + 7)
    problems += fuzz(transcript, tmp_path, lambda: import_transcript(transcript, "auto", window=8000), PER_FORMAT // 4,
                     SEED + 8)
    assert not problems, "\n".join(problems[:10])


# ---------------------------------------------------------------------------------------------
# bad command lines and inputs (issue 33.5): each is refused with exit 2 and an error line naming the file or
# option, never the catch-all, within a time limit; seeded variants of each


INPUT_LIMIT_S = 60  # each input is refused in well under a second on a quiet machine; past this, it hung


class Hung(BaseException):
    """Raised by the alarm: a BaseException, so no handler in the harness mistakes it for an input error."""


def _huge_int(rng: random.Random) -> str:
    return str(rng.randint(1, 9)) + "0" * rng.choice([4300, 5000, 20000])


def _deep_toml(rng: random.Random) -> str:
    depth = rng.choice([1000, 20000, 100000])
    return "[" * depth + "]" * depth


def _case(root: Path, name: str = "a") -> Path:
    folder = make_case(root / "cases", name)
    return folder


def _toml_line(folder: Path, line: str) -> None:
    toml = folder / "case.toml"
    toml.write_text(toml.read_text().replace('title = "t"', f'title = "t"\n{line}', 1))


def in_case_toml_huge_int(root, rng):
    folder = _case(root)
    toml = folder / "case.toml"
    toml.write_text(toml.read_text().replace("context_window = 2000", f"context_window = {_huge_int(rng)}"))
    return ["cases", "validate", "--cases-dir", str(root / "cases")], "case.toml"


def in_session_huge_int(root, rng):
    folder = _case(root)
    session = folder / "session.jsonl"
    session.write_text(session.read_text().replace('{"role": "user"', '{"role": "user", "meta": {"n": '
                                                    + _huge_int(rng) + "}", 1))
    return ["run", "--cases-dir", str(root / "cases"), "--out", str(root / "out")], "session.jsonl"


def in_run_json_huge_int(root, rng):
    (root / "run").mkdir()
    (root / "run" / "run.json").write_text('{"schema_version": ' + _huge_int(rng) + "}")
    return ["compare", str(root / "run"), str(root / "run")], "run.json"


def in_prices_huge_int(root, rng):
    _case(root)
    (root / "prices.toml").write_text(f"[models.x]\ninput = {_huge_int(rng)}\n")
    return ["cost", "--cases-dir", str(root / "cases"), "--prices", str(root / "prices.toml")], "prices.toml"


def deep_case_toml(root, rng):
    _toml_line(_case(root), f"x = {_deep_toml(rng)}")
    return ["run", "--cases-dir", str(root / "cases"), "--out", str(root / "out")], "case.toml"


def deep_prices(root, rng):
    _case(root)
    (root / "prices.toml").write_text(f"[models.x]\ninput = {_deep_toml(rng)}\n")
    return ["cost", "--cases-dir", str(root / "cases"), "--prices", str(root / "prices.toml")], "prices.toml"


def session_symlink_loop(root, rng):
    folder = _case(root)
    (folder / "session.jsonl").unlink()
    name = rng.choice(["session.jsonl", "loop.jsonl"])
    if name != "session.jsonl":
        (folder / "loop.jsonl").symlink_to("session.jsonl")
    (folder / "session.jsonl").symlink_to(name)
    return ["cases", "validate", "--cases-dir", str(root / "cases")], "session.jsonl"


def unwritable_out(root, rng):
    _case(root)
    return ["run", "--cases-dir", str(root / "cases"), "--out", f"/proc/harness-{rng.randrange(10**6)}"], "--out"


def unwritable_markdown(root, rng):
    _case(root)
    return ["cost", "--cases-dir", str(root / "cases"), "--markdown", f"/proc/cost-{rng.randrange(10**6)}.md"], \
        "--markdown"


def missing_policy_program(root, rng):
    _case(root)
    program = f"/nonexistent/prog-{rng.randrange(10**6)}"
    return ["run", "--cases-dir", str(root / "cases"), "--policy", f"cmd:{program}", "--out", str(root / "out")], \
        program


def loose_boolean(root, rng):
    _case(root)
    value = rng.choice(["maybe", "ture", "2", "enabled", "nope"])
    return ["run", "--cases-dir", str(root / "cases"), "--set", f"enabled={value}", "--out", str(root / "out")], \
        "enabled"


def bad_policy_table(root, rng):
    folder = _case(root)
    key = rng.choice(["reserve_tokens", "tail_cap_tokens", "summary_tokens"])
    toml = folder / "case.toml"
    toml.write_text(toml.read_text().replace(f"{key} = ", f"{key} = -{rng.randint(1, 9)}0 # was ", 1))
    return ["cases", "validate", "--cases-dir", str(root / "cases")], "case.toml"


def import_empty_session(root, rng):
    (root / "t.json").write_text(rng.choice(["[]", '[{"role": "system", "content": "x"}]', '{"messages": []}']))
    return ["cases", "import", str(root / "t.json"), "--from", "openai", "--window", "1000", "--out",
            str(root / "imported")], "t.json"


def import_negative_window(root, rng):
    (root / "t.json").write_bytes((SAMPLES / "openai.json").read_bytes())
    return ["cases", "import", str(root / "t.json"), "--from", "openai", "--window", str(-rng.randint(1, 99)),
            "--out", str(root / "imported")], "context window"


def backtracking_regex(root, rng):
    pattern = rng.choice([r"(a+)+$", r"(a|a)*b", r"(.*)*x", r"(\\w+\\s?)+$"])
    folder = make_case(root / "cases", "a", probes=f'\n[[probe]]\nid = "r"\nkind = "recall"\nquestion = "Q?"\n'
                                                     f'regex = "{pattern}"\nplanted_at = 1\n')
    if rng.random() < 0.5:
        return ["cases", "grade", "a", "r", "a" * 60 + "!", "--cases-dir", str(root / "cases")], str(folder)
    return ["run", "--cases-dir", str(root / "cases"), "--out", str(root / "out")], str(folder)


BAD_INPUTS = [in_case_toml_huge_int, in_session_huge_int, in_run_json_huge_int, in_prices_huge_int, deep_case_toml,
              deep_prices, session_symlink_loop, unwritable_out, unwritable_markdown, missing_policy_program,
              loose_boolean, bad_policy_table, import_empty_session, import_negative_window, backtracking_regex]
VARIANTS = 3


def _refused(argv: list[str], capsys) -> tuple[int, str]:
    """The exit code and what was printed, the command stopped by an alarm past INPUT_LIMIT_S."""
    def alarm(signum, frame):
        raise Hung()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(INPUT_LIMIT_S)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    return code, captured.err + captured.out


@pytest.mark.parametrize("make", BAD_INPUTS, ids=lambda make: make.__name__)
def test_bad_inputs_are_refused_naming_the_file_or_option(tmp_path, capsys, make):
    rng = random.Random(f"{SEED}-{make.__name__}")
    problems = []
    for variant in range(VARIANTS):
        root = tmp_path / str(variant)
        root.mkdir()
        argv, needle = make(root, rng)
        try:
            code, printed = _refused(argv, capsys)
        except Hung:
            problems.append(f"variant {variant}: no answer within {INPUT_LIMIT_S} s: {argv}")
            continue
        lines = [line for line in printed.splitlines() if line.strip()]  # validate lists problems, not `error:`
        if code != 2:
            problems.append(f"variant {variant}: accepted (exit {code}): {argv}")
        elif not lines or "--debug for the traceback" in printed or "Traceback" in printed:
            problems.append(f"variant {variant}: the catch-all or nothing printed: {printed[-300:]!r}")
        elif not any(needle in line for line in lines):
            problems.append(f"variant {variant}: no line names {needle!r}: {lines[-1][:300]!r}")
        if (root / "out" / "run.json").exists() or (root / "imported").exists():
            problems.append(f"variant {variant}: refused after the work: {argv}")
    assert not problems, "\n".join(problems)
