"""The peer policies (POLICY.md's peer table), each checked on the scenarios its source publishes."""

import json
from dataclasses import dataclass, field

import pytest

from harness.cli import main
from harness.compaction import PRUNED_MARKER, Compactor
from harness.policy import ContextView, PolicyConfig, SendPoint, make_policy, policy_names
from harness.policy.peers import (ClaudeCodePolicy, CodexPolicy, GeminiCliPolicy, OpencodePolicy, PiPolicy)
from harness.session import Message, Session, dumps_session
from harness.compaction.summarizer import SummaryInput, SummaryResult
from harness.tokens import MessageTokens, counter

from builders import Builder

PEERS = ("pi", "opencode", "codex", "claude-code", "gemini-cli", "ratio-20", "truncate")


@dataclass
class Recording:
    """Remembers every summarizer input; writes a short summary (or a long one, to test rejection)."""

    name: str = "recording"
    summary_chars: int = 40
    calls: list[SummaryInput] = field(default_factory=list)

    def summarize(self, request: SummaryInput) -> SummaryResult:
        self.calls.append(request)
        return SummaryResult("s" * self.summary_chars)


def view(session, end=None, live_start=0, **extra):
    tokens = MessageTokens(counter("chars4"), session.messages)
    return ContextView(session, live_start, len(session.messages) if end is None else end, tokens.__getitem__,
                       **extra)


def replay(session, name, summarizer=None, points=("end",), **settings):
    settings.setdefault("context_window", 64_000)
    policy = make_policy(name, PolicyConfig(**settings))
    summarizer = summarizer or Recording()
    return Compactor(session, policy, summarizer, points=points).run(), summarizer


def long_session(turns=30, results=(6000, 3000)):
    b = Builder()
    for _ in range(turns):
        b.user(50)
        for size in results:
            b.step(size)
        b.step()
    return b.session()


def send(tokens, mid_turn=False):
    return SendPoint(10, tokens, mid_turn)


# ---------------------------------------------------------------------------------------------
# triggers: the published numbers


def test_every_peer_is_registered():
    assert set(PEERS) <= set(policy_names())


def test_pi_strict_trigger_window_100k_reserve_10k():
    pi = make_policy("pi", PolicyConfig(context_window=100_000, reserve_tokens=10_000))
    assert pi.should_compact(send(95_000))
    assert not pi.should_compact(send(89_000))
    assert not pi.should_compact(send(90_000))  # strict: exactly window - reserve does not compact
    assert pi.should_compact(send(90_001))


def test_pi_checks_only_between_whole_turns():
    pi = make_policy("pi", PolicyConfig(context_window=100_000, reserve_tokens=10_000))
    assert not pi.should_compact(send(99_000, mid_turn=True))  # not between tool rounds


def test_pi_defaults_are_its_own_reserve_and_summary_budget():
    pi = PiPolicy(PolicyConfig(context_window=200_000))
    assert pi.would_trigger(200_000 - 16_384 + 1) and not pi.would_trigger(200_000 - 16_384)
    b = Builder()
    for _ in range(4):
        b.user(10); b.step(9000)
    assert pi.plan(view(b.session())).summary.budget_tokens == int(0.8 * 16_384)


def test_opencode_usable_window_56k_with_a_12k_reservation():
    policy = OpencodePolicy(PolicyConfig(context_window=100_000, max_output_tokens=32_000), reserved_tokens=12_000)
    assert policy.usable == 56_000
    assert policy.should_compact(send(56_000)) and not policy.should_compact(send(55_999))


def test_opencode_usable_window_148k_for_200k_and_32k_output():
    policy = make_policy("opencode", PolicyConfig(context_window=200_000, max_output_tokens=32_000))
    assert policy.usable == 148_000
    assert policy.should_compact(send(148_000, mid_turn=True))  # checked at every step
    assert not policy.should_compact(send(147_999))
    assert policy.tail_budget == 15_000  # 25% of 148000, clamped to 15000


def test_opencode_tail_budget_is_clamped_between_2000_and_15000():
    small = OpencodePolicy(PolicyConfig(context_window=12_000, max_output_tokens=2_000))
    assert small.usable == 8_000 and small.tail_budget == 2_000
    assert OpencodePolicy(PolicyConfig(context_window=100_000, max_output_tokens=32_000),
                          reserved_tokens=12_000).tail_budget == 14_000


def test_codex_configured_limit_is_clamped_to_90_percent_of_the_window():
    policy = CodexPolicy(PolicyConfig(context_window=100), token_limit=200)
    assert policy.limit == 90
    assert policy.should_compact(send(91))
    assert not policy.should_compact(send(89))
    assert make_policy("codex", PolicyConfig(context_window=200_000)).limit == 180_000
    assert CodexPolicy(PolicyConfig(context_window=200_000), token_limit=50_000).limit == 50_000


def test_claude_code_threshold_is_about_83_5_percent_of_200k():
    policy = make_policy("claude-code", PolicyConfig(context_window=200_000, max_output_tokens=32_000))
    assert policy.threshold == 167_000 and policy.threshold / 200_000 == pytest.approx(0.835)
    assert policy.should_compact(send(167_000, mid_turn=True)) and not policy.should_compact(send(166_999))
    assert ClaudeCodePolicy(PolicyConfig(context_window=200_000, max_output_tokens=8_000)).threshold == 179_000


def test_gemini_cli_compacts_at_half_the_token_limit():
    policy = make_policy("gemini-cli", PolicyConfig(context_window=100_000))
    assert policy.should_compact(send(50_000)) and not policy.should_compact(send(49_999))


def test_ratio_20_compacts_at_80_percent_and_truncate_at_the_default_trigger():
    ratio = make_policy("ratio-20", PolicyConfig(context_window=32_000))
    assert ratio.should_compact(send(25_600)) and not ratio.should_compact(send(25_599))
    truncate = make_policy("truncate", PolicyConfig(context_window=100_000))
    assert truncate.should_compact(send(83_616)) and not truncate.should_compact(send(83_615))


def test_off_and_disabled_never_fire_for_any_peer():
    for name in PEERS:
        for settings in ({"mode": "off"}, {"enabled": False}):
            assert not make_policy(name, PolicyConfig(context_window=1000, **settings)).should_compact(send(10**9))


# ---------------------------------------------------------------------------------------------
# tails


def test_pi_keeps_about_20000_tokens_and_never_cuts_at_a_tool_result():
    b = Builder()
    b.user(10); b.step(9000)                       # 0..2
    b.user(10); b.step(9000); b.step(9000)          # user 3, steps 4, 6
    b.user(10); b.step(9000); b.step(3000)          # user 8, steps 9, 11
    session = b.session()
    plan = PiPolicy(PolicyConfig(context_window=64_000)).plan(view(session))
    # walking back: 3005+9005 (=12010) then tool 7 brings it past 20000; the nearest cut at or after 7 is 8
    assert plan.tail_start == 8 and session.messages[plan.tail_start].role == "user"
    assert not plan.tail.truncated_to_step
    assert view(session).span_tokens(8, len(session.messages)) <= 20_000


def test_pi_cut_inside_the_last_step_keeps_that_step_whole():
    b = Builder()
    b.user(10); b.step(100)
    b.user(10); b.step(30_000)                       # user 3, step 4..5: the tool result alone is over 20000
    session = b.session()
    plan = PiPolicy(PolicyConfig(context_window=64_000)).plan(view(session))
    assert plan.tail_start == 4 and plan.tail.truncated_to_step and plan.tail.split_turn_start == 3


def test_no_peer_cut_lands_on_a_tool_result():
    b = Builder()
    for turn in range(25):
        b.user(30)
        for size in (4000, 700, 2500, 9000)[: 1 + turn % 4]:
            b.step(size, 300)  # parallel calls: the step has two results
        b.step()
    session = b.session()
    for name in PEERS:
        result, _ = replay(session, name, context_window=48_000)
        assert result.events, name
        for event in result.events:
            if event.tail_start < len(session.messages):
                assert session.messages[event.tail_start].role != "tool", (name, event)


def test_pi_tool_result_of_5000_characters_reaches_the_summarizer_as_2000_plus_a_marker():
    b = Builder()
    b.user(10)
    b.step(1250)                                     # message 2: a tool result of exactly 5000 characters
    for _ in range(4):
        b.user(10); b.step(9000); b.step()             # pi checks when a turn has ended (plain reply)
    session = b.session()
    assert len(session.messages[2].content) == 5000
    result, summarizer = replay(session, "pi", context_window=40_000, reserve_tokens=10_000)
    head = summarizer.calls[0].head
    tool = next(m for m in head if m.tool_call_id == session.messages[2].tool_call_id)
    assert tool.content.startswith(session.messages[2].content[:2000])
    assert tool.content[2000:] == "\n[... 3000 more characters of tool output cut]"
    assert summarizer.calls[0].budget_tokens == 8000  # 0.8 x reserve


def test_pi_split_turn_gives_the_summarizer_the_prefix_but_not_the_kept_suffix():
    b = Builder()
    b.user(10); b.step(100)                          # 0..2
    b.user(10, tag="fix the parser")                # 3: the turn that gets split
    b.step(12_000); b.step(12_000); b.step(12_000)  # steps 4, 6, 8
    b.user(10)                                       # 10: the next prompt; pi checks before it
    session = b.session()
    config = PolicyConfig(context_window=50_000, reserve_tokens=16_384)
    summarizer = Recording()
    result = Compactor(session, PiPolicy(config), summarizer).run()
    event = result.events[0]
    assert event.send_index == 11 and event.truncated_to_step
    call = summarizer.calls[0]
    folded = range(call.head_start, call.head_start + len(call.head))
    assert 3 in folded and 4 in folded                  # the turn's prefix: its request and first step
    assert event.tail_start not in folded               # the kept suffix is not summarized
    assert call.split_turn_start == 3
    assert all(i < event.tail_start for i in folded)


def test_pi_feeds_the_first_summary_into_the_second():
    result, summarizer = replay(long_session(), "pi")
    assert len(summarizer.calls) >= 2
    assert summarizer.calls[0].previous_summary is None
    assert all(c.previous_summary and c.previous_summary.endswith("s" * 40) for c in summarizer.calls[1:])


def test_opencode_keeps_whole_turns_within_its_budget():
    b = Builder()
    for size in (3000, 5000, 4000, 4000):
        b.user(10); b.step(size)                      # turns of ~3K, 5K, 4K, 4K; users at 0, 3, 6, 9
    policy = OpencodePolicy(PolicyConfig(context_window=100_000, max_output_tokens=32_000), reserved_tokens=12_000)
    plan = policy.plan(view(b.session()))               # budget 14000: 4K + 4K + 5K fit, 3K more does not
    assert (plan.tail_start, plan.tail.turns, plan.tail.truncated_to_step) == (3, 3, False)


def test_opencode_splits_a_turn_when_not_even_the_newest_fits():
    b = Builder()
    b.user(10); b.step(100)
    b.user(10); b.step(9000); b.step(6000); b.step(5000)  # user 3, steps 4, 6, 8
    policy = OpencodePolicy(PolicyConfig(context_window=100_000, max_output_tokens=32_000), reserved_tokens=12_000)
    plan = policy.plan(view(b.session()))
    assert (plan.tail_start, plan.tail.steps, plan.tail.truncated_to_step) == (6, 2, True)


def pruning_session():
    b = Builder()
    for _ in range(12):
        b.user(20); b.step(8000); b.step()
    return b.session()  # turn k: user 4k, step 4k+1 with result 4k+2, plain step 4k+3


def test_opencode_prunes_old_outputs_protecting_two_turns_and_40000_tokens():
    session = pruning_session()
    policy = make_policy("opencode", PolicyConfig(context_window=400_000, max_output_tokens=32_000))
    # at the send before message 45 (turn 11's first reply): turns 11 and 10 are protected;
    # of turns 9..0 the newest five results (5 x 8000 = 40000) are protected too, the rest go
    chosen = policy.prune(view(session, end=45))
    assert chosen == (18, 14, 10, 6, 2)
    # with only 20000 tokens to free it does not bother
    assert policy.prune(view(session, end=33)) == ()  # turns 6..0: 7 results, 2 over the protection


def test_opencode_pruning_runs_through_the_compactor_and_shows_in_the_context():
    session = pruning_session()
    result, _ = replay(session, "opencode", points=("end",), context_window=400_000, max_output_tokens=32_000)
    assert not result.events and result.prunes
    first = result.prunes[0]
    assert first.tokens_freed_est > 20_000 and all(session.messages[i].role == "tool" for i in first.messages)
    end = result.snapshots["end"]
    _, _, live = end.parts(session)
    assert set(end.pruned) == {i for p in result.prunes for i in p.messages}
    assert all(live[i].content == PRUNED_MARKER for i in end.pruned)
    assert end.est_tokens < sum(MessageTokens(counter("chars4"), session.messages)[i]
                                for i in range(len(session.messages)))


def test_opencode_summarizer_sees_pruned_outputs_as_cleared():
    b = Builder()
    b.messages = list(pruning_session().messages)
    for _ in range(2):
        b.user(20)
        for _ in range(4):
            b.step(20_000)                               # two huge turns: the protected ones
    session = b.session()
    result, summarizer = replay(session, "opencode", context_window=200_000, max_output_tokens=32_000)
    assert result.prunes and summarizer.calls
    assert result.prunes[0].send_index < result.events[0].send_index
    pruned = {i for p in result.prunes for i in p.messages}
    call = summarizer.calls[-1]
    shown = {call.head_start + k: m for k, m in enumerate(call.head)}
    assert any(shown[i].content == PRUNED_MARKER for i in pruned if i in shown)


def test_codex_keeps_only_recent_user_messages_then_the_summary():
    b = Builder()
    for n in range(8):
        b.user(6000, tag=f"request{n}")
        b.step(9000)
    session = b.session()
    result, summarizer = replay(session, "codex", points=("compaction:1", "end"), context_window=64_000)
    first = result.events[0]
    assert first.tail_start == first.send_index and first.steps_kept == 0
    snap = result.snapshots["compaction:1"]
    kept, summary, live = snap.parts(session)
    assert [m.role for m in kept] == ["user"] * 3 and not live  # 3 x 6000 <= 20000 < 4 x 6000
    assert kept[-1].content.startswith(f"request{(first.send_index - 1) // 3}")
    assert summary is not None
    # the second compaction sees the kept users and the first summary, and may keep older users again
    second = summarizer.calls[1]
    assert second.previous_summary == snap.summary and [m.content for m in second.kept] == [m.content for m in kept]


def test_codex_drops_the_oldest_items_until_the_summary_request_fits():
    b = Builder()
    for _ in range(6):
        b.user(10); b.step(9000)
    session = b.session()
    result, summarizer = replay(session, "codex", context_window=40_000, summary_tokens=8_000)
    assert result.risk_counts()["summary_request_too_big"] >= 1
    call = summarizer.calls[0]
    assert call.head_start > result.events[0].head_start  # the oldest items were left out of the request
    tokens = MessageTokens(counter("o200k"), session.messages)
    request = sum(tokens[i] for i in range(call.head_start, call.head_start + len(call.head)))
    assert request + 8_000 <= 40_000


def test_claude_code_keeps_the_summary_alone():
    result, _ = replay(long_session(), "claude-code", points=("compaction:1",))
    kept, summary, live = result.snapshots["compaction:1"].parts(long_session())
    assert summary and not kept and not live


def test_claude_code_clears_old_tool_results_after_an_idle_gap_keeping_the_five_newest():
    b = Builder()
    for _ in range(8):
        b.user(10); b.step(100)
    messages = [Message(m.role, m.content, m.tool_calls, m.tool_call_id, ts=f"2025-01-01T10:{i:02d}:00+00:00")
                for i, m in enumerate(b.messages)]
    messages.append(Message("user", "back after lunch", ts="2025-01-01T12:00:00+00:00"))
    session = Session(tuple(messages), "sys")
    policy = make_policy("claude-code", PolicyConfig(context_window=100_000))
    tools = [i for i, m in enumerate(messages) if m.role == "tool"]
    assert policy.prune(view(session)) == tuple(tools[:-5])
    assert policy.prune(view(session, end=len(messages) - 1)) == ()  # no idle gap: nothing cleared


def test_gemini_cli_keeps_the_last_30_percent_by_characters_from_a_user_message():
    b = Builder()
    for _ in range(10):
        b.user(10); b.step(990)   # ten turns of 1000 tokens (4000 characters) each; users at 3k
    session = b.session()
    plan = GeminiCliPolicy(PolicyConfig(context_window=100_000)).plan(view(session))
    assert plan.tail_start == 21 and session.messages[21].role == "user"  # 7 of 10 turns before it
    assert plan.summary is not None and plan.reject_if_larger


def test_gemini_cli_rejects_a_summary_that_grows_the_context_then_only_truncates():
    session = long_session(turns=12, results=(3000,))
    summarizer = Recording(summary_chars=400_000)  # far larger than anything it replaces
    result, _ = replay(session, "gemini-cli", summarizer=summarizer, context_window=32_000)
    assert result.risk_counts()["summary_rejected"] == 1
    assert len(summarizer.calls) == 1  # after the rejection no summarizer is asked again
    assert result.events and all(e.source == "truncate" for e in result.events)


def test_truncate_drops_the_head_without_a_summary_call():
    result, summarizer = replay(long_session(), "truncate")
    assert result.events and not summarizer.calls
    assert all(e.source == "truncate" for e in result.events)


# ---------------------------------------------------------------------------------------------
# every peer end to end: the compactor and the command line


@pytest.mark.parametrize("name", PEERS)
def test_every_peer_replays_a_hand_built_session(name):
    session = long_session()
    result, summarizer = replay(session, name, points=("end",))
    assert result.events, f"{name} never compacted a 30 x 9K session on a 64K window"
    for event in result.events:
        assert event.tokens_after_est < event.tokens_before_est
    end = result.snapshots["end"]
    folded = set(range(end.live_start))
    assert folded | set(range(end.live_start, end.end)) == set(range(len(session.messages)))
    if name != "truncate" and name != "gemini-cli":
        assert len(summarizer.calls) == len(result.events)


def write_case(root, session, window=64_000):
    case = root / "peer-case"
    case.mkdir()
    (case / "case.toml").write_text(
        '[case]\nid = "peer-case"\ntitle = "peers"\npool = "edge"\nsession = "session.jsonl"\n\n'
        f'[model]\ncontext_window = {window}\nmax_output_tokens = 16384\n', encoding="utf-8")
    (case / "session.jsonl").write_text(dumps_session(session), encoding="utf-8")
    return case


@pytest.mark.parametrize("name", PEERS)
def test_every_peer_runs_through_simulate(name, tmp_path, capsys):
    case = write_case(tmp_path, long_session())
    assert main(["simulate", str(case), "--policy", name, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["policy"] == name and report["events"]
    assert main(["simulate", str(case), "--policy", name]) == 0  # the table renders too
    assert name in capsys.readouterr().out


def test_simulate_sweeps_a_peer(tmp_path, capsys):
    case = write_case(tmp_path, long_session())
    assert main(["simulate", str(case), "--policy", "pi", "--sweep", "--reserves", "8192,16384", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    assert [r["reserve_tokens"] for r in rows] == [8192, 16384] and all(r["policy"] == "pi" for r in rows)


def test_pi_carries_the_files_read_and_modified_across_compactions():
    from harness.session import ToolCall

    b = Builder()
    calls = [("read_file", "src/a.py"), ("edit_file", "src/a.py"), ("read_file", "docs/b.md"),
             ("write_file", "src/c.py"), ("read_file", "src/d.py")]
    for n, (tool, path) in enumerate(calls * 2):
        b.user(10)
        call = ToolCall(f"f{n}", tool, {"path": path})
        b.messages.append(Message("assistant", "doing it", (call,)))
        b.messages.append(Message("tool", "x" * 40_000, tool_call_id=call.id))
        b.step()
    session = b.session()
    result, _ = replay(session, "pi", points=("compaction:1", "compaction:2", "end"), context_window=48_000)
    assert len(result.events) >= 2
    first = result.snapshots["compaction:1"].summary
    lists = first[first.index("[files read]"):].splitlines()
    modified_at = lists.index("[files modified]")
    assert "src/a.py" in lists[modified_at:] and "src/a.py" not in lists[:modified_at]  # read, then edited
    later = result.snapshots["compaction:2"].summary
    for path in lists[1:modified_at] + lists[modified_at + 1:]:
        assert path in later  # nothing listed once is lost at the next compaction
    assert later.count("[files read]") == 1
