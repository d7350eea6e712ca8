"""The external policy protocol: the Node.js reference adapter against the in-process default policy,
the wire itself (incremental, schema-shaped), and every way an adapter can misbehave."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.cases import discover
from harness.cli import main
from harness.compaction.compactor import Compactor
from harness.errors import HarnessError
from harness.policy import PolicyConfig, make_policy
from harness.policy.external import REFERENCE_ADAPTER, SCHEMA, TIMEOUT_ENV, ExternalPolicy
from harness.session import CompactionRecord, Session, dumps_session
from harness.studies.simulate import Simulator, Target
from harness.compaction.summarizer import PlaceholderSummarizer
from harness.tokens import MessageTokens, counter

from builders import Builder

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
ADAPTER = f"cmd:node {REFERENCE_ADAPTER}"
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: the reference adapter is Node.js")


_COUNTS: dict[int, tuple] = {}  # per-message counts shared between the replays of one session


def events(session, name, config):
    if id(session) not in _COUNTS:
        _COUNTS.clear()
        _COUNTS[id(session)] = (session, MessageTokens(counter("chars4"), session.messages),
                                MessageTokens(counter("o200k"), session.messages))
    _, estimate, true = _COUNTS[id(session)]
    replay = Compactor(session, make_policy(name, config), PlaceholderSummarizer(), points=("end",),
                       estimate=estimate, true=true).run()
    return [(e.send_index, e.tail_start, e.turns_kept, e.steps_kept, e.truncated_to_step) for e in replay.events], \
        replay


def assert_same_events(session, config):
    expected, reference = events(session, "default", config)
    got, external = events(session, ADAPTER, config)
    assert got == expected
    # no_shrink needs the policy's own trigger, which an adapter does not expose; every other risk must match
    judged = lambda replay: {k: v for k, v in replay.risk_counts().items() if k != "no_shrink"}  # noqa: E731
    assert judged(reference) == judged(external)
    assert external.risk_counts()["no_shrink"] == 0
    return expected


def _cases():
    try:
        return discover(ROOT / "cases")
    except HarnessError:
        return []


CASES = _cases()


# ---------------------------------------------------------------------------------------------
# the reference adapter reproduces the default policy exactly


@needs_node
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reference_adapter_reproduces_the_default_policy_on_every_case(case):
    base = PolicyConfig(context_window=case.context_window, max_output_tokens=case.max_output_tokens)
    assert_same_events(case.session, base)
    # smaller windows force more (and tighter) compactions through the same tail rules
    for window in (case.context_window // 2, case.context_window // 4):
        assert_same_events(case.session, base.with_settings(context_window=window, reserve_tokens=window // 4,
                                                            tail_cap_tokens=max(1, window // 8)))
    assert_same_events(case.session, base.with_settings(mode="lookup", context_window=case.context_window // 2))


@needs_node
def test_there_are_cases_to_compare_or_the_comparison_says_so():
    if not CASES:
        pytest.skip("no cases under cases/ yet: the per-case comparison had nothing to run")
    assert all(c.session.messages for c in CASES)


def hand_built_sessions():
    b = Builder()
    for n in range(20):
        b.user(40)
        for size in (4000, 700, 2500, 9000, 12000)[: 1 + n % 5]:
            b.step(size)
        b.step()
    mixed = b.session()
    b = Builder(system=None)
    b.step(100)  # the session opens without a user message
    b.user(10); b.step(40_000); b.step(3)  # a giant step
    for _ in range(6):
        b.user(10); b.step(4000, 4000, 4000); b.step(9000)  # parallel calls
    odd = b.session()
    b = Builder()
    b.user(10)
    for _ in range(60):
        b.step(2500)  # one long tool loop: every compaction cuts inside the same turn
    loop = b.session()
    return {"mixed": mixed, "odd": odd, "loop": loop}


@needs_node
@pytest.mark.parametrize("name", ["mixed", "odd", "loop"])
@pytest.mark.parametrize("settings", [
    {}, {"tail_turns": 1}, {"tail_turns": 5, "tail_cap_tokens": 30_000}, {"reserve_tokens": 4096},
    {"mode": "off"}, {"enabled": False},
])
def test_reference_adapter_reproduces_the_default_policy_on_hand_built_sessions(name, settings):
    session = hand_built_sessions()[name]
    expected = assert_same_events(session, PolicyConfig(context_window=48_000, **settings))
    if settings.get("mode") != "off" and settings.get("enabled", True):
        assert expected, "the session must compact for the comparison to mean something"


@needs_node
def test_reference_adapter_in_lookup_mode_follows_the_recorded_block():
    session = hand_built_sessions()["mixed"]
    with_block = Session(session.messages, session.system, (CompactionRecord("MANUAL", 20, 25),))
    expected = assert_same_events(with_block, PolicyConfig(context_window=48_000, mode="lookup"))
    assert expected[0][1] == 20


@needs_node
def test_simulate_and_sweep_take_a_cmd_policy(tmp_path, capsys):
    case = tmp_path / "ext-case"
    case.mkdir()
    (case / "case.toml").write_text('[case]\nid = "ext-case"\npool = "edge"\n\n[model]\ncontext_window = 48000\n',
                                    encoding="utf-8")
    (case / "session.jsonl").write_text(dumps_session(hand_built_sessions()["mixed"]), encoding="utf-8")
    assert main(["simulate", str(case), "--policy", "default", "--json"]) == 0
    reference = json.loads(capsys.readouterr().out)["events"]
    assert main(["simulate", str(case), "--policy", ADAPTER, "--json"]) == 0
    external = json.loads(capsys.readouterr().out)["events"]
    keys = ("send_index", "tail_start", "turns_kept", "steps_kept", "truncated_to_step", "tokens_after_est")
    assert [{k: e[k] for k in keys} for e in external] == [{k: e[k] for k in keys} for e in reference]
    session = hand_built_sessions()["mixed"]
    rows = Simulator(Target("mixed", session)).sweep(ADAPTER, PolicyConfig(context_window=48_000), [48_000, 64_000],
                                                    [8192, 16384])
    same = Simulator(Target("mixed", session)).sweep("default", PolicyConfig(context_window=48_000),
                                                    [48_000, 64_000], [8192, 16384])
    assert [r["compactions"] for r in rows] == [r["compactions"] for r in same]


# ---------------------------------------------------------------------------------------------
# the wire: incremental and shaped as the schema says

RECORDER = """
import json, sys
log = open(sys.argv[1], "w")
for line in sys.stdin:
    message = json.loads(line)
    log.write(line)
    log.flush()
    kind = message["type"]
    if kind == "start":
        print(json.dumps({"type": "ready"}), flush=True)
    elif kind == "send":
        big = message["context_tokens"] >= 20000
        print(json.dumps({"action": "compact", "tail_start": message["index"], "summarize": False}
                         if big else {"action": "keep"}), flush=True)
    elif kind == "fold":
        print(json.dumps({"type": "folded"}), flush=True)
"""


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_each_send_carries_only_the_new_messages_and_matches_the_schema(tmp_path):
    recorder = script(tmp_path, "recorder.py", RECORDER)
    log = tmp_path / "wire.jsonl"
    session = hand_built_sessions()["mixed"]
    policy = make_policy(f"cmd:{sys.executable} {recorder} {log}", PolicyConfig(context_window=48_000))
    replay = Compactor(session, policy, PlaceholderSummarizer()).run()
    wire = [json.loads(line) for line in log.read_text().splitlines()]
    sends = [m for m in wire if m["type"] == "send"]
    assert sum(len(m["new"]) for m in sends) == len(session.messages)
    position = 0
    for message in sends:
        assert [role for role, _ in message["new"]] == [m.role for m in session.messages[position:message["index"]]]
        position = message["index"]
    folds = [m for m in wire if m["type"] == "fold"]
    assert len(folds) == len(replay.events) > 0 and all(f["summary"] is None for f in folds)
    assert wire[0]["type"] == "start" and wire[-1]["type"] == "end"
    schema = json.loads(SCHEMA.read_text())
    for message in wire:
        definition = schema["$defs"][message["type"]]
        assert set(definition["required"]) <= set(message), message["type"]
        assert set(message) <= set(definition["properties"]), message["type"]


# ---------------------------------------------------------------------------------------------
# misbehaving adapters: one clear line naming the command


BAD = {
    "crash": ("import sys\nsys.stdin.readline(); print('{\"type\": \"ready\"}', flush=True)\n"
              "sys.stdin.readline(); sys.stderr.write('boom: adapter bug\\n'); sys.exit(3)\n",
              r"exited without answering at send \d+ \(exit code 3; stderr: boom: adapter bug\)"),
    "hang": ("import sys, time\nsys.stdin.readline(); print('{\"type\": \"ready\"}', flush=True)\n"
             "sys.stdin.readline(); time.sleep(60)\n",
             r"did not answer within 0.5 s"),
    "malformed": ("import sys\nsys.stdin.readline(); print('{\"type\": \"ready\"}', flush=True)\n"
                  "sys.stdin.readline(); print('keep please', flush=True)\nsys.stdin.readline()\n",
                  r"answered with malformed JSON .*: keep please at send"),
    "wrong-action": ("import sys\nsys.stdin.readline(); print('{\"type\": \"ready\"}', flush=True)\n"
                     "sys.stdin.readline(); print('{\"action\": \"maybe\"}', flush=True)\nsys.stdin.readline()\n",
                     r"answered \{\"action\": \"maybe\"\}; expected"),
    "no-ready": ("import sys\nsys.stdin.readline(); print('{\"hello\": 1}', flush=True)\nsys.stdin.readline()\n",
                 r"answered the start message with"),
    "tool-cut": ("import sys, json\nsys.stdin.readline(); print('{\"type\": \"ready\"}', flush=True)\n"
                 "for line in sys.stdin:\n"
                 "    m = json.loads(line)\n"
                 "    print(json.dumps({'action': 'compact', 'tail_start': m['index'] - 1}), flush=True)\n",
                 r"chose tail_start \d+, a tool result"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_misbehaving_adapter_is_one_clear_error(kind, tmp_path):
    body, pattern = BAD[kind]
    path = script(tmp_path, f"{kind}.py", body)
    command = f"{sys.executable} {path}"
    # Only the hang waits out its timeout; the others answer at once, but a loaded CI machine (the suite runs in
    # parallel) may take longer than 0.5 s to start Python, which would turn their error into a timeout.
    timeout_s = 0.5 if kind == "hang" else 10.0
    policy = ExternalPolicy(command, PolicyConfig(context_window=48_000, reserve_tokens=47_000), timeout_s=timeout_s)
    session = hand_built_sessions()["mixed"]
    with pytest.raises(HarnessError) as raised:
        Compactor(session, policy, PlaceholderSummarizer()).run()
    message = str(raised.value)
    assert "\n" not in message and f"`{command}`" in message
    assert __import__("re").search(pattern, message), message
    assert policy._process is None  # the process was ended, not left behind


def test_a_missing_command_and_the_cli_exit_code(tmp_path, capsys):
    session_file = tmp_path / "s.jsonl"
    session_file.write_text(dumps_session(hand_built_sessions()["mixed"]), encoding="utf-8")
    code = main(["simulate", str(session_file), "--window", "48000", "--policy", "cmd:no-such-adapter-binary x"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert err.startswith("error: policy adapter `no-such-adapter-binary x` cannot start")
    with pytest.raises(HarnessError, match="needs a command"):
        make_policy("cmd:  ", PolicyConfig(context_window=1000))


def test_the_timeout_is_configurable_from_the_environment(monkeypatch):
    monkeypatch.setenv(TIMEOUT_ENV, "2.5")
    assert make_policy("cmd:node x.js", PolicyConfig(context_window=1000)).timeout_s == 2.5
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(HarnessError, match=TIMEOUT_ENV):
        make_policy("cmd:node x.js", PolicyConfig(context_window=1000))


@needs_node
def test_a_100k_message_session_is_not_pathological():
    import time

    b = Builder()
    while len(b.messages) < 100_000:
        b.user(30)
        for _ in range(8):
            b.step(400)
        b.step()
    session = b.session()
    config = PolicyConfig(context_window=128_000, summary_tokens=1000)
    started = time.perf_counter()
    replay = Compactor(session, make_policy(ADAPTER, config), PlaceholderSummarizer(),
                       true_counter=counter("chars4")).run()
    assert replay.events and replay.sends > 50_000
    assert time.perf_counter() - started < 60  # about 3 s here: one short line each way per send


@needs_node
def test_a_missing_node_script_names_nodes_error_not_its_version_banner(tmp_path):
    policy = make_policy(f"cmd:node {tmp_path / 'absent.js'}", PolicyConfig(context_window=48_000))
    with pytest.raises(HarnessError, match=r"exited without answering at start \(exit code 1; stderr: Error: Cannot find module"):
        Compactor(hand_built_sessions()["mixed"], policy, PlaceholderSummarizer()).run()
