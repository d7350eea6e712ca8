"""A scripted model that drives a real agent runtime through a recorded case (docs/scripted-model.md).

steps: the case's assistant turns as replies; fixtures: the workspace with each recorded output; mapping: a
recorded call as a call of the tool the runtime offers; signatures (+ signatures.toml): turn, compaction or
side request, per runtime; alignment: drift; model: the responder; log: the request log; normalise: cassette
keys for runtime requests; replay: cases set up to be served; serving: on loopback.
"""

from harness.scripted.alignment import drift
from harness.scripted.fixtures import write_workspace
from harness.scripted.log import RequestLog, read_log
from harness.scripted.mapping import NoToolForCall, mapped_call
from harness.scripted.model import Outcome, ScriptedModel
from harness.scripted.normalise import key_normaliser, normalise_text
from harness.scripted.replay import LOG_SUFFIX, Replay, Replays, open_replay, open_replays, summarizer_for
from harness.scripted.serving import scripted_emulator, serve_replays
from harness.scripted.signatures import ALL, Signatures, load_signatures, runtime_names
from harness.scripted.steps import Expected, Script, ScriptCall, ScriptStep, script_from_session

__all__ = ["ALL", "LOG_SUFFIX", "Expected", "NoToolForCall", "Outcome", "Replay", "Replays", "RequestLog", "Script", "ScriptCall",
           "ScriptStep", "ScriptedModel", "Signatures", "drift", "key_normaliser", "load_signatures", "mapped_call",
           "normalise_text", "open_replay", "open_replays", "read_log", "runtime_names", "script_from_session", "scripted_emulator",
           "serve_replays", "summarizer_for",
           "write_workspace"]
