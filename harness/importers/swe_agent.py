"""SWE-agent trajectories (`*.traj`): `{environment, trajectory: [...], history: [...], info}`.

`history` is the chat the model saw and is what gets imported. Its first system message becomes the session
system; the demonstration (`is_demo`) is kept as a user message tagged `meta.is_demo`; messages of other
agents than `primary` are skipped and counted.

Legacy text actions: an assistant message with an `action` becomes an assistant message whose content is the
`thought` with a `bash` tool call `{"command": <action>}`; the next user message is the observation and becomes
its result. When the history ends before the last action's observation (typically `submit`), the observation
recorded in `trajectory` for that step is used. Newer trajectories with `tool_calls` and `role: tool` are
mapped as OpenAI chat. The report counts every history message and trajectory step by fate (`fates`).
"""

from __future__ import annotations


from harness.errors import InputError
from harness.importers.builder import SessionBuilder
from harness.importers.report import ImportReport
from harness.importers.sources import block_text, load_json_document
from harness.importers.openai_chat import add_openai_message, check_message
from harness.session import Session

EXPECTED = "a SWE-agent trajectory {environment, trajectory: [...], history: [...], info}"


def import_swe_agent(text: str, path: str, report: ImportReport) -> Session:
    document = load_json_document(text, path, EXPECTED)
    if not isinstance(document, dict) or not isinstance(document.get("history"), list):
        raise InputError(path, 1, "history", f"missing or not a list; expected {EXPECTED}")
    trajectory = document.get("trajectory") if isinstance(document.get("trajectory"), list) else []
    builder = SessionBuilder(path, report)
    waiting: str | None = None  # call id of the last legacy action, until its observation
    actions = 0
    for index, message in enumerate(document["history"]):
        message = check_message(message, index, path, EXPECTED, roles=("system", "user", "assistant", "tool"))
        builder.entry(("history", index))
        if message.get("agent", "primary") != "primary":
            report.skip(f"message of agent {message.get('agent')!r}")
            builder.skip_entry("skipped (another agent's message)")
            continue
        role = message["role"]
        content = block_text(message.get("content"), report)
        if role == "system" and builder.system is None and not builder.items:
            builder.set_system(content)
            continue
        if message.get("is_demo"):
            builder.user(content, meta={"is_demo": True})
            report.tag("demonstration kept as user")
            continue
        if role == "assistant" and not message.get("tool_calls") and isinstance(message.get("action"), str):
            if waiting:
                builder.result(waiting, "")  # two actions in a row: the first got no observation
                report.notes.append(f"history[{index}]: action without an observation before it")
            thought = message.get("thought")
            text = thought if isinstance(thought, str) else content
            waiting = f"action-{actions}"
            builder.assistant(text.rstrip(), [(waiting, "bash", {"command": message["action"].rstrip("\n")})],
                              open_for_calls=False)
            actions += 1
            continue
        if role == "user" and waiting:
            builder.result(waiting, content)
            waiting = None
            continue
        add_openai_message(builder, message, index, path, report)
    _trajectory_steps(builder, trajectory, waiting, actions, report)
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    if info.get("exit_status"):
        report.notes.append(f"exit status: {info['exit_status']}")
    return builder.build()


def _trajectory_steps(builder: SessionBuilder, trajectory: list, waiting: str | None, actions: int,
                      report: ImportReport) -> None:
    """Each step of `trajectory`: the last action's observation when the history ends before it, else a
    duplicate of the history (skipped, counted)."""
    last = actions - 1 if waiting and len(trajectory) >= actions else None
    for index, step in enumerate(trajectory):
        builder.entry(("trajectory", index))
        if index == last and isinstance(step, dict) and isinstance(step.get("observation"), str):
            builder.result(waiting, step["observation"], meta={"from": "trajectory"})
            report.tag("last observation taken from trajectory")
        else:
            builder.skip_entry("skipped (trajectory step, duplicates the history)")
    if trajectory:
        report.skip("trajectory steps (duplicate the history; not mapped)", len(trajectory))
