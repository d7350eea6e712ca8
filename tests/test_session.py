"""session.jsonl: round trip, segmentation, and one test per validation error (message + exit code)."""

import json

import pytest

from harness.cli import main
from harness.errors import InputError
from harness.session import dumps_session, parse_session, read_session

from builders import jsonl, parse

SYSTEM = {"role": "system", "content": "sys"}
USER = {"role": "user", "content": "fix it"}


def call(*ids):
    return {"role": "assistant", "content": "", "tool_calls": [{"id": i, "name": "bash", "arguments": {"cmd": "ls"}}
                                                                for i in ids]}


def result(i):
    return {"role": "tool", "tool_call_id": i, "content": "ok"}


def test_round_trip_keeps_every_field(tmp_path):
    records = [SYSTEM, USER, call("a", "b"), result("a"), {**result("b"), "is_error": True},
               {"role": "compaction", "content": "summary", "covers": 2, "origin": "manual"},
               {"role": "assistant", "content": "done", "id": "m1", "ts": "2026-11-30T00:00:00Z",
                "usage": {"input_tokens": 5}, "meta": {"x": 1}}]
    session = parse(*records)
    assert [json.loads(line) for line in dumps_session(session).splitlines()] == records
    path = tmp_path / "s.jsonl"
    path.write_text(dumps_session(session))
    assert read_session(path).messages == session.messages


def test_segmentation_turns_and_steps_with_parallel_calls():
    session = parse(SYSTEM, USER, call("a", "b"), result("a"), result("b"),
                    {"role": "assistant", "content": "done"}, USER, call("c"), result("c"))
    turns = session.turns
    assert [(t.start, t.end) for t in turns] == [(0, 5), (5, 8)]
    assert [(s.start, s.end) for s in turns[0].steps] == [(1, 4), (4, 5)]  # a and b: one step
    assert [(s.start, s.end) for s in turns[1].steps] == [(6, 8)]
    assert session.turn_of == (0, 0, 0, 0, 0, 1, 1, 1)


ERRORS = [
    (['{"role": "user", "content": "x"', ], 1, None, "bad JSON"),
    (jsonl({"role": "robot", "content": "x"}), 1, "role", "unknown role 'robot'"),
    (jsonl(USER, result("zz")), 2, "tool_call_id", "tool result 'zz' has no matching call"),
    (jsonl(USER, call("a"), {"role": "assistant", "content": "next"}), 3, "tool_calls",
     "tool call a has no result before the next assistant message"),
    (jsonl(SYSTEM, USER, SYSTEM), 3, "role", "a second system message"),
    (jsonl(USER, {"role": "compaction", "content": "s", "covers": 5}), 2, "covers", "5 is out of range"),
    (jsonl(USER, {"role": "compaction", "content": "s", "covers": 0}), 2, "covers", "out of range"),
    (jsonl({"role": "user", "content": 3}), 1, "content", "must be a string"),
    (jsonl(USER, {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "bash", "arguments": "ls"}]},
           result("a")), 2, "tool_calls[0].arguments", "must be a JSON object"),
    (jsonl({"role": "user", "content": "x", "colour": "red"}), 1, "colour", "unknown field"),
    (jsonl(USER, call("a")), 2, "tool_calls", "tool call 'a' has no result"),
]


@pytest.mark.parametrize("lines,line,field,problem", ERRORS)
def test_validation_errors_name_file_line_and_field(lines, line, field, problem):
    with pytest.raises(InputError) as caught:
        parse_session(lines, "cases/x/session.jsonl")
    error = caught.value
    assert (error.path, error.line, error.field) == ("cases/x/session.jsonl", line, field)
    assert problem in str(error)
    assert str(error).startswith(f"cases/x/session.jsonl:{line}: ")


@pytest.mark.parametrize("lines,line,field,problem", ERRORS)
def test_validation_errors_exit_2_with_one_line(tmp_path, capsys, lines, line, field, problem):
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["simulate", str(path), "--window", "1000"]) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1
    assert message.startswith(f"error: {path}:{line}: ") and problem in message


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(["simulate", str(tmp_path / "nope.jsonl"), "--window", "1000"]) == 2
    assert "no such session file" in capsys.readouterr().err


def test_reads_a_gzip_compressed_session(tmp_path):
    import gzip
    from harness.session import read_session
    text = '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n'
    (tmp_path / "session.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "session.jsonl").write_text(text)
    packed, plain = read_session(tmp_path / "session.jsonl.gz"), read_session(tmp_path / "session.jsonl")
    assert packed.messages == plain.messages and len(packed.messages) == 2


def test_a_corrupt_gzip_session_is_a_one_line_input_error(tmp_path):
    import pytest
    from harness.errors import InputError
    from harness.session import read_session
    (tmp_path / "s.jsonl.gz").write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="cannot read session"):
        read_session(tmp_path / "s.jsonl.gz")


def _deepest_by_characters(text):
    """The deepest bracket level outside strings, one character at a time (escapes honoured)."""
    levels, in_string, escaped = [0], False, False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        else:
            levels.append(levels[-1] + (char in "[{") - (char in "]}"))
    return max(levels)


def test_the_nesting_check_skips_strings_as_a_character_scan_would():
    import random

    from harness.validate import depth_exceeds

    rng = random.Random(7)
    alphabet = ['[', ']', '{', '}', '"', '\\', 'a', ' ', '\n', ',']
    texts = ['[' * 5 + '"[[[[' + ']' * 5, '["\\"[[[[[[["]', '"unterminated [[[[[[', '[[[[[["\\', '[[[[[[[',
             '["a\\\\"[[[[[[]]]]]]]'] + ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
                                          for _ in range(3000)]
    for text in texts:
        for limit in (0, 1, 3, 5):
            assert depth_exceeds(text, limit) == (_deepest_by_characters(text) > limit), (text, limit)
    assert depth_exceeds("[" * 6, 5) and not depth_exceeds('["[[[[[["]', 5)
