"""The scripted model through the real SDKs over the in-process emulator: a real case replayed by a small agent
on each wire a runtime uses reproduces every recorded output byte for byte and uses every step once; with two
cases behind one emulator, a reordered reply drifts one case and the other still passes."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from harness.models.emulator import EmulatorTransport
from harness.scripted import open_replays, scripted_emulator
from scripted_agent import BASH, CLAUDE_BASH, EXEC_COMMAND, run_agent
from scripted_sdk import anthropic_sender, chat_sender, responses_sender

CASE = "cases/edge-32k-window"
PARALLEL = "cases/real-agentstuff-22"  # up to 4 parallel calls in a step, short outputs: quick
SMALL = "cases/desktop-go-env-config"  # 17 steps


@pytest.mark.parametrize(("sender", "tool", "case", "turns"), [
    (lambda t: chat_sender(t, "m", stream=False), BASH, CASE, None),
    (lambda t: chat_sender(t, "m", stream=True), BASH, PARALLEL, 4),
    (lambda t: responses_sender(t, "m"), EXEC_COMMAND, CASE, 4),
    (lambda t: anthropic_sender(t, "m", stream=True), CLAUDE_BASH, CASE, 4),
    (lambda t: anthropic_sender(t, "m", stream=False), CLAUDE_BASH, PARALLEL, 4),
], ids=["chat-whole-case", "chat-streamed-parallel", "responses-streamed", "messages-streamed", "messages-parallel"])
def test_a_case_replays_byte_for_byte_through_the_sdk(sender, tool, case, turns, tmp_path: Path):
    """The whole case on one wire; the first turns on the others (each request costs the emulator a count of
    the whole context, so a whole case per wire would take minutes on a loaded machine)."""
    replays = open_replays([case], tmp_path)
    replay = next(iter(replays.replays.values()))
    prompts = replay.script.prompts[:turns]
    outputs = run_agent(prompts, sender(EmulatorTransport(scripted_emulator(replays))), replay.workspace, tool=tool)
    steps = [s for s in replay.script.steps if s.turn < len(prompts)]
    assert outputs == {c.id: c.output for s in steps for c in s.calls} and outputs
    outcome = replay.model.outcome()
    assert (outcome.used, outcome.stopped) == (len(steps), None)
    assert outcome.exit_code == (0 if turns is None else 1)  # steps left unused fail a replay
    replays.close()


def test_a_reordered_reply_drifts_that_case_only(tmp_path: Path):
    replays = open_replays([CASE, SMALL], tmp_path)
    transport = EmulatorTransport(scripted_emulator(replays))
    drifting = replays.replays["edge-32k-window"]
    calls = drifting.script.calls
    swap = lambda n, call_id, output: calls[n + 1].output if n == 7 else output  # noqa: E731
    with pytest.raises(openai.BadRequestError, match=r"drift at step \d+: expected the output of call "
                                                     f"{calls[7].id} "):
        run_agent(drifting.script.prompts, chat_sender(transport, "edge-32k-window", stream=True),
                  drifting.workspace, tamper=swap)
    other = replays.replays["desktop-go-env-config"]
    run_agent(other.script.prompts, chat_sender(transport, "desktop-go-env-config", stream=False), other.workspace)
    codes = {case_id: outcome.exit_code for case_id, outcome in replays.outcomes().items()}
    assert codes == {"edge-32k-window": 1, "desktop-go-env-config": 0} and replays.exit_code() == 1
    replays.close()
